"""Speculative decoding: guess k tokens cheaply, check them all in ONE forward of the big model.

Decoding one token reads every weight once, so a step costs about the same whether it scores 1
position or k + 1: the weights, not the arithmetic, are the bottleneck. A draft source
(``speculative_drafts``) guesses d₁ … d_k; the target runs once over [last, d₁ … d_k] with its KV
cache, which gives its distributions p₀ … p_k after every prefix; the guesses are checked left to
right, the first rejected one is replaced, and the cache is rolled back past the rest. Each round
yields between 1 and k + 1 tokens for one target forward.

Exactness (Leviathan et al. 2023; Chen et al. 2023). dᵢ was drawn from q (the draft's
distribution at that position); the target's is p. Accept dᵢ with probability min(1, p(dᵢ)/q(dᵢ));
on rejection draw from the residual r = max(0, p − q) / Σ max(0, p − q) and stop. Then

    P(x) = q(x) · min(1, p(x)/q(x)) + (1 − Σ_y min(q(y), p(y))) · r(x)
         = min(q(x), p(x)) + max(0, p(x) − q(x)) = p(x),

because 1 − Σ_y min(q(y), p(y)) = Σ_y max(0, p(y) − q(y)). So every token follows the target's
distribution exactly, whatever the draft: a bad draft only costs speed. When all k are accepted,
one more token is drawn from p_k (the "bonus" token).
- A deterministic draft (prompt lookup, or any draft under greedy sampling) has q one-hot at d:
  accept with probability p(d); on rejection r = p with d removed, renormalised:
  P(x = d) = p(d), P(x ≠ d) = (1 − p(d)) · p(x) / (1 − p(d)) = p(x).
- Greedy (T = 0): p is one-hot at argmax, so dᵢ is accepted iff it IS the argmax, and a rejection
  yields the argmax: the output is plain greedy's, token for token (no randomness is used).
p here is the sampler's final distribution (temperature, top-k, top-p, penalties, ...), and each
position's penalties see the history including the drafts accepted before it.

Back-off: a round whose guesses were all rejected paid for a wider forward for nothing, so the
draft is not asked again for 1, then 2, 4 … 16 plain steps; a round that keeps some guesses
halves the wait, one that keeps them all ends it. Free text, where a guess hits now and then by
chance, then runs at nearly plain speed; copied text drafts at every step. How many guesses to
ask for adapts too (HF assisted generation's "heuristic" schedule): k at first, 2 more after a
round that kept them all (at most k), 1 fewer after one that did not (at least 1) — a missed
single guess costs a 2-position forward, hardly more than a plain step. Which steps draft and
how much depends only on what happened before, so the result stays exact.

Example: ``generate(model, ids, 100, draft="prompt", num_draft_tokens=5, temperature=0)``.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from minillm.decoding.generate_args import GenerationSettings, uses_history
from minillm.decoding.speculative_drafts import check_proposal, make_draft
from minillm.decoding.steps import Step, StepWriter
from minillm.sampling import categorical


def verify(probs_at, drafts: np.ndarray, q: np.ndarray | None, rng, greedy: bool) -> list[int]:
    """Speculative sampling for one round: the accepted drafts, then one target token.

    ``probs_at(i)`` -> the target's distribution [V] after the context and d₁ … dᵢ (i = 0 … k;
    greedy: any [V] whose argmax is the target's pick, e.g. the processed logits);
    ``drafts`` [k]; ``q`` [k, V] (None: each dᵢ was chosen deterministically). Returns
    a + 1 tokens: d₁ … d_a and the replacement (or, if all k passed, a bonus draw from p_k).
    """
    out = []
    for i, d in enumerate(drafts.tolist()):
        p = probs_at(i)                                            # [V]
        if greedy:
            if d != int(np.argmax(p)):
                return out + [int(np.argmax(p))]                   # p is one-hot: its argmax
        elif rng.random() * (1.0 if q is None else q[i, d]) >= p[d]:   # reject: u ≥ p(d)/q(d)
            residual = p.astype(np.float64)                        # [V]
            if q is None:
                residual[d] = 0.0                                  # max(0, p − onehot(d))
            else:
                residual = np.maximum(residual - q[i], 0.0)        # [V] max(0, p − q)
            if not residual.sum() > 0:                             # subtle: only by rounding
                residual = p.astype(np.float64)                    # (p ≈ q): p itself is exact
            return out + [categorical(residual / residual.sum(), rng)]
        out.append(d)
    p = probs_at(len(drafts))                                      # [V] after every draft
    return out + [int(np.argmax(p)) if greedy else categorical(p, rng)]


def speculative_steps(model, prompt, n_new, settings: GenerationSettings, *, cache) -> Iterator[Step]:
    """``generate``'s loop when ``settings.draft`` is given: same arguments (already checked: at
    least one draft token, no sliding window), same Steps."""
    source = make_draft(settings.draft)
    source.start(model, len(prompt) + n_new)
    return _rounds(model, prompt, n_new, settings, cache=cache, source=source)


def _rounds(model, prompt, n_new, settings, *, cache, source) -> Iterator[Step]:
    """Rounds of: draft up to k tokens, ONE target forward over [last, d₁ … d_k'], verify, yield
    the 1 … k' + 1 tokens kept; stops and the cache afterwards as in ``generate``'s ``_steps``."""
    sampler, rng, k = settings.sampler, settings.rng, settings.num_draft_tokens
    P = len(prompt)
    seq = np.empty(P + n_new + k, dtype=np.int64)                  # [P + N + k] context, then drafts
    seq[:P] = prompt
    writer = StepWriter(settings)
    greedy, penalised = sampler.temperature == 0, uses_history(sampler)

    def probs(logits, n):                      # the sampler's distribution after seq[:n]
        seen = seq[:n] if penalised else None  # (greedy: its processed logits, whose argmax
        how = sampler.process if greedy else sampler.probs   # is all verify reads: no softmax)
        return how(logits, history=seen, prompt_len=P)             # [V]

    def choose(logits, n):                     # a draft model's pick, and its q (None: one-hot)
        if greedy:
            return int(np.argmax(sampler.process(logits, seq[:n] if penalised else None, P))), None
        q = probs(logits, n)                                       # [V]
        return categorical(q, rng), q

    if n_new and cache.length < P - 1:
        model(prompt[cache.length:P - 1][None], cache=cache, last_only=True)   # prefill all but the last
    n = wait = backoff = 0                                         # tokens yielded so far
    length = k                                                     # guesses asked for this round
    while n < n_new:
        m = P + n                                                  # seq[:m] is the context
        room = min(length, n_new - n - 1) if wait == 0 else 0      # never draft past max_new_tokens
        wait = max(wait - 1, 0)
        drafts, q = check_proposal(source.propose(seq, m, room, choose), room,
                                   model.config.vocab_size) if room else (seq[:0], None)
        seq[m:m + len(drafts)] = drafts                            # [a] tentatively in the context
        fed = seq[cache.length:m + len(drafts)]                    # [1 + k'] last token + drafts
        logits = model(fed[None], cache=cache)[0, -len(drafts) - 1:]   # [k' + 1, V] ONE forward
        tokens = verify(lambda i: probs(logits[i], m + i), drafts, q, rng, greedy)
        a = len(tokens) - 1                                        # drafts accepted
        if len(drafts):                                            # all wrong: rest 1, 2, 4 … 16
            backoff = (0 if a == len(drafts) else backoff // 2) if a else min(2 * backoff or 1, 16)
            wait = backoff                                         # plain steps before the next guess
            length = min(k, length + 2) if a == len(drafts) else max(1, length - 1)
        cache.rollback(m + a)                                      # forget the rejected ones
        source.record(m, len(drafts), a)
        for i, token in enumerate(tokens):
            if token in settings.stop_ids:
                cache.rollback(min(cache.length, m + i))           # as plain decoding: fed < stop
                if tail := writer.held_text():
                    yield Step(None, tail)                         # held text, released
                return
            seq[m + i] = token
            n += 1
            last = n == n_new
            yield writer.step(token, logits[i], last)
            if last or writer.stopped:
                cache.rollback(min(cache.length, m + i))           # the last token is never fed
                return
