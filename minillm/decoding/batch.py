"""Many rows at once: prompts of different lengths in one batch, and one prompt shared by many rows.

Batched generation. B prompts of different lengths become one [B, S] array by LEFT padding, so
every row's newest token sits in the last column and one ``last_only`` forward gives all B next
tokens:

    a b c d          mask  1 1 1 1        positions  0 1 2 3
    _ _ e f                0 0 1 1                   0 0 0 1     (padding sits at 0, never attended)

``padded_inputs`` turns "which slots are real" into the model's ``positions`` and ``mask``: the
mask keeps padded keys out of every softmax, and positions count real tokens only, so each row
computes exactly what it would alone (greedy: the same tokens; a test checks it).
Padding costs compute (B · S, not Σ lengths) but turns B matrix-vector products per layer into one
matrix-matrix product, which is where the speed comes from.

A shared prefix (beam search, option scoring): run the prompt ONCE with batch 1, then copy its
keys and values into every row of a B-row cache (``kv_cache.shared_prefix_cache``) instead of computing the
same prompt B times.
"""
from __future__ import annotations

import numpy as np

from minillm.decoding.generate_args import (ID_SHORTCUTS, GenerationSettings, check_count, check_prompt,
                                            sampler_and_stops, uses_history)
from minillm.kv_cache import KVCache, check_cache_fits
from minillm.model.attention import causal_mask


def left_pad(prompts, pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Token lists -> ids [B, S] (left-padded with ``pad_id``) and mask [B, S] (False = padding)."""
    lengths = [len(p) for p in prompts]
    if not prompts or min(lengths) == 0:
        raise ValueError("give at least one prompt, each with at least one token")
    B, S = len(prompts), max(lengths)
    ids = np.full((B, S), pad_id, dtype=np.int64)                  # [B, S]
    mask = np.zeros((B, S), dtype=bool)                            # [B, S]
    for b, p in enumerate(prompts):
        ids[b, S - len(p):] = p                                    # real tokens at the right
        mask[b, S - len(p):] = True
    return ids, mask


def padded_inputs(valid: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
    """The model's ``positions`` [B, T] and ``mask`` [B, T, S] for the last T of S key slots,
    given ``valid`` [B, S] (False = a padding slot; for a cache, ``cache.valid[:, :S]``).

    A row's position counts only its real tokens, and no query sees a padded key::

        valid [[0, 0, 1, 1]], T = 4  ->  positions [[0, 0, 0, 1]]
                                         mask rows  t=2: [0 0 1 0]   t=3: [0 0 1 1]

    subtle: a padding query must still see something (itself), or its softmax row would be all
    −∞ (NaN); its output is never used.
    """
    B, S = valid.shape
    positions = np.cumsum(valid, axis=1)[:, S - T:] - 1                   # [B, T] real tokens before, 0-based
    mask = causal_mask(T, S)[None] & valid[:, None, :]                    # [B, T, S] causal, no padded keys
    mask[:, np.arange(T), S - T + np.arange(T)] = True                    # each query sees itself
    return np.maximum(positions, 0), mask                                 # padding sits at 0


def generate_batch(model, prompts, max_new_tokens: int = 100, *, sampler=None, stops=None,
                   seed=None, rng=None, constraint=None, tokenizer=None,
                   **shortcuts) -> list[list[int]]:
    """Continue every prompt (a list of token-id lists); returns each row's new ids.

    ``sampler`` / ``stops`` (ids and eos; no strings: rows are ids) or the shortcuts preset /
    temperature / top_k / top_p / min_p / stop_ids / stop_at_eos, as in ``generate``. One
    generator serves the whole batch (row b's draw depends on the rows before it), so only greedy
    (T = 0) output equals generating each prompt alone. A row that draws a stop id (one of the
    model's EOS ids unless ``stop_at_eos=False``, or of ``stop_ids``) is finished (the stop id is
    not returned); it keeps a slot in the batch until every row is finished.
    Penalties (repetition, frequency, presence) see each row's own prompt and new ids.
    Needs max prompt length + max_new_tokens <= n_ctx (the padded width is what the cache holds).
    ``constraint`` (with ``tokenizer``): each row's text matches it, as in ``generate`` (a row
    is finished when nothing can extend it; constraints/masked.py's ``RowGuides``).
    """
    rows = [check_prompt(model, p) for p in prompts]
    n_new = check_count(max_new_tokens, "max_new_tokens")
    sampler, stops = sampler_and_stops("generate_batch", sampler, stops, shortcuts, takes=ID_SHORTCUTS)
    if stops.strings:
        raise ValueError("generate_batch returns token ids: stop strings need generate() (one row)")
    settings = GenerationSettings.build(model, sampler=sampler, stops=stops, seed=seed, rng=rng,
                                        tokenizer=tokenizer, constraint=constraint)
    sampler, rng = settings.sampler, settings.rng
    stops = np.array(sorted(settings.stop_ids), dtype=np.int64)   # [n_stop]
    ids, mask = left_pad(rows)                                     # [B, S], [B, S]
    B, S = ids.shape
    if S + n_new > model.config.n_ctx:
        raise ValueError(f"longest prompt ({S}) + max_new_tokens ({n_new}) exceed n_ctx={model.config.n_ctx}")
    check_cache_fits(model.config, B, S + n_new, "len(prompts)")   # before allocating
    if n_new == 0:
        return [[] for _ in range(B)]
    seq = np.zeros((B, S + n_new), dtype=np.int64)                 # [B, S + N] preallocated: prompts, then new ids
    seq[:, :S] = ids                                               # [B, S]
    prompt_lens = np.array([len(r) for r in rows])                 # [B]
    lengths = np.full(B, n_new)                                    # [B] where each row stopped
    penalised = uses_history(sampler)
    cache = KVCache(model.config, batch_size=B, capacity=S + n_new)
    cache.valid[:, :S] = mask                                      # [B, S] which slots are real
    positions, attend = padded_inputs(cache.valid[:, :S], S)       # [B, S], [B, S, S]
    logits = model(ids, cache=cache, positions=positions, mask=attend, last_only=True)[:, -1]  # [B, V]
    done = np.zeros(B, dtype=bool)                                 # [B]
    guides = None
    if settings.guide is not None:
        from minillm.decoding.constraints.masked import RowGuides
        guides = RowGuides(settings.guide, B)
    for n in range(n_new):
        # each row's history without its padding: views, no copy (only penalties read it)
        seen = [seq[b, S - prompt_lens[b]:S + n] for b in range(B)] if penalised else None
        if guides is not None:
            logits = guides.mask(logits, done)                     # [B, V] each row's pattern
        token = np.asarray(sampler.sample(logits, rng, history=seen, prompt_len=prompt_lens))  # [B]
        hit = np.isin(token, stops) & ~done                       # [B] rows ending now
        lengths[hit] = n                                           # [B]
        done |= hit                                                # [B]
        if guides is not None:
            complete = guides.advance(token, done)                 # [B] nothing can follow
            lengths[complete] = n + 1                              # (the token is kept)
            done |= complete
        seq[:, S + n] = token                                      # [B]
        if done.all() or n == n_new - 1:
            break
        positions, attend = padded_inputs(cache.valid[:, :S + n + 1], 1)   # [B, 1], [B, 1, S + n + 1]
        logits = model(token[:, None], cache=cache, positions=positions, mask=attend,
                       last_only=True)[:, -1]                      # [B, 1] -> [B, V]
    return [seq[b, S:S + lengths[b]].tolist() for b in range(B)]
