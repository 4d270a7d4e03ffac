"""Beam search: keep the ``beam_size`` best partial answers instead of one, and return the best.

Greedy commits to the argmax at every step; a token that looks slightly worse now may lead to a
much better sentence. Beam search keeps B running beams, scored by Σ log p of their tokens. Each
step, every beam is extended by every token (B · V candidates, ONE batched forward over the B
rows of a KV cache), the best candidates are kept, and the cache rows are reordered so row b holds
the history of the beam it continues (``KVCache.reorder``).

This is Hugging Face transformers' beam search (``generate(num_beams=B, do_sample=False)``,
``GenerationMixin._beam_search`` in 5.x), rule for rule:
1. candidates: the top K·B of (beam score + log p(token)) over all beams × vocabulary, K =
   max(2, 1 + the number of stop ids): even if the best ones all stop, B others can run on;
2. a candidate of rank < B that ends in a stop id (or reaches ``max_new_tokens``) is offered to
   the pool of finished hypotheses with the score
       score = Σ log p / generated_length ** length_penalty
   (generated_length counts the new tokens, EOS included, NOT the prompt); the pool keeps the B best;
3. the B best candidates that did not finish keep running;
4. stop when the pool is full and either ``early_stopping="pool_full"``, or the best running beam
   cannot beat the worst finished one by HF's estimate: best_running_sum / L ** length_penalty
   <= worst finished score, with L the current generated length (``"heuristic"``, the default)
   or ``max_new_tokens`` (``"never"`` with length_penalty > 0). HF spells these three
   ``early_stopping=True``, ``False`` and ``"never"``.
   The estimate is a heuristic: with length_penalty > 0 a longer beam could still win.

Stop ids: the model's EOS ids (``model.config.eos_ids``, as HF's ``generate`` uses
``generation_config.eos_token_id``) unless ``stop_at_eos=False``, plus ``stop_ids``.

Length penalty, alternatives: HF before 4.37 divided by the FULL length, prompt included (so the
prompt length changed which answer won); fairseq divides by the generated length as here;
Google's NMT (Wu et al. 2016) uses ((5 + |Y|) / 6) ** α. length_penalty = 1 averages the log-probs,
0 ranks by the plain sum (favouring short answers), > 1 favours longer ones.
Differences from HF, by design: the first step expands the one live beam only, where HF adds
B − 1 dummy beams scored −1e9 (identical whenever vocab_size ≥ K·B); ties go to the lower index;
finished hypotheses are returned at their own length instead of padded with pad_token_id.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from minillm.functional import log_softmax
from minillm.decoding.generate_args import EARLY_STOPPING, check_beam_args  # noqa: F401
from minillm.kv_cache import shared_prefix_cache
from minillm.sampling.top_k import top_k_ids


@dataclasses.dataclass(frozen=True)
class Hypothesis:
    """A finished beam: its new ``ids`` (the stop id included if it ended with one), ``score`` (the
    length-penalised one beams are ranked by) and ``logprob`` (Σ log p, unpenalised)."""
    ids: list[int]
    score: float
    logprob: float


def beam_search(model, prompt_ids, beam_size: int = 4, max_new_tokens: int = 20,
                length_penalty: float = 1.0, stop_ids=(), stop_at_eos: bool = True,
                num_return_sequences: int = 1, early_stopping: str = "heuristic", constraint=None,
                tokenizer=None) -> list[Hypothesis]:
    """The ``num_return_sequences`` best hypotheses, best first. beam_size=1 is greedy decoding.
    ``constraint`` (with ``tokenizer``): every hypothesis matches it (constraints/masked.py).

    Example: ``beam_search(model, [464, 1893], beam_size=4, max_new_tokens=8, stop_ids=50256)``.
    """
    prompt, nb, n_new, stops = check_beam_args(model, prompt_ids, beam_size, max_new_tokens,
                                               num_return_sequences, length_penalty,
                                               early_stopping, stop_ids, stop_at_eos)
    stops = np.array(sorted(stops), dtype=np.int64)                # [n_stop]
    V = model.config.vocab_size

    from minillm.decoding.constraints.masked import BeamGuides     # the text must match a pattern
    guides = None if constraint is None else BeamGuides(model, constraint, tokenizer, stops, nb)
    cache, logits = shared_prefix_cache(model, prompt, nb, capacity=len(prompt) + n_new)
    logits = logits[None]                                          # [1, V]  one live beam at first
    tokens = np.zeros((nb, n_new), dtype=np.int64)                 # [B, N] running beams' new ids
    # subtle: float64 on purpose (so is ``total``, small next to the forward pass). In float32, sum +
    # log p can round two log-probs to one value: a false tie, won by the lower id, not greedy's argmax.
    sums = np.zeros(nb, dtype=np.float64)                          # [B] running Σ log p
    live, pool = 1, []                                             # pool: finished Hypotheses
    for t in range(n_new):
        gen_len = t + 1
        logp = log_softmax(logits[:live])                          # [live, V]
        total = sums[:live, None] + (logp if guides is None else guides.mask(logp))  # Σ log p
        flat = total.ravel()                                       # [live · V]
        n_cand = min(max(2, 1 + len(stops)) * nb, flat.size)      # K·B candidates (all live · V if fewer)
        top = top_k_ids(flat, n_cand)                              # [n_cand] the best (ties: lower index)
        top = top[np.lexsort((top, -flat[top]))]                   # [n_cand] best first, ties: lower index
        top = top[np.isfinite(flat[top])]                          # (a constraint's -inf: never)
        beam, token, score = top // V, top % V, flat[top]          # [n_cand] each
        done = np.isin(token, stops) | (gen_len == n_new)          # [n_cand] candidate finishes here
        if guides is not None:
            done |= guides.finishes(beam, token)                   # nothing can extend the text
        pool_was_full = len(pool) == nb
        for r in range(min(nb, len(top))):                           # only the top B may finish
            if done[r] and not (pool_was_full and early_stopping == "pool_full"):
                ids = [*tokens[beam[r], :t].tolist(), int(token[r])]
                pool.append(Hypothesis(ids, float(score[r]) / gen_len ** length_penalty, float(score[r])))
        pool = sorted(pool, key=lambda h: -h.score)[:nb]           # stable: earlier entries win ties
        keep = np.flatnonzero(~done)[:nb]                          # [live'] best unfinished candidates
        live = len(keep)
        if gen_len == n_new or live == 0 or _can_stop(
                pool, score[keep[0]], gen_len, beam_size=nb, max_new_tokens=n_new,
                length_penalty=length_penalty, early_stopping=early_stopping):
            break
        rows = np.zeros(nb, dtype=np.int64)                        # [B] which old beam each row continues
        rows[:live] = beam[keep]
        if guides is not None:
            guides.follow(beam[keep], token[keep])
        cache.reorder(rows)                                        # K/V histories follow their beams
        tokens[:] = tokens[rows]                                   # [B, N]
        tokens[:live, t] = token[keep]
        sums[:live] = score[keep]
        step_ids = tokens[:, t:t + 1]                              # [B, 1] dead rows feed a dummy id
        logits = model(step_ids, cache=cache, last_only=True)[:, -1]   # [B, V]
    return pool[:num_return_sequences]


def _can_stop(pool, best_running, gen_len, *, beam_size, max_new_tokens, length_penalty,
              early_stopping) -> bool:
    """HF's stopping rule: the pool is full and no running beam is expected to beat its worst."""
    if len(pool) < beam_size:
        return False
    if early_stopping == "pool_full":
        return True
    horizon = max_new_tokens if (early_stopping == "never" and length_penalty > 0) else gen_len
    return best_running / horizon ** length_penalty <= pool[-1].score
