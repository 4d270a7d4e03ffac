"""Generation under a constraint: at each step the guide's mask sets every token that would
leave the pattern to -inf, then the sampler runs as usual.

Where the mask sits: FIRST, on the raw logits, before the sampler's whole chain

    constraint mask -> allowed ids -> logit bias -> penalties -> temperature -> top-k -> top-p
        -> min-p -> softmax -> draw

so temperature, top-k, top-p and min-p act on the allowed tokens only: top-k picks the k best
tokens THAT FIT, top-p's nucleus is a share of the mass that fits. The other order (filter, then
mask) can leave nothing: if the 50 best tokens are all prose, top-k 50 then the mask is empty.
``allowed_ids`` and the logit bias compose as sets and sums on what the mask kept (an
``allowed_ids`` disjoint from the mask is a ValueError: no token left); penalties scale or shift
finite logits only, so a masked token stays masked. This is what vLLM and llama.cpp do
(llama.cpp's grammar sampler runs first in its chain).

Stopping: the stop ids (the model's EOS included) are allowed only in accepting states — the text
so far matches the whole pattern — and drawing one ends generation as always. When the state is
finished (accepting, and no token can extend the text) generation stops after that token.
``max_new_tokens`` may still cut a text short of the pattern: that output is incomplete.
``Step.logprob`` / ``Step.top`` stay the model's raw distribution (``generate``'s choice).
Example: ``generate(model, ids, 20, constraint=Choice(["yes", "no"]), tokenizer=tok)``.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from minillm.decoding.generate_args import uses_history
from minillm.decoding.steps import Step, StepWriter


def mask_logits(logits: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Logits with every disallowed id at -inf: ``[V]`` logits, ``[V']`` bool mask (V' <= V: a
    model's vocabulary may be padded past the tokenizer's; the padding is never allowed)."""
    V = logits.shape[-1]
    if allowed.shape[-1] > V:
        raise ValueError(f"the constraint's vocabulary ({allowed.shape[-1]} tokens) is larger than "
                         f"the model's ({V}): the tokenizer does not belong to this model")
    keep = np.zeros(V, dtype=bool)                                # [V]
    keep[:allowed.shape[-1]] = allowed
    if not keep.any():
        raise ValueError("the constraint allows no token here: this vocabulary cannot spell any "
                         "continuation of the pattern")
    return np.where(keep, logits, np.float32(-np.inf)).astype(logits.dtype)   # [V]


def masked_steps(model, prompt, n_new, settings, *, cache) -> Iterator[Step]:
    """``generate``'s loop (decoding/generate.py's ``_steps``) with the mask before the sampler."""
    P, sampler, rng, keep = len(prompt), settings.sampler, settings.rng, settings.sliding_window
    guide = settings.guide
    state = guide.start
    context = np.empty(P + n_new, dtype=np.int64)             # [P + N]
    context[:P] = prompt
    writer = StepWriter(settings)
    penalised = uses_history(sampler)
    if n_new == 0:
        return
    fresh = prompt[cache.length:]                             # [P'] what the cache lacks
    for n in range(n_new):
        logits = model(fresh[None], cache=cache, last_only=True)[0, -1]   # [1, T'] -> [V]
        allowed = mask_logits(logits, guide.allowed(state))   # [V] the pattern's tokens only
        seen = context[:P + n] if penalised else None
        token = int(sampler.sample(allowed, rng, history=seen, prompt_len=P))
        if token in settings.stop_ids:                        # (allowed: the text is complete)
            if tail := writer.held_text():
                yield Step(None, tail)
            return
        state = guide.advance(state, token)
        end = P + n + 1
        context[end - 1] = token
        last = n == n_new - 1 or guide.is_finished(state)     # nothing can follow: done
        shown = sampler.probs(allowed, history=seen, prompt_len=P) if settings.top_n else None
        yield writer.step(token, logits, last, shown)
        if last or writer.stopped:
            return
        fresh = context[end - 1:end]                          # [1]
        if cache.length == cache.capacity:                    # only with a sliding window
            cache.rollback(0)
            fresh = context[end - keep:end]                   # [keep]


class RowGuides:
    """One guide state per row of a batch (``generate_batch(..., constraint=)``): ``mask`` the
    rows' logits, ``advance`` them by the drawn tokens; a finished row's state is kept and its
    logits left alone (its draws are discarded)."""

    def __init__(self, guide, n_rows: int):
        self.guide, self.states = guide, [guide.start] * n_rows

    def mask(self, logits: np.ndarray, done: np.ndarray) -> np.ndarray:
        """[B, V] logits -> [B, V], each live row masked by its own state."""
        return np.stack([row if d else mask_logits(row, self.guide.allowed(s))
                         for row, s, d in zip(logits, self.states, done)])   # [B, V]

    def advance(self, tokens: np.ndarray, done: np.ndarray) -> np.ndarray:
        """Move the live rows on; returns [B] bool: the rows whose text is now finished."""
        ended = np.zeros(len(tokens), dtype=bool)                            # [B]
        for b, (t, d) in enumerate(zip(tokens, done)):
            if not d and int(t) not in self.guide.eos_ids:
                self.states[b] = self.guide.advance(self.states[b], int(t))
                ended[b] = self.guide.is_finished(self.states[b])
        return ended


class BeamGuides:
    """One guide state per beam (``beam_search(..., constraint=)``). The beams' log-probs stay
    the model's own (Σ log p of the raw distribution, as without a constraint); the mask only
    sets the tokens that would leave the pattern to -inf. A candidate whose text is finished
    (nothing can extend it) ends its beam, as a stop id does."""

    def __init__(self, model, constraint, tokenizer, stops, n_beams: int):
        from minillm.decoding.generate_args import constraint_guide
        self.guide = constraint_guide(constraint, tokenizer, frozenset(int(i) for i in stops))
        self.states = [self.guide.start] * n_beams

    def mask(self, logp: np.ndarray) -> np.ndarray:
        """[live, V] log-probs -> [live, V], each beam's disallowed tokens at -inf."""
        return np.stack([mask_logits(row, self.guide.allowed(s)) for row, s in zip(logp, self.states)])

    def finishes(self, beams: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        """[n] bool: does token t after beam b complete the text (only allowed pairs are asked)?"""
        return np.array([int(t) not in self.guide.eos_ids and self.guide.is_finished(
            self.guide.advance(self.states[b], int(t))) for b, t in zip(beams, tokens)], dtype=bool)

    def follow(self, beams: np.ndarray, tokens: np.ndarray) -> None:
        """The kept candidates become the running beams (row r continues beam ``beams[r]``)."""
        self.states = [self.guide.advance(self.states[b], int(t)) for b, t in zip(beams, tokens)] \
            + [self.guide.start] * (len(self.states) - len(beams))
