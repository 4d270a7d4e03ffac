"""Exercises of notebooks 04 (the loop, training targets) and 07 (beam search)."""
from __future__ import annotations

import contextlib

import numpy as np
from hypothesis import strategies as st

from .core import Exercise, Hint, Wrong, arrays_differ, as_array, as_ids, as_number, as_pair, fmt, kind, output_hint


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
    got = as_ids(fn(model, list(prompt)[:], n), n, "new ids")
    for i, call in enumerate(model.calls[:n]):
        if call != list(prompt) + want[:i]:
            return (f"your call {i + 1} passed ids {call}; it must pass the prompt plus every "
                    f"token chosen so far: {list(prompt) + want[:i]}")
    if got != want:
        return f"you returned {got}; taking the argmax and appending it, {n} times, gives {want}"
    return None


def judge_shift(fn, ids):
    pair = as_pair(fn(list(ids)), "a pair (inputs, targets)")
    if any(np.ndim(part) != 1 for part in pair):
        raise Wrong(f"you returned {fmt(pair) if np.ndim(pair) == 1 else pair!r}; expected a pair "
                    f"(inputs, targets), each a list of ids")
    got = [as_ids(part, what=what) for part, what in zip(pair, ("inputs", "targets"))]
    want = [ids[:-1], ids[1:]]
    if got != want:
        return (f"you returned inputs {got[0]}, targets {got[1]}; position t reads ids[:t + 1] and "
                f"must predict ids[t + 1]: inputs {want[0]}, targets {want[1]}")
    return None


def beam_reference(scores, logprobs, beam_size):
    total = scores[:, None] + logprobs                           # [B, V]
    flat = sorted(range(total.size), key=lambda i: (-total.flat[i], i))[:beam_size]
    V = logprobs.shape[1]
    return [(i // V, i % V, float(total.flat[i])) for i in flat]


def as_beams(got, beam_size, shape) -> list[tuple[int, int, float]]:
    """A sequence of beam_size (beam, token, score) triples with beam, token in range, else Wrong."""
    if not isinstance(got, (list, tuple, np.ndarray)) or len(got) != beam_size:
        raise Wrong(f"you returned {kind(got)}; expected a list of beam_size = {beam_size} "
                    f"(beam, token, score) triples")
    beams = [tuple(as_array(g, (3,), "a (beam, token, score) triple")) for g in got]
    for b, t, _ in beams:
        if not (b == int(b) and t == int(t) and 0 <= b < shape[0] and 0 <= t < shape[1]):
            raise Wrong(f"you returned the triple ({fmt(b)}, {fmt(t)}, …); beam < {shape[0]} and "
                        f"token < {shape[1]} are whole numbers")
    return [(int(b), int(t), float(s)) for b, t, s in beams]


@contextlib.contextmanager
def argpartition_in_another_order():
    """np.argpartition returning another valid answer: the elements on each side of kth reversed.

    NumPy promises only the partition (the k best before kth, in no particular order); at small
    sizes it happens to return them sorted, so an answer relying on that order would pass by luck.
    The grader runs beam_step once more under this one, which keeps the promise and nothing more.
    """
    original = np.argpartition

    def reordered(a, kth, axis=-1, kind="introselect", order=None):
        idx = original(a, kth, axis=axis, kind=kind, order=order)
        if axis is None or np.ndim(kth) or np.ndim(idx) != 1:
            return idx
        k = int(kth) % len(idx)
        return np.concatenate([idx[:k][::-1], idx[k:k + 1], idx[k + 1:][::-1]])

    np.argpartition = reordered
    try:
        yield
    finally:
        np.argpartition = original


def judge_beam(fn, case):
    scores, logprobs, beam_size = case
    want = beam_reference(scores, logprobs, beam_size)
    got = as_beams(fn(scores.copy(), logprobs.copy(), beam_size), beam_size, logprobs.shape)
    with argpartition_in_another_order():
        again = as_beams(fn(scores.copy(), logprobs.copy(), beam_size), beam_size, logprobs.shape)
    if [g[:2] for g in again] != [g[:2] for g in got]:
        got = again                                  # the order came from np.argpartition's luck
    total = scores[:, None] + logprobs                           # [B, V]
    true_scores = [total[b, t] for b, t, _ in got]
    if (arrays_differ([g[2] for g in got], true_scores) or arrays_differ(true_scores, [w[2] for w in want])
            or len({g[:2] for g in got}) != beam_size):
        show = lambda beams: ", ".join(f"(beam {b}, token {t}, {s:.3f})" for b, t, s in beams)
        return (f"you kept {show(got)}; the {beam_size} best of all {logprobs.size} extensions "
                f"(score + log p), best first, are {show(want)}")
    return None


def same_beams_other_order(case, got) -> bool:
    want = [w[:2] for w in beam_reference(*case)]
    mine = [tuple(int(x) for x in g[:2]) for g in got]
    return sorted(mine) == sorted(want) and mine != want


def beam_per_row(scores, logprobs, beam_size):
    """The bug the beam hint names: each beam's own best token, not the best of all extensions."""
    best = [(b, int(np.argmax(lp)), float(scores[b] + lp.max())) for b, lp in enumerate(logprobs)]
    return sorted(best, key=lambda c: -c[2])[:beam_size]


def judge_seq_logprob(fn, case):
    logprobs, ids = case
    want = float(logprobs[np.arange(len(ids)), ids].sum())
    got = as_number(fn(logprobs.copy(), list(ids)), "the log-probability, a number")
    if arrays_differ(got, want):
        return (f"you returned {fmt(got)}; Σ_t log p(ids[t]) = {fmt(want)} (a sum: the probability "
                f"of the whole sequence is the product)")
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
             lambda c: f"prompt {c[2]}, n = {c[3]} (toy model {c[0]}, V = {c[1]})",
             st.integers(2, 6).flatmap(lambda V: st.tuples(
                 st.integers(0, 999), st.just(V), st.lists(st.integers(0, V - 1), min_size=1, max_size=3),
                 st.integers(1, 6))),
             ((0, 4, [1], 4),)),
    Exercise("shift_targets", "shift(ids) -> (inputs, targets): the training pairs of one "
             "sequence, position t reads inputs[:t + 1] and predicts targets[t].", judge_shift,
             lambda ids: f"ids {ids}", st.lists(st.integers(0, 99), min_size=2, max_size=8), ([5, 7, 9],),
             (output_hint("the targets are the inputs shifted by one: targets[t] = ids[t + 1]",
                          lambda ids: (ids, ids)),)),
    Exercise("beam_step", "beam_step(scores [B], logprobs [B, V], beam_size) -> the beam_size best "
             "(beam, token, score + logprob) of all B·V extensions, best first (equal scores in "
             "any order).", judge_beam,
             lambda c: f"beam scores {fmt(c[0])}, log-probs {np.round(c[1], 3).tolist()}, beam_size {c[2]}",
             st.builds(beam_case, st.integers(0, 999), st.integers(1, 3), st.integers(2, 5), st.integers(1, 4)),
             (beam_case(3, 2, 3, 2), beam_case(5, 3, 4, 3)),
             (output_hint("that is each beam's best token: rank all B·V extensions together",
                          lambda c: beam_per_row(*c)),
              Hint("the right beams in the wrong order: np.argpartition leaves the k best in no "
                   "particular order (sorted at small sizes only by chance); sort them, best first",
                   lambda c, got: same_beams_other_order(c, got)))),
    Exercise("sequence_logprob", "seq_logprob(logprobs [T, V], ids [T]) -> Σ_t logprobs[t, ids[t]].",
             judge_seq_logprob, lambda c: f"log-probs {np.round(c[0], 3).tolist()}, ids {c[1]}",
             st.builds(seq_case, st.integers(0, 999), st.integers(1, 5), st.integers(2, 5)),
             (seq_case(0, 3, 3),),
             (output_hint("a sum over t, not a mean", lambda c: float(np.mean(c[0][np.arange(len(c[1])), c[1]]))),)),
]
