"""The generation loop: one token at a time, each step a forward pass on what came before.
Where it runs — shared (the CLI, Chat, the engine and --reference alike): generate; definition only (generate runs): generate_simple.

The explainer articles' five steps, numbered 1-5 in the code below:

    1. run the model over the context        2. keep only the LAST position's logits
    3. turn them into probabilities          4. choose one token
    5. append it to the context, and go again

The model scores every position in one call, but only the last position's logits are about the
token that does not exist yet; once it is chosen it becomes part of the context and the loop
repeats. ``generate_simple`` is exactly that, in a dozen lines. ``generate`` is the same loop
(tested to give the same tokens) with a KV cache (``KVCache``): step n feeds only the newest
token, the keys and values of everything before it are kept, so a step costs O(n) instead of
re-running all n tokens; it also stops, streams text and reports log-probabilities.

    for step in generate(model, tok.encode("The sea is"), max_new_tokens=20, preset="chat",
                         seed=0, tokenizer=tok):
        print(step.text, end="")

Choices (see ``generate`` for the rest):
- ``Step.logprob`` / ``Step.top`` are of the model's RAW distribution, log softmax(logits) at
  T = 1 before any filter — what the model believes, finite for every token, and what beam
  search and ``score_options`` add up. The alternative (vLLM's "processed" log-probs) reports the
  distribution actually sampled from: after temperature and top-k/top-p it is -inf for every
  filtered token and 0 for the chosen one under greedy, which says nothing about the model.
  (HF's ``output_logits`` are the raw kind, its ``output_scores`` the processed kind; OpenAI's
  API does not document which it returns.)
- Generation stops where the model stops: at its EOS ids (``ModelConfig.eos_ids``), as
  transformers' ``generate`` does; ``stop_at_eos=False`` turns that off (``generate_args.stop_set``).
- How to sample is one ``Sampler``, what ends the text one ``Stops`` (the shortcuts temperature=,
  stop_ids=, … become them in ONE place, ``generate_args.sampler_and_stops``); all is checked
  once, into a frozen ``GenerationSettings``: the loop (and ``speculative.py``'s) receives that one
  object. ``steps.py`` turns each chosen token into its ``Step``.
- A stop id ends generation and is not yielded. A stop string is trimmed from the text; the
  tokens that spelled it were generated and are yielded, releasing only the text before it.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from minillm.decoding.generate_args import (SAMPLER_SHORTCUTS, GenerationSettings, check_count,
                                            check_prompt, check_room, make_rng, sampler_and_stops,
                                            uses_history)
from minillm.decoding.steps import Step, StepWriter
from minillm.kv_cache import KVCache


def generate_simple(model, prompt_ids, max_new_tokens: int, *, sampler=None, seed=None, rng=None,
                    **shortcuts) -> Iterator[int]:
    """The whole loop, nothing else: no cache, no stops, no text. Yields the new ids.

    Equal to ``[s.id for s in generate(model, prompt_ids, max_new_tokens, sampler=sampler,
    seed=seed, stop_at_eos=False)]`` (tested); ``generate`` adds the KV cache, stops, streaming
    text and log-probabilities. ``shortcuts``: preset= / temperature= / top_k= / top_p= / min_p=,
    as in ``generate``. Example: ``list(generate_simple(model, [1, 2, 3], 5, temperature=0))``.
    """
    sampler, _ = sampler_and_stops("generate_simple", sampler, None, shortcuts, takes=SAMPLER_SHORTCUTS)
    rng = make_rng(seed, rng)
    ids = check_prompt(model, prompt_ids).tolist()
    prompt_len = len(ids)
    for _ in range(check_count(max_new_tokens, "max_new_tokens")):
        logits = model(np.array(ids))[-1]                     # 1.-2. [T] -> [T, V] -> the last [V]
        token = int(sampler.sample(logits, rng, history=ids, prompt_len=prompt_len))  # 3.-4. p, choose
        ids.append(token)                                     # 5. append, and go again
        yield token


def generate(model, prompt_ids, max_new_tokens: int = 100, *, sampler=None, stops=None, seed=None,
             rng=None, tokenizer=None, logprobs: bool = False, top_n: int = 0,
             sliding_window: int | None = None, cache: KVCache | None = None, draft=None,
             num_draft_tokens: int = 5, constraint=None, **shortcuts) -> Iterator[Step]:
    """Yield up to ``max_new_tokens`` ``Step``s continuing ``prompt_ids``.

    Sampling: ``sampler=Sampler(...)`` (None: T = 1, no filter), or the shortcuts ``preset``
    ("chat", "code", "qa", "creative") and/or ``temperature``/``top_k``/``top_p``/``min_p``
    (overriding the preset); T = 0 is greedy. Randomness comes only from ``rng`` or
    ``np.random.default_rng(seed)``: same seed, same tokens.
    Stops: ``stops=Stops(ids=..., strings=..., eos=True)``, or the shortcuts ``stop_ids``,
    ``stop_strings``, ``stop_at_eos``. The model's EOS ids (``model.config.eos_ids``; eos=False
    ignores them) and the stop ids (an id or a collection, added to them) end generation; the
    stop token is not yielded. Stop strings (need ``tokenizer``) end it when the text contains
    one, which is trimmed, across token boundaries.
    Context: prompt + max_new_tokens must fit in n_ctx (else ValueError), unless
    ``sliding_window`` is a token count k (e.g. n_ctx // 2; the prompt alone must still fit in
    n_ctx): when the window is full, everything but the last k tokens — the start of the prompt
    included — is FORGOTTEN and those k are re-run from an empty cache. Positions restart at 0
    for them (learned and RoPE positions alike, so the model sees a text that begins
    mid-sentence), and each slide costs one k-token prefill every n_ctx - k new tokens.
    Continuing: ``cache`` (a 1-row KVCache holding the forward of ``prompt_ids[:cache.length]``,
    the caller's promise) is reused — only the rest of the prompt is fed, so a chat does not
    re-read its whole history every turn. Afterwards it holds every token that was fed: a prefix
    of prompt + generated ids of length ``cache.length`` (the last token chosen is never fed).
    Speculative decoding: ``draft`` ("prompt", a smaller GPT, or a DraftSource) guesses up to
    ``num_draft_tokens`` tokens that one forward checks; the output is unchanged
    (``minillm/decoding/speculative.py``).
    Structured output: ``constraint`` (``Regex``, ``JsonSchema``, ``Choice``; needs ``tokenizer``)
    masks the logits before the sampler: the text stays inside the pattern (constraints/masked.py).
    """
    sampler, stops = sampler_and_stops("generate", sampler, stops, shortcuts)
    settings = GenerationSettings.build(
        model, sampler=sampler, stops=stops, seed=seed, rng=rng, tokenizer=tokenizer,
        logprobs=logprobs, top_n=top_n, sliding_window=sliding_window, draft=draft,
        num_draft_tokens=num_draft_tokens, constraint=constraint)
    return generate_with(model, prompt_ids, max_new_tokens, settings, cache=cache)


def generate_with(model, prompt_ids, max_new_tokens: int, settings: GenerationSettings, *,
                  cache: KVCache | None = None) -> Iterator[Step]:
    """``generate`` with its settings already built (``Chat`` builds them once for every turn)."""
    prompt, n_new = check_prompt(model, prompt_ids), check_count(max_new_tokens, "max_new_tokens")
    n_ctx, keep = model.config.n_ctx, settings.sliding_window
    check_room(len(prompt), n_new, n_ctx, keep, cache)      # fits n_ctx, or slides; cache= fits
    if cache is None:
        capacity = n_ctx if keep is not None else len(prompt) + n_new   # checked <= n_ctx
        cache = KVCache(model.config, batch_size=1, capacity=capacity)
    if settings.draft is not None:                             # same tokens, fewer forwards
        from minillm.decoding.speculative import speculative_steps
        return speculative_steps(model, prompt, n_new, settings, cache=cache)
    if settings.guide is not None:                             # the text must match a pattern
        from minillm.decoding.constraints.masked import masked_steps
        return masked_steps(model, prompt, n_new, settings, cache=cache)
    return _steps(model, prompt, n_new, settings, cache=cache)


def _steps(model, prompt, n_new, settings, *, cache) -> Iterator[Step]:
    """The loop of ``generate_simple``, fed through the cache: each step runs only new tokens."""
    P, sampler, rng, keep = len(prompt), settings.sampler, settings.rng, settings.sliding_window
    context = np.empty(P + n_new, dtype=np.int64)             # [P + N] preallocated, filled as we go
    context[:P] = prompt
    writer = StepWriter(settings)
    penalised = uses_history(sampler)
    if n_new == 0:
        return
    fresh = prompt[cache.length:]                             # [P'] what the cache lacks
    for n in range(n_new):
        logits = model(fresh[None], cache=cache, last_only=True)[0, -1]   # 1.-2. [1, T'] -> [V]
        seen = context[:P + n] if penalised else None         # [P + n] view, for penalties only
        token = int(sampler.sample(logits, rng, history=seen, prompt_len=P))  # 3.-4. p, choose
        if token in settings.stop_ids:
            if tail := writer.held_text():
                yield Step(None, tail)                        # held text, released
            return
        end = P + n + 1
        context[end - 1] = token                              # 5. append, and go again
        last = n == n_new - 1
        shown = sampler.probs(logits, history=seen, prompt_len=P) if settings.top_n else None
        yield writer.step(token, logits, last, shown)         # (shown: [V], what the draw used)
        if last or writer.stopped:
            return
        fresh = context[end - 1:end]                          # [1] the cache holds the rest
        if cache.length == cache.capacity:                    # only with a sliding window:
            cache.rollback(0)                                 # forget, re-read the last ``keep``
            fresh = context[end - keep:end]                   # [keep]
