"""Variants of the exercises of notebooks 04 (the loop, targets) and 07 (beam search)."""
import numpy as np

from .common import SOLUTIONS as S, Attempt, forgets_return, in_float32


def greedy(next_logits, prompt, n, feed=lambda ids: ids, pick=np.argmax, keep_prompt=False):
    ids = list(prompt)
    for _ in range(n):
        ids.append(int(pick(next_logits(feed(ids)))))
    return ids if keep_prompt else ids[len(prompt):]


def beam_by_argsort(scores, logprobs, beam_size, kind="stable", add_scores=True, worst=False):
    total = (scores[:, None] if add_scores else 0) + logprobs          # [B, V]
    flat = np.argsort(total.ravel() if worst else -total.ravel(), kind=kind)[:beam_size]
    V = logprobs.shape[1]
    return [(int(i // V), int(i % V), float(total.flat[i])) for i in flat]


def beam_by_argpartition(scores, logprobs, beam_size):   # the k best, in argpartition's order
    total = scores[:, None] + logprobs
    flat = np.argpartition(-total.ravel(), beam_size - 1)[:beam_size]
    V = logprobs.shape[1]
    return [(int(i // V), int(i % V), float(total.flat[i])) for i in flat]


def beam_by_sorted_argpartition(scores, logprobs, beam_size):
    total = (scores[:, None] + logprobs).ravel()
    flat = np.argpartition(-total, beam_size - 1)[:beam_size]
    flat = flat[np.argsort(-total[flat], kind="stable")]                 # then sorted, best first
    V = logprobs.shape[1]
    return [(int(i // V), int(i % V), float(total[i])) for i in flat]


def beam_per_row(scores, logprobs, beam_size):       # each beam's best token: not a beam search
    best = [(b, int(np.argmax(lp)), float(scores[b] + lp.max())) for b, lp in enumerate(logprobs)]
    return sorted(best, key=lambda c: -c[2])[:beam_size]


def picked(logprobs, ids):
    return logprobs[np.arange(len(ids)), ids]           # [T]


VARIANTS = {
    "greedy_loop": (
        [Attempt("the solution", S["greedy_loop"]),
         Attempt("an int32 array", lambda f, p, n: np.array(greedy(f, p, n), dtype=np.int32)),
         Attempt("feeds an array of ids", lambda f, p, n: greedy(f, p, n, feed=np.array)),
         Attempt("a tuple", lambda f, p, n: tuple(greedy(f, p, n)))],
        [Attempt("always feeds the prompt alone", lambda f, p, n: [int(np.argmax(f(list(p)))) for _ in range(n)],
                 says="your call 2 passed ids"),
         Attempt("returns the prompt too", lambda f, p, n: greedy(f, p, n, keep_prompt=True),
                 says="you returned shape"),
         Attempt("feeds all but the last id", lambda f, p, n: greedy(f, p, n, feed=lambda ids: ids[:-1] or ids)),
         Attempt("argmin", lambda f, p, n: greedy(f, p, n, pick=np.argmin)),
         forgets_return(S["greedy_loop"])]),
    "shift_targets": (
        [Attempt("the solution: a tuple", S["shift_targets"]),
         Attempt("a list of two lists", lambda ids: [ids[:-1], ids[1:]]),
         Attempt("two int64 arrays", lambda ids: (np.array(ids[:-1]), np.array(ids[1:]))),
         Attempt("a tuple of tuples", lambda ids: (tuple(ids[:-1]), tuple(ids[1:])))],
        [Attempt("the ids twice", lambda ids: (ids, ids), hint="the targets are the inputs shifted by one"),
         Attempt("inputs and targets swapped", lambda ids: (ids[1:], ids[:-1])),
         Attempt("targets shifted by two", lambda ids: (ids[:-2], ids[2:])),
         Attempt("the targets alone", lambda ids: ids[1:], says="expected a pair (inputs, targets)"),
         forgets_return(S["shift_targets"])]),
    "beam_step": (
        [Attempt("the solution", S["beam_step"]),
         Attempt("np.argsort, quicksort", lambda s, lp, k: beam_by_argsort(s, lp, k, kind="quicksort")),
         Attempt("np.argpartition, then sorted", beam_by_sorted_argpartition),
         Attempt("float32", in_float32(S["beam_step"])),
         Attempt("an array of triples", lambda s, lp, k: np.array(beam_by_argsort(s, lp, k)))],
        [Attempt("each beam's best token", beam_per_row, hint="that is each beam's best token"),
         Attempt("forgets the beams' scores", lambda s, lp, k: beam_by_argsort(s, lp, k, add_scores=False)),
         Attempt("the worst first", lambda s, lp, k: beam_by_argsort(s, lp, k, worst=True)),
         Attempt("one too many", lambda s, lp, k: beam_by_argsort(s, lp, k + 1), says="expected a list of beam_size"),
         Attempt("np.argpartition, not sorted", beam_by_argpartition, hint="the right beams in the wrong order"),
         forgets_return(S["beam_step"])]),
    "sequence_logprob": (
        [Attempt("the solution", S["sequence_logprob"]),
         Attempt("fancy indexing, a NumPy float", lambda lp, ids: picked(lp, ids).sum()),
         Attempt("float32", in_float32(lambda lp, ids: picked(lp, ids).sum())),
         Attempt("the log of the product", lambda lp, ids: float(np.log(np.prod(np.exp(picked(lp, ids))))))],
        [Attempt("the mean", lambda lp, ids: float(picked(lp, ids).mean()), hint="a sum over t, not a mean"),
         Attempt("the product of probabilities", lambda lp, ids: float(np.exp(picked(lp, ids)).prod())),
         Attempt("the best token's log p at each step", lambda lp, ids: float(lp.max(axis=1).sum())),
         Attempt("the whole table", lambda lp, ids: lp[:, ids], says="you returned"),
         forgets_return(S["sequence_logprob"])]),
}

