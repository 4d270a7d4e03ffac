"""Variants of the exercises of notebook 18 (the logit lens, the prefix-matching score)."""
import numpy as np

from .common import SOLUTIONS as S, Attempt, as_list, forgets_return, in_float32


def lens_by_loops(resid, w, head, eps):           # one vector at a time
    out = np.zeros(resid.shape[:2] + (head.shape[1],))
    for l in range(resid.shape[0]):
        for t in range(resid.shape[1]):
            h = resid[l, t]
            out[l, t] = h / np.sqrt(h @ h / len(h) + eps) * w @ head
    return out


def lens_einsum(resid, w, head, eps):             # the weight folded into the head
    inv = 1 / np.sqrt((resid ** 2).mean(-1, keepdims=True) + eps)
    return np.einsum("ltc,cv->ltv", resid * inv, w[:, None] * head)


def prefix_by_loops(pattern, n):
    return [sum(pattern[h, t, t - n + 1] for t in range(n, 2 * n)) / n for h in range(len(pattern))]


def prefix_diagonal(pattern, n):                  # the (n − 1)-th sub-diagonal, second half
    return np.array([np.diagonal(p, offset=-(n - 1))[1:].mean() for p in pattern])


VARIANTS = {
    "logit_lens": (
        [Attempt("the solution", S["logit_lens"]),
         Attempt("one vector at a time", lens_by_loops),
         Attempt("the weight folded into the head", lens_einsum),
         Attempt("float32", in_float32(S["logit_lens"])),
         Attempt("nested lists", as_list(S["logit_lens"]))],
        [Attempt("no norm", lambda r, w, h, e: r @ h, hint="apply the final norm before the head"),
         Attempt("forgets the weight", lambda r, w, h, e: r / np.sqrt((r * r).mean(-1, keepdims=True) + e) @ h,
                 hint="multiply by the norm's weight w"),
         Attempt("eps outside the root", lambda r, w, h, e: r / (np.sqrt((r * r).mean(-1, keepdims=True)) + e) * w @ h,
                 hint="eps goes inside the square root"),
         Attempt("LayerNorm's centring", lambda r, w, h, e: S["logit_lens"](r - r.mean(-1, keepdims=True), w, h, e),
                 hint="RMSNorm does not subtract the mean"),
         Attempt("one RMS for the whole array", lambda r, w, h, e: r / np.sqrt((r * r).mean() + e) * w @ h,
                 hint="normalise each vector alone"),
         Attempt("softmax probabilities", lambda r, w, h, e: np.exp(S["logit_lens"](r, w, h, e)) /
                 np.exp(S["logit_lens"](r, w, h, e)).sum(-1, keepdims=True)),
         forgets_return(S["logit_lens"])]),
    "prefix_matching": (
        [Attempt("the solution", S["prefix_matching"]),
         Attempt("loops, a list", prefix_by_loops),
         Attempt("a diagonal of each head", prefix_diagonal),
         Attempt("float32", in_float32(S["prefix_matching"]))],
        [Attempt("the token's first copy (t − n)", lambda p, n: p[:, np.arange(n, 2 * n), np.arange(0, n)].mean(-1),
                 hint="attend to the key AFTER the first copy"),
         Attempt("from t = n − 1", lambda p, n: p[:, np.arange(n - 1, 2 * n), np.arange(0, n + 1)].mean(-1),
                 hint="average over the second copy's queries only"),
         Attempt("a sum", lambda p, n: p[:, np.arange(n, 2 * n), np.arange(1, n + 1)].sum(-1), hint="a mean, not a sum"),
         Attempt("the mean over heads too", lambda p, n: np.full(len(p), p[:, np.arange(n, 2 * n), np.arange(1, n + 1)].mean())),
         forgets_return(S["prefix_matching"])]),
}
