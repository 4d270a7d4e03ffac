"""Exercises of notebooks 04 (the loop, training targets) and 07 (beam search)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .core import Exercise, arrays_differ, fmt


class ToyModel:
    """A tiny deterministic "model": next_logits(ids) depends on the last id and the length.
    It records every call, so the check can see what the loop fed it."""

    def __init__(self, seed: int, V: int):
        rng = np.random.default_rng(seed)
        self.seed, self.V = seed, V
        self.bigram = rng.normal(size=(V, V))                   # [V, V]
        self.by_length = rng.normal(size=(5, V))                # [5, V]
        self.calls: list[list[int]] = []

    def __call__(self, ids) -> np.ndarray:
        ids = [int(i) for i in ids]
        self.calls.append(ids)
        return self.bigram[ids[-1]] + self.by_length[len(ids) % 5]   # [V]


def greedy_reference(model, prompt, n):
    ids = list(prompt)
    for _ in range(n):
        ids.append(int(np.argmax(model(ids))))
    return ids[len(prompt):]


def judge_greedy(fn, case):
    seed, V, prompt, n = case
    want = greedy_reference(ToyModel(seed, V), prompt, n)
    model = ToyModel(seed, V)
    got = [int(i) for i in fn(model, list(prompt), n)]
    for i, call in enumerate(model.calls[:n]):
        if call != list(prompt) + want[:i]:
            return (f"for prompt {prompt} (toy model {seed}, V = {V}) your call {i + 1} passed ids "
                    f"{call}; it must pass the prompt plus every token chosen so far: "
                    f"{list(prompt) + want[:i]}")
    if got != want:
        return (f"for prompt {prompt} and n = {n} (toy model {seed}, V = {V}) you returned "
                f"{got}; taking the argmax and appending it, {n} times, gives {want}")
    return None


def judge_shift(fn, ids):
    got = fn(list(ids))
    want = (ids[:-1], ids[1:])
    if not isinstance(got, tuple) or [list(g) for g in got] != [list(w) for w in want]:
        return (f"for ids {ids} you returned {got}; position t reads ids[:t + 1] and must "
                f"predict ids[t + 1]: inputs {want[0]}, targets {want[1]}")
    return None


def beam_reference(scores, logprobs, beam_size):
    total = scores[:, None] + logprobs                           # [B, V]
    flat = sorted(range(total.size), key=lambda i: (-total.flat[i], i))[:beam_size]
    V = logprobs.shape[1]
    return [(i // V, i % V, float(total.flat[i])) for i in flat]


def judge_beam(fn, case):
    scores, logprobs, beam_size = case
    want = beam_reference(scores, logprobs, beam_size)
    got = [(int(b), int(t), float(s)) for b, t, s in fn(scores.copy(), logprobs.copy(), beam_size)]
    if [g[:2] for g in got] != [w[:2] for w in want] or arrays_differ([g[2] for g in got], [w[2] for w in want]):
        show = lambda beams: ", ".join(f"(beam {b}, token {t}, {s:.3f})" for b, t, s in beams)
        return (f"for beam scores {fmt(scores)}, log-probs {np.round(logprobs, 3).tolist()} and "
                f"beam_size {beam_size} you kept {show(got)}; the {beam_size} best of all "
                f"{logprobs.size} extensions (score + log p) are {show(want)}")
    return None


def judge_seq_logprob(fn, case):
    logprobs, ids = case
    want = float(logprobs[np.arange(len(ids)), ids].sum())
    got = fn(logprobs.copy(), list(ids))
    if arrays_differ(got, want):
        return (f"for log-probs {np.round(logprobs, 3).tolist()} and ids {ids} you returned "
                f"{fmt(got)}; Σ_t log p(ids[t]) = {fmt(want)} (a sum: the probability of the "
                f"whole sequence is the product)")
    return None


def beam_case(seed, B, V, beam_size):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(B, V)) * 2
    logprobs = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.sort(rng.random(B) * 3), logprobs, min(beam_size, B * V)


def seq_case(seed, T, V):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(T, V))
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True)), rng.integers(0, V, T).tolist()


EXERCISES = [
    Exercise("greedy_loop", "greedy(next_logits, prompt, n) -> n new ids: call next_logits(ids) "
             "on everything so far, append the argmax, repeat.", judge_greedy,
             lambda c: f"toy model {c[0]}, prompt {c[2]}, n = {c[3]}",
             st.integers(2, 6).flatmap(lambda V: st.tuples(
                 st.integers(0, 999), st.just(V), st.lists(st.integers(0, V - 1), min_size=1, max_size=3),
                 st.integers(1, 6))),
             ((0, 4, [1], 4),)),
    Exercise("shift_targets", "shift(ids) -> (inputs, targets): the training pairs of one "
             "sequence, position t reads inputs[:t + 1] and predicts targets[t].", judge_shift,
             str, st.lists(st.integers(0, 99), min_size=2, max_size=8), ([5, 7, 9],)),
    Exercise("beam_step", "beam_step(scores [B], logprobs [B, V], beam_size) -> the beam_size best "
             "(beam, token, score + logprob) of all B·V extensions, best first (ties: lower "
             "beam·V + token).", judge_beam, lambda c: f"B = {len(c[0])}, beam_size {c[2]}",
             st.builds(beam_case, st.integers(0, 999), st.integers(1, 3), st.integers(2, 5), st.integers(1, 4)),
             (beam_case(3, 2, 3, 2), beam_case(5, 3, 4, 3))),
    Exercise("sequence_logprob", "seq_logprob(logprobs [T, V], ids [T]) -> Σ_t logprobs[t, ids[t]].",
             judge_seq_logprob, lambda c: f"ids {c[1]}",
             st.builds(seq_case, st.integers(0, 999), st.integers(1, 5), st.integers(2, 5)),
             (seq_case(0, 3, 3),)),
]
