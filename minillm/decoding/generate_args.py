"""The arguments every way of generating shares, checked once: sampler, generator, prompt, stops.

``generate``, ``generate_batch``, ``serve``, ``beam_search``, ``score_options`` and ``Chat`` take
the same kinds of argument; each is turned here into the one form the loops use, or rejected with
a ValueError/TypeError that says what is allowed. ``GenerationSettings.build`` checks all of
``generate``'s keywords at once; the loops then receive that one frozen object, not a dozen
arguments. The checks it is made of:

    make_sampler(preset=..., temperature=..., ...)    -> a Sampler
    make_rng(seed, rng)                                -> the one np.random.Generator
    check_prompt(model, ids)                           -> int64 [P], every id in the vocabulary
    stop_set(model, stop_ids, stop_at_eos)             -> frozenset of ids that end a text
    window_keep(sliding_window, n_ctx)                 -> how many tokens a slide keeps, or None
    check_room(P, n_new, n_ctx, keep, cache)           -> prompt + new tokens fit (or slide)
    check_count(value, name)                           -> an int >= 0 (max_new_tokens, top_n …)
    uses_history(sampler)                              -> does it read the history (penalties)?
    check_beam_args(model, ids, beam_size, …)          -> beam search's, checked together
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np

from minillm.decoding.stop_strings import StopText
from minillm.kv_cache_sizes import check_cache_fits
from minillm.sampling import Sampler

MAX_WINDOW_TOKENS = 1 << 24   # new tokens in one sliding-window generation (a 128 MB history)


@dataclasses.dataclass(frozen=True)
class GenerationSettings:
    """How to generate, checked: everything ``generate`` takes besides the model, the prompt,
    ``max_new_tokens`` and ``cache``. Frozen: one generation cannot change another's settings.

    ``sampler`` and ``rng`` choose tokens (the rng is shared, not copied: draws advance it);
    ``stop_ids`` end a text (the model's EOS ids included unless ``stop_at_eos=False``);
    ``stop_strings``, ``tokenizer``, ``logprobs``, ``top_n`` shape each ``Step``;
    ``sliding_window`` is None or the tokens a slide keeps; ``draft`` (None: no speculative
    decoding) proposes up to ``num_draft_tokens`` tokens per round (0 without a draft);
    ``guide`` (None: unconstrained) is ``constraint.guide(tokenizer, eos_ids=stop ids)``.
    Made by ``build``, which holds the defaults and the checks.
    """
    sampler: Sampler
    rng: np.random.Generator
    stop_ids: frozenset[int]
    stop_strings: tuple[str, ...]
    tokenizer: object
    logprobs: bool
    top_n: int
    sliding_window: int | None
    draft: object
    num_draft_tokens: int
    guide: object = None      # constraint= built for the tokenizer (constraints/masked.py), or None

    @classmethod
    def build(cls, model, *, sampling: Mapping | None = None, seed=None, rng=None, stop_ids=(),
              stop_at_eos: bool = True, stop_strings=(), tokenizer=None, logprobs: bool = False,
              top_n: int = 0, sliding_window: int | None = None, draft=None,
              num_draft_tokens: int = 5, constraint=None) -> GenerationSettings:
        """Check ``generate``'s keywords (``sampling``: preset / temperature / top_k / top_p /
        min_p / sampler, as ``make_sampler`` takes them) against ``model``; the defaults are
        ``generate``'s. Example: ``GenerationSettings.build(model, sampling={"temperature": 0})``.
        """
        top_n = check_count(top_n, "top_n")
        check_model(model)
        if top_n > model.config.vocab_size:
            raise ValueError(f"top_n must be in [0, vocab_size={model.config.vocab_size}], got {top_n}")
        sampler, rng = make_sampler(**(sampling or {})), make_rng(seed, rng)
        stops = stop_set(model, stop_ids, stop_at_eos)
        if stop_strings and tokenizer is None:
            raise ValueError("stop_strings need a tokenizer= to turn tokens into text")
        stop_strings = StopText(stop_strings).stops                # checked: non-empty strs
        keep = window_keep(sliding_window, model.config.n_ctx)
        k = 0
        if draft is not None:
            k = check_count(num_draft_tokens, "num_draft_tokens")
            if k == 0 or keep is not None:
                raise ValueError("speculative decoding needs num_draft_tokens >= 1 and no sliding_window")
            if k > model.config.n_ctx:      # (more guesses than the context holds: never useful)
                raise ValueError(f"num_draft_tokens must be in [1, n_ctx={model.config.n_ctx:,}], "
                                 f"got {k:,}")
        guide = constraint_guide(constraint, tokenizer, stops, draft)
        return cls(sampler=sampler, rng=rng, stop_ids=stops, stop_strings=stop_strings,
                   tokenizer=tokenizer, logprobs=bool(logprobs), top_n=top_n, sliding_window=keep,
                   draft=draft, num_draft_tokens=k, guide=guide)


def constraint_guide(constraint, tokenizer, stops: frozenset[int], draft=None):
    """``constraint=`` (a ``Regex``, ``JsonSchema`` or ``Choice`` of minillm.decoding.constraints,
    or None) -> its guide over the tokenizer's vocabulary, the stop ids allowed only where the
    text is complete; built once (and cached by the constraints package)."""
    if constraint is None:
        return None
    if not callable(getattr(constraint, "guide", None)):
        raise TypeError(f"constraint must be a Regex, JsonSchema or Choice (minillm.decoding."
                        f"constraints), got {type(constraint).__name__}")
    if tokenizer is None:
        raise ValueError("constraint= needs a tokenizer= (the pattern is matched against its tokens' bytes)")
    if draft is not None:
        raise ValueError("constraint= cannot be combined with speculative decoding (draft=)")
    V = tokenizer.vocab_size
    return constraint.guide(tokenizer, eos_ids=sorted(i for i in stops if i < V))


def make_sampler(temperature=None, top_k=None, top_p=None, min_p=None, preset=None,
                 sampler=None) -> Sampler:
    """A ``Sampler`` from a preset and/or single settings (given settings override the preset).
    Nothing given: T = 1 with no filter, the model's own distribution."""
    given = {k: v for k, v in dict(temperature=temperature, top_k=top_k, top_p=top_p,
                                   min_p=min_p).items() if v is not None}
    if sampler is not None:
        if preset is not None or given:
            raise ValueError("give either sampler= or preset=/temperature=/top_k=/top_p=/min_p=")
        if not isinstance(sampler, Sampler):
            raise TypeError(f"sampler must be a minillm.sampling.Sampler, got {type(sampler).__name__}")
        return sampler
    return Sampler.from_preset(preset, **given) if preset is not None else Sampler(**given)


def make_rng(seed=None, rng=None) -> np.random.Generator:
    """The one source of randomness: ``rng`` as given, or ``np.random.default_rng(seed)``."""
    if rng is None:
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed < 0:
            raise ValueError(f"seed must be an integer >= 0 (or None), got {seed}")
        return np.random.default_rng(seed)
    if seed is not None or not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a np.random.Generator, and not given together with seed")
    return rng


def check_model(model) -> None:
    """load_model's whole pair, passed by mistake, named so (not a failure deep inside)."""
    if isinstance(model, tuple):
        raise TypeError("load_model returns (model, tokenizer): pass the model, as in "
                        "model, tokenizer = load_model(...)")


def check_prompt(model, prompt_ids) -> np.ndarray:
    """Prompt ids as a 1-D int64 array inside the vocabulary, or a ValueError/TypeError."""
    check_model(model)
    ids = np.asarray(prompt_ids)
    if ids.ndim != 1 or ids.size == 0:
        raise ValueError(f"prompt_ids must be a non-empty 1-D sequence of token ids, got shape {ids.shape}")
    if ids.dtype.kind not in "iu":
        raise TypeError(f"prompt_ids must be integers, got dtype {ids.dtype}")
    V = model.config.vocab_size
    if ids.min() < 0 or ids.max() >= V:
        raise ValueError(f"prompt ids must be in [0, {V}), got min {ids.min()}, max {ids.max()}")
    return ids.astype(np.int64)


def check_count(value, name: str) -> int:
    """A count (max_new_tokens, top_n, beam_size …): an integer >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return int(value)


def check_stop_ids(stop_ids) -> frozenset[int]:
    """One id or a collection of ids -> a frozenset of ints."""
    if isinstance(stop_ids, (int, np.integer)):
        stop_ids = (stop_ids,)                                     # one id is fine too
    return frozenset(int(i) for i in stop_ids)


def stop_set(model, stop_ids, stop_at_eos: bool) -> frozenset[int]:
    """The ids that end a text: ``stop_ids``, plus the model's EOS ids (``config.eos_ids``, read
    from config.json / generation_config.json or the GGUF metadata) unless ``stop_at_eos=False``.

    This is what transformers' ``generate`` does by default (it stops at
    ``generation_config.eos_token_id``, an int or a list); ``stop_at_eos=False`` is llama.cpp's
    ``--ignore-eos`` and vLLM's ``ignore_eos=True``. Example: SmolLM2 names ``<|im_end|>`` (id 2)
    as its EOS, so a chat reply ends there with no ``stop_ids`` given.
    """
    if not isinstance(stop_at_eos, bool):
        raise TypeError(f"stop_at_eos must be True or False, got {stop_at_eos!r}")
    given, V = check_stop_ids(stop_ids), model.config.vocab_size
    if any(not 0 <= i < V for i in given):
        raise ValueError(f"stop_ids must be token ids in [0, {V}), got {sorted(given)}")
    return given | frozenset(model.config.eos_ids if stop_at_eos else ())


def uses_history(sampler: Sampler) -> bool:
    """Does the sampler read the token history (a repetition, frequency or presence penalty)?"""
    return (sampler.repetition_penalty != 1.0 or sampler.frequency_penalty != 0.0
            or sampler.presence_penalty != 0.0)


def window_keep(sliding_window, n_ctx: int) -> int | None:
    """``sliding_window``: None (off) or k, the tokens kept when the window is full, 1 <= k < n_ctx."""
    if sliding_window is None:
        return None
    if isinstance(sliding_window, bool) or not isinstance(sliding_window, (int, np.integer)) \
            or not 1 <= sliding_window < n_ctx:
        raise ValueError(f"sliding_window must be None (off) or a token count in [1, {n_ctx}) "
                         f"(e.g. n_ctx // 2 = {n_ctx // 2}), got {sliding_window!r}")
    return int(sliding_window)


def check_room(P: int, n_new: int, n_ctx: int, keep: int | None, cache) -> None:
    """A ValueError unless a ``P``-token prompt + ``n_new`` tokens fit the context window ``n_ctx``
    (or slide: ``keep`` from ``window_keep``) and a given ``cache`` (1 row) can continue it."""
    if cache is not None:
        if keep is not None or cache.batch_size != 1:
            raise ValueError("cache= needs a 1-row KVCache and cannot be combined with sliding_window")
        if not cache.length < P or P + n_new > cache.capacity:
            raise ValueError(f"the cache holds {cache.length} of {cache.capacity} positions: it must "
                             f"hold fewer than the prompt's {P} tokens and have room for "
                             f"prompt + max_new_tokens ({P + n_new})")
    if keep is not None and n_new > MAX_WINDOW_TOKENS:      # the history is kept: 8 bytes a token
        raise ValueError(f"max_new_tokens with a sliding window is limited to "
                         f"{MAX_WINDOW_TOKENS:,} (the token history is kept in memory), got {n_new:,}")
    if P > n_ctx:                                            # no window can help: it slides later
        raise ValueError(f"the prompt ({P} tokens) is longer than the context window "
                         f"n_ctx={n_ctx}; shorten it")
    if keep is None and P + n_new > n_ctx:
        raise ValueError(f"prompt ({P} tokens) + max_new_tokens ({n_new}) exceed the "
                         f"context window n_ctx={n_ctx}; shorten them or pass sliding_window="
                         f"{n_ctx // 2} (CLI: --sliding-window)")


EARLY_STOPPING = ("heuristic", "pool_full", "never")     # beam search's; HF: False, True, "never"


def check_beam_args(model, prompt_ids, beam_size, max_new_tokens, num_return_sequences,
                    length_penalty, early_stopping, stop_ids, stop_at_eos):
    """``beam_search``'s arguments -> (prompt [P], B, N, stop ids), or the ValueError naming the
    one out of range; B rows of a cache of P + N positions must fit in memory (12·V bytes more
    each: the [V] float32 logits and float64 scores)."""
    prompt = check_prompt(model, prompt_ids)
    nb, n_new = check_count(beam_size, "beam_size"), check_count(max_new_tokens, "max_new_tokens")
    if nb < 1 or n_new < 1:
        raise ValueError(f"beam_size and max_new_tokens must be >= 1, got {nb}, {n_new}")
    if not 1 <= check_count(num_return_sequences, "num_return_sequences") <= nb:
        raise ValueError(f"num_return_sequences must be in [1, beam_size={nb}], got {num_return_sequences}")
    if isinstance(length_penalty, bool) or not isinstance(length_penalty, (int, float)) \
            or not math.isfinite(length_penalty):
        raise ValueError(f"length_penalty must be a finite number, got {length_penalty!r}")
    if early_stopping not in EARLY_STOPPING:
        raise ValueError(f"early_stopping must be one of {EARLY_STOPPING}, got {early_stopping!r}")
    stops = stop_set(model, stop_ids, stop_at_eos)
    if len(prompt) + n_new > model.config.n_ctx:
        raise ValueError(f"prompt ({len(prompt)}) + max_new_tokens ({n_new}) exceed "
                         f"n_ctx={model.config.n_ctx}")
    check_cache_fits(model.config, nb, len(prompt) + n_new, "beam_size",   # before allocating
                     per_row=12 * model.config.vocab_size)
    return prompt, nb, n_new, stops
