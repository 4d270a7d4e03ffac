"""Variants of the exercises of notebooks 01 (BPE), 02 (embeddings) and 08 (window, cost)."""
import numpy as np

from .common import SOLUTIONS as S, Attempt, forgets_return, in_float32

INF = float("inf")


def merge_at(parts, i):
    return [*parts[:i], parts[i] + parts[i + 1], *parts[i + 2:]]


def step_by_min(parts, ranks):                # the lowest (rank, position) in one min
    if len(parts) < 2:
        return list(parts)
    i = min(range(len(parts) - 1), key=lambda i: (ranks.get(parts[i] + parts[i + 1], INF), i))
    return merge_at(parts, i) if parts[i] + parts[i + 1] in ranks else list(parts)


def first_mergeable(parts, ranks):            # ignores the ranks' order
    for i in range(len(parts) - 1):
        if parts[i] + parts[i + 1] in ranks:
            return merge_at(parts, i)
    return list(parts)


def rightmost_of_ties(parts, ranks):
    pairs = [(ranks.get(a + b, INF), -i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
    if not pairs or min(pairs)[0] == INF:
        return list(parts)
    return merge_at(parts, -min(pairs)[1])


def every_occurrence(parts, ranks):           # merges the best pair everywhere in one step
    best = min((ranks[a + b], a, b) for a, b in zip(parts, parts[1:]) if a + b in ranks) \
        if any(a + b in ranks for a, b in zip(parts, parts[1:])) else None
    if best is None:
        return list(parts)
    out, i = [], 0
    while i < len(parts):
        if i + 1 < len(parts) and (parts[i], parts[i + 1]) == best[1:]:
            out.append(parts[i] + parts[i + 1])
            i += 2
        else:
            out.append(parts[i])
            i += 1
    return out


def bytes_of(word):
    return [word[i:i + 1] for i in range(len(word))]


def merge_until_done(step):
    def bpe(word, ranks):
        parts = bytes_of(word)
        while (merged := step(parts, ranks)) != parts:
            parts = merged
        return parts
    return bpe


VARIANTS = {
    "bpe_merge_step": (
        [Attempt("the solution", S["bpe_merge_step"]),
         Attempt("one min over (rank, position)", step_by_min),
         Attempt("returns a tuple", lambda p, r: tuple(S["bpe_merge_step"](p, r)))],
        [Attempt("merges the first pair that has a rank", first_mergeable,
                 hint="take the pair with the LOWEST rank"),
         Attempt("merges the rightmost of two equal pairs", rightmost_of_ties),
         Attempt("merges every occurrence of the best pair at once", every_occurrence),
         Attempt("returns the joined bytes", lambda p, r: b"".join(S["bpe_merge_step"](p, r)),
                 says="you returned a bytes"),
         forgets_return(S["bpe_merge_step"])]),
    "bpe_merge": (
        [Attempt("the solution", S["bpe_merge"]),
         Attempt("a loop over the one-min step", merge_until_done(step_by_min)),
         Attempt("returns a tuple", lambda w, r: tuple(S["bpe_merge"](w, r)))],
        [Attempt("repeats the first-mergeable step", merge_until_done(first_mergeable)),
         Attempt("stops after one merge", lambda w, r: S["bpe_merge_step"](bytes_of(w), r)),
         Attempt("splits the decoded text into characters", lambda w, r: list(w.decode()),
                 says="holding str"),
         forgets_return(S["bpe_merge"])]),
    "embedding_lookup": (
        [Attempt("the solution", S["embedding_lookup"]),
         Attempt("one-hot rows times wte", lambda wte, ids: np.eye(len(wte))[ids] @ wte),
         Attempt("np.take in float32", in_float32(lambda wte, ids: np.take(wte, ids, axis=0))),
         Attempt("a list of rows", lambda wte, ids: [wte[i] for i in ids])],
        [Attempt("the first T rows", lambda wte, ids: wte[:len(ids)]),
         Attempt("columns instead of rows", lambda wte, ids: wte[:, np.asarray(ids) % wte.shape[1]].T),
         Attempt("ids off by one", lambda wte, ids: wte[np.asarray(ids) - 1]),
         forgets_return(S["embedding_lookup"])]),
    "cosine_similarity": (
        [Attempt("the solution", S["cosine_similarity"]),
         Attempt("float32 with sums of squares", in_float32(
             lambda a, b: np.sum(a * b) / np.sqrt(np.sum(a * a) * np.sum(b * b)))),
         Attempt("a 0-d array", lambda a, b: np.asarray(S["cosine_similarity"](a, b)))],
        [Attempt("the dot product alone", lambda a, b: float(a @ b),
                 hint="divide the dot product by both lengths"),
         Attempt("divides by the sum of the lengths",
                 lambda a, b: a @ b / (np.linalg.norm(a) + np.linalg.norm(b))),
         Attempt("the cosine distance", lambda a, b: 1 - S["cosine_similarity"](a, b)),
         Attempt("an array of one", lambda a, b: np.array([S["cosine_similarity"](a, b)]),
                 says="a single value"),
         forgets_return(S["cosine_similarity"])]),
    "sliding_window": (
        [Attempt("the solution", S["sliding_window"]),
         Attempt("from max(0, len − n)", lambda ids, n: ids[max(0, len(ids) - n):]),
         Attempt("an int32 array", lambda ids, n: np.array(ids, dtype=np.int32)[-n:]),
         Attempt("a tuple", lambda ids, n: tuple(ids[-n:]))],
        [Attempt("the first n_ctx", lambda ids, n: ids[:n], hint="those are the FIRST n_ctx ids"),
         Attempt("from len − n, negative when shorter", lambda ids, n: ids[len(ids) - n:]),
         Attempt("one too few", lambda ids, n: ids[len(ids) - n + 1:]),
         forgets_return(S["sliding_window"])]),
    "estimate_cost": (
        [Attempt("the solution", S["estimate_cost"]),
         Attempt("one division at the end", lambda a, b, p, q: (a * p + b * q) / 1_000_000),
         Attempt("a NumPy float", lambda a, b, p, q: np.float64(a) / 1e6 * p + np.float64(b) / 1e6 * q)],
        [Attempt("forgets per million", lambda a, b, p, q: a * p + b * q,
                 hint="the prices are per million tokens"),
         Attempt("swaps the prices", lambda a, b, p, q: (a * q + b * p) / 1e6),
         Attempt("every token at the input price", lambda a, b, p, q: (a + b) * p / 1e6),
         Attempt("per thousand", lambda a, b, p, q: (a * p + b * q) / 1000),
         forgets_return(S["estimate_cost"])]),
}
