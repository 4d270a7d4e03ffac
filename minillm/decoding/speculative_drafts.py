"""Where speculative decoding's guesses come from: the context itself, or a smaller model.

A draft source proposes up to k next tokens d₁ … d_k after the context ``seq[:m]``, and says how it
chose them: ``q`` [k, V], the distribution each dᵢ was drawn from, or None when the choice was
deterministic (q is then one-hot at dᵢ). The target model checks all k in one forward
(``minillm.decoding.speculative``); the guesses only decide how MUCH work one forward does, never WHAT is
generated.

- ``PromptLookup`` (n-gram lookup; HF's ``prompt_lookup_num_tokens``): take the last n tokens of
  the context, find where they occurred before, and propose what followed them there. Free (no
  model), and right whenever the output copies its input: rewriting a paragraph, editing code.
- ``DraftModel``: a smaller ``GPT`` sharing the vocabulary generates k tokens with its own cache.
- ``first_layers(model, n)``: the target's first n blocks with its own final norm and head — a
  draft model that costs n/L of a step and needs no second set of weights (self-speculation).

Example: ``generate(model, ids, 50, draft="prompt", num_draft_tokens=5)``, or
``draft=DraftModel(small)`` to read ``proposed`` / ``accepted`` afterwards.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from minillm.kv_cache import KVCache


class DraftSource:
    """Counts what was proposed and accepted (acceptance rate = accepted / proposed) and
    ``rounds``: the target's forwards after the prompt, one per round, drafting or not."""
    proposed = accepted = rounds = 0

    def start(self, target, capacity: int) -> None:
        """Called once per ``generate`` before the first proposal."""

    def record(self, m: int, n_proposed: int, n_accepted: int) -> None:
        """The target kept the first ``n_accepted`` drafts after position ``m``."""
        self.rounds += 1
        self.proposed += n_proposed
        self.accepted += n_accepted


class PromptLookup(DraftSource):
    """Propose the continuation of the latest n-gram's most recent earlier occurrence.

    For n = max_ngram down to min_ngram: g = seq[m-n:m]; the last j < m - n with seq[j:j+n] == g
    gives the drafts seq[j+n : j+n+k] (never past m). No match: no drafts (a plain step).
    Example: context "a b c d a b" with n = 2 finds "a b" at 0 and proposes "c d a b".
    HF takes the FIRST occurrence; we take the most recent one, which follows the text being
    copied right now when a passage repeats.
    """

    def __init__(self, max_ngram: int = 3, min_ngram: int = 1):
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (max_ngram, min_ngram)) \
                or not 1 <= min_ngram <= max_ngram:
            raise ValueError(f"need integers 1 <= min_ngram <= max_ngram, got {min_ngram!r}, {max_ngram!r}")
        self.max_ngram, self.min_ngram = max_ngram, min_ngram

    def propose(self, seq: np.ndarray, m: int, k: int, choose) -> tuple[np.ndarray, None]:
        for n in range(min(self.max_ngram, m - 1), self.min_ngram - 1, -1):
            windows = sliding_window_view(seq[:m - 1], n)             # [m-n, n] every earlier n-gram
            hits = np.flatnonzero((windows == seq[m - n:m]).all(axis=1))   # [h] starts j, j+n < m
            if hits.size:
                start = int(hits[-1]) + n
                return seq[start:min(start + k, m)].copy(), None      # [≤ k] deterministic: q one-hot
        return seq[:0].copy(), None


class DraftModel(DraftSource):
    """A smaller model drafts k tokens one at a time, each chosen by the same sampler as the
    target (so its q is the sampler's distribution over the draft's logits)."""

    def __init__(self, model):
        self.model = model
        self.cache = None

    def start(self, target, capacity: int) -> None:
        if self.model.config.vocab_size != target.config.vocab_size:
            raise ValueError(f"the draft model's vocabulary ({self.model.config.vocab_size}) must be "
                             f"the target's ({target.config.vocab_size})")
        if capacity > self.model.config.n_ctx:
            raise ValueError(f"the draft model's n_ctx={self.model.config.n_ctx} is shorter than "
                             f"prompt + max_new_tokens ({capacity})")
        self.cache = KVCache(self.model.config, batch_size=1, capacity=capacity)

    def propose(self, seq: np.ndarray, m: int, k: int, choose) -> tuple[np.ndarray, np.ndarray | None]:
        """``choose(logits, n) -> (token, q or None)`` picks a token after ``seq[:n]``."""
        fresh = seq[self.cache.length:m]                              # [≥ 1] what the draft lacks
        logits = self.model(fresh[None], cache=self.cache, last_only=True)[0, -1]   # [V]
        qs = []
        for i in range(k):
            seq[m + i], q = choose(logits, m + i)                     # tentative: the target decides
            qs.append(q)
            if i < k - 1:
                step = seq[m + i:m + i + 1][None]                  # [1, 1] the draft just chosen
                logits = self.model(step, cache=self.cache, last_only=True)[0, -1]   # [V]
        drafts = seq[m:m + k].copy()                                  # [k]
        return drafts, (None if qs[0] is None else np.stack(qs))      # [k, V] or None

    def record(self, m: int, n_proposed: int, n_accepted: int) -> None:
        super().record(m, n_proposed, n_accepted)
        self.cache.rollback(min(self.cache.length, m + n_accepted))   # keep what the target kept


def first_layers(model, n: int):
    """A model of ``model``'s class made of its first ``n`` blocks, its final norm and head: the
    weights are shared (views, no copy), so it drafts at about n/L of a step's cost."""
    from minillm.engine import EngineGPT
    L = model.config.n_layers
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n < L:
        raise ValueError(f"n must be an integer in [1, {L}) (the model has {L} layers), got {n!r}")
    if isinstance(model, EngineGPT):                    # its arena's first n layers
        return model.first_layers(n)
    params = dataclasses.replace(model.params, blocks=model.params.blocks[:n])
    return type(model)(dataclasses.replace(model.config, n_layers=n), params)


def check_proposal(proposal, k: int, V: int) -> tuple[np.ndarray, np.ndarray | None]:
    """What a DraftSource's ``propose`` returned, as (drafts int64 [a], q [a, V] or None) with
    a <= k and every id in [0, V): any sequence of ints is accepted (a list as well as an
    array); anything else is a TypeError / ValueError saying what is expected."""
    expected = (f"DraftSource.propose must return (drafts, q): drafts a sequence of at most "
                f"k={k} token ids, q None or a [len(drafts), V={V}] array of probabilities")
    if not isinstance(proposal, tuple) or len(proposal) != 2:
        raise TypeError(f"{expected}; got {type(proposal).__name__}")
    drafts, q = np.asarray(proposal[0]), proposal[1]
    if drafts.size == 0:
        drafts = drafts.astype(np.int64).reshape(0)                  # [] -> [0]
    if drafts.ndim != 1 or drafts.dtype.kind not in "iu":
        raise TypeError(f"{expected}; got drafts of shape {drafts.shape}, dtype {drafts.dtype}")
    if len(drafts) > k or (len(drafts) and not 0 <= drafts.min() <= drafts.max() < V):
        raise ValueError(f"{expected}; got {len(drafts)} drafts {drafts[:8].tolist()}")
    if q is not None:
        q = np.asarray(q)
        if q.shape != (len(drafts), V):
            raise ValueError(f"{expected}; got q of shape {q.shape}")
    return drafts.astype(np.int64), q


def make_draft(draft) -> DraftSource:
    """``"prompt"`` -> PromptLookup(); a ``GPT`` -> DraftModel(it); a DraftSource as it is."""
    from minillm.model import GPT
    if isinstance(draft, DraftSource):
        return draft
    if isinstance(draft, str):
        if draft != "prompt":
            raise ValueError(f"draft must be \"prompt\", a GPT or a DraftSource, got {draft!r}")
        return PromptLookup()
    if isinstance(draft, GPT):
        return DraftModel(draft)
    raise TypeError(f"draft must be \"prompt\", a GPT or a DraftSource, got {type(draft).__name__}")
