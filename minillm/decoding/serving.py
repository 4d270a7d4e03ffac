"""Continuous batching: requests join and leave a running batch between decode steps.

``generate_batch`` starts B prompts together and holds every row until the longest is done: a
batch of one 500-token answer and seven 20-token ones runs 500 steps with seven idle rows.
Here each of the B rows of the KV cache is a SLOT. Between steps, a finished request leaves its
slot and a waiting one takes it, so every step decodes as many live requests as there are.

    step:  admit waiting requests into free slots (their prompts prefilled together when of
           similar lengths, each one's K/V copied in)
           -> one forward over [B, 1] (the next token of every slot) -> sample -> retire finished

The cache's columns are shared time: every step writes one column for all B slots. A slot keeps
its own validity row (``KVCache.valid``): a request placed at columns [L − P, L) has its earlier
columns marked invalid, so it never attends to what the previous occupant left, and its positions
count only its own valid columns (``GPT``'s padding rule) — each request computes what it would
alone (greedy: the same tokens; tested). When the columns run out, each slot's valid columns are
packed to the right (``compact``), which keeps their order and hence their positions. Only rows
up to the last live one are computed; once the queue is empty, the last live request moves into
the first free row, so the tail of a run computes as few rows as are still live.

Example: ``serve(model, [ids_a, ids_b, ids_c], max_new_tokens=[50, 5, 20], batch_size=2,
temperature=0)`` -> three lists of new ids; c starts as soon as b finishes.
"""
from __future__ import annotations

import copy
import dataclasses
from collections import deque

import numpy as np

from minillm.decoding.batch import padded_inputs
from minillm.decoding.joining import prefill_together, prompt_groups
from minillm.decoding.generate_args import (ID_SHORTCUTS, GenerationSettings, check_count, check_prompt,
                                            sampler_and_stops, uses_history)
from minillm.kv_cache import KVCache


@dataclasses.dataclass
class Request:
    id: int
    prompt: np.ndarray              # [P]
    max_new_tokens: int
    new: list = dataclasses.field(default_factory=list)   # generated ids (the last not yet fed)


class ContinuousBatcher:
    """A queue of requests served by a ``batch_size``-slot KV cache of ``capacity`` columns."""

    def __init__(self, model, batch_size: int = 8, capacity: int | None = None, *, sampler=None,
                 stops=None, seed=None, rng=None, **shortcuts):
        self.model = model
        sampler, stops = sampler_and_stops("ContinuousBatcher", sampler, stops, shortcuts,
                                           takes=ID_SHORTCUTS)
        if stops.strings:
            raise ValueError("ContinuousBatcher returns token ids: stop strings need generate()")
        self.settings = GenerationSettings.build(model, sampler=sampler, stops=stops, seed=seed, rng=rng)
        self.cache = KVCache(model.config, batch_size=batch_size, capacity=capacity)
        self.cache.valid[:] = False                               # [B, N] no slot holds anything
        self.slots: list[Request | None] = [None] * batch_size
        self.waiting: deque[Request] = deque()
        self.done: dict[int, list[int]] = {}
        self.submitted = 0

    def submit(self, prompt_ids, max_new_tokens: int = 100) -> int:
        """Queue a request; returns its id (the key of ``done`` once it is finished)."""
        prompt, n = check_prompt(self.model, prompt_ids), check_count(max_new_tokens, "max_new_tokens")
        if len(prompt) + n > self.cache.capacity:
            raise ValueError(f"prompt ({len(prompt)}) + max_new_tokens ({n}) exceed the cache "
                             f"capacity {self.cache.capacity}")
        self.waiting.append(Request(self.submitted, prompt, n))
        self.submitted += 1
        return self.submitted - 1

    def busy(self) -> bool:
        return bool(self.waiting) or any(s is not None for s in self.slots)

    def step(self) -> None:
        """Admit waiting requests into free slots, then decode one token for every live slot."""
        free, joining = [b for b, s in enumerate(self.slots) if s is None], []
        while free and self.waiting:
            request = self.waiting.popleft()
            if request.max_new_tokens == 0:                       # nothing to generate: done
                self.done[request.id] = []
            else:
                joining.append((free.pop(0), request))
        for group in prompt_groups(joining):
            self._admit(group)
        if not self.waiting:
            self._fill_holes()                                    # the tail: keep live rows first
        live = [b for b, s in enumerate(self.slots) if s is not None]
        if not live:
            return
        if self.cache.length == self.cache.capacity:
            self.compact()
        B = live[-1] + 1                                          # rows past the last live one idle
        tokens = np.zeros((B, 1), dtype=np.int64)                 # [B, 1] free slots: a dummy 0
        tokens[live, 0] = [self.slots[b].new[-1] for b in live]
        rows = first_rows(self.cache, B)
        L = rows.length
        rows.valid[:, L] = False                                  # [B] dummies are padding,
        rows.valid[live, L] = True                                # the live rows' new token is real
        positions, attend = padded_inputs(rows.valid[:, :L + 1], 1)   # [B, 1], [B, 1, L + 1]
        logits = self.model(tokens, cache=rows, positions=positions, mask=attend,
                            last_only=True)[:, -1]                # [B, V]
        self.cache.length = rows.length
        self._choose(live, logits[live])                          # [live, V]

    def _fill_holes(self) -> None:
        """Move the last live request into the first free slot below it (its K/V row copied)."""
        c = self.cache
        while True:
            live = [b for b, s in enumerate(self.slots) if s is not None]
            free = [b for b in range(len(self.slots)) if self.slots[b] is None]
            if not live or not free or free[0] > live[-1]:
                return
            top, hole = live[-1], free[0]
            c.k[:, hole], c.v[:, hole] = c.k[:, top], c.v[:, top]   # [L, KV, N, D] one row
            c.valid[hole], c.valid[top] = c.valid[top], False
            self.slots[hole], self.slots[top] = self.slots[top], None

    def _admit(self, joining: list[tuple[int, Request]]) -> None:
        """Prefill the joining prompts together (``joining.py``), copy each one's K/V into its
        slot's last P_i columns, and draw each one's first token."""
        one, logits = prefill_together(self.model, [r.prompt for _, r in joining])   # [k, V]
        P, c = one.capacity, self.cache
        if c.length < P:                                          # make room: shift every slot right
            shift, L = P - c.length, c.length
            c.k[:, :, :, shift:shift + L] = c.k[:, :, :, :L].copy()     # [layers, B, KV, L, D]
            c.v[:, :, :, shift:shift + L] = c.v[:, :, :, :L].copy()
            c.valid[:, shift:shift + L] = c.valid[:, :L].copy()
            c.valid[:, :shift] = False
            c.length = P
        L = c.length
        for i, (b, r) in enumerate(joining):
            n = len(r.prompt)
            c.k[:, b, :, L - n:L] = one.k[:, i, :, P - n:]        # [layers, KV, n, D]
            c.v[:, b, :, L - n:L] = one.v[:, i, :, P - n:]
            c.valid[b] = False
            c.valid[b, L - n:L] = True                            # the new occupant's columns only
            self.slots[b] = r
        self._choose([b for b, _ in joining], logits)

    def _choose(self, rows: list[int], logits: np.ndarray) -> None:
        """Sample one token per row of ``logits`` [R, V] (R = len(rows)), retiring a request at a
        stop id or at its token budget."""
        history, prompt_len, sampler = None, 0, self.settings.sampler
        if uses_history(sampler):                                 # penalties: each row's own tokens
            history = [np.concatenate([self.slots[b].prompt, self.slots[b].new]).astype(np.int64)
                       for b in rows]                             # R x [P_b + n_b]
            prompt_len = np.array([len(self.slots[b].prompt) for b in rows])   # [R]
        picks = sampler.sample(logits, self.settings.rng, history=history, prompt_len=prompt_len)  # [R]
        for b, token in zip(rows, np.atleast_1d(picks).tolist()):
            request = self.slots[b]
            if token in self.settings.stop_ids:
                self._retire(b)
                continue
            request.new.append(token)
            if len(request.new) == request.max_new_tokens:
                self._retire(b)

    def _retire(self, b: int) -> None:
        self.done[self.slots[b].id] = self.slots[b].new
        self.slots[b] = None
        self.cache.valid[b] = False                               # its columns are free for others

    def compact(self) -> None:
        """Pack every slot's valid columns to the right end of [0, L'), L' = the most any slot
        holds: order (so positions) kept, the freed columns reusable."""
        c = self.cache
        counts = c.valid[:, :c.length].sum(axis=1)                # [B]
        new_length = int(counts.max())
        for b in range(len(self.slots)):
            cols = np.flatnonzero(c.valid[b, :c.length])          # [n_b] ascending
            start = new_length - len(cols)
            c.k[:, b, :, start:new_length] = c.k[:, b][:, :, cols]   # [L, KV, n_b, D] gathered (a copy)
            c.v[:, b, :, start:new_length] = c.v[:, b][:, :, cols]
            c.valid[b] = False
            c.valid[b, start:new_length] = True
        c.length = new_length


def first_rows(cache: KVCache, n: int) -> KVCache:
    """A KVCache whose rows are views of ``cache``'s first n: a forward over it writes there."""
    rows = copy.copy(cache)
    rows.k, rows.v, rows.valid = cache.k[:, :n], cache.v[:, :n], cache.valid[:n]
    return rows


def serve(model, prompts, max_new_tokens=100, batch_size: int = 8, capacity: int | None = None,
          **kwargs) -> list[list[int]]:
    """Run every prompt through a ``ContinuousBatcher``; returns each one's new ids, in order.

    ``max_new_tokens``: one int or one per prompt. ``kwargs``: sampler=/stops=, seed/rng, or
    the shortcuts (stop_ids, stop_at_eos, the sampling settings), as in ``generate``. ``capacity`` defaults to twice the longest
    prompt + max_new_tokens (at most n_ctx): fewer columns, less attention per step.
    """
    budgets = [max_new_tokens] * len(prompts) if np.ndim(max_new_tokens) == 0 else list(max_new_tokens)
    budgets = [check_count(n, "max_new_tokens") for n in budgets]
    if len(budgets) != len(prompts):
        raise ValueError(f"give one max_new_tokens or one per prompt ({len(prompts)}), got {len(budgets)}")
    if capacity is None:
        longest = max(len(p) + n for p, n in zip(prompts, budgets)) if prompts else 1
        capacity = min(2 * longest, model.config.n_ctx)
    batcher = ContinuousBatcher(model, batch_size, capacity, **kwargs)
    ids = [batcher.submit(p, n) for p, n in zip(prompts, budgets)]
    while batcher.busy():
        batcher.step()
    return [batcher.done[i] for i in ids]
