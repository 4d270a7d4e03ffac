"""Variants of the exercises of notebooks 06 (temperature, filters) and 09 (allowed ids, options)."""
import numpy as np

from .common import SOLUTIONS as S, Attempt, as_list, forgets_return, in_float32, naive_softmax, softmax


def keep(z, ids, removed=-np.inf):
    return np.where(np.isin(np.arange(len(z)), ids), z, removed)


def top_k_argsort(z, k):                     # quicksort: ties in any order
    return keep(z, np.argsort(-z)[:k])


def top_k_argpartition(z, k):
    return keep(z, np.argpartition(-z, k - 1)[:k])


def top_p_by(z, p, soft=softmax, crossing=True, sort=True):
    probs = soft(z)
    order = np.argsort(-z) if sort else np.arange(len(z))
    before = np.cumsum(probs[order]) - probs[order]           # mass before each token
    chosen = before < p if crossing else np.cumsum(probs[order]) < p
    chosen[0] = True
    return keep(z, order[chosen])


def log_softmax_exp(z):
    m = z.max()
    return np.exp(z - m - np.log(np.exp(z - m).sum()))


def min_p_by_logs(z, m):
    return np.where(z - z.max() >= np.log(m), z, -np.inf)


VARIANTS = {
    "temperature": (
        [Attempt("the solution", S["temperature"]),
         Attempt("float32", in_float32(S["temperature"])),
         Attempt("a list", as_list(S["temperature"])),
         Attempt("exp of z/T − logsumexp", lambda z, T: log_softmax_exp(z / T))],
        [Attempt("np.exp(z / T) / sum", lambda z, T: naive_softmax(z / T), hint="exp overflowed"),
         Attempt("exp(z / T − max z): the maximum before scaling",
                 lambda z, T: np.exp(z / T - z.max()) / np.exp(z / T - z.max()).sum(),
                 hint="you subtracted max z, the maximum before scaling"),
         Attempt("multiplies by T", lambda z, T: softmax(z * T), hint="divide the logits by T"),
         Attempt("forgets to normalise", lambda z, T: np.exp(z / T - (z / T).max())),
         Attempt("returns the scaled logits", lambda z, T: z / T),
         forgets_return(S["temperature"])]),
    "top_k": (
        [Attempt("the solution: ties to the lower id", S["top_k"]),
         Attempt("np.argsort(-z)[:k], ties in any order", top_k_argsort),
         Attempt("np.argpartition", top_k_argpartition),
         Attempt("−1e9 for the removed", lambda z, k: keep(z, np.argsort(-z, kind="stable")[:k], -1e9)),
         Attempt("a list", as_list(top_k_argsort))],
        [Attempt("keeps every tie of the k-th", lambda z, k: np.where(z >= np.sort(z)[-k], z, -np.inf),
                 says="top-k keeps exactly k"),
         Attempt("keeps k + 1", lambda z, k: keep(z, np.argsort(-z, kind="stable")[:k + 1])),
         Attempt("keeps the k smallest", lambda z, k: keep(z, np.argsort(z, kind="stable")[:k])),
         Attempt("zeros the removed", lambda z, k: keep(z, np.argsort(-z)[:k], 0.0), says="you changed a kept logit"),
         forgets_return(S["top_k"])]),
    "top_p": (
        [Attempt("the solution", S["top_p"]),
         Attempt("np.argsort and the mass before each token", top_p_by),
         Attempt("float32", in_float32(top_p_by)),
         Attempt("a list", as_list(top_p_by))],
        [Attempt("stops before the token that crosses p", lambda z, p: top_p_by(z, p, crossing=False),
                 says="the smallest set with mass"),
         Attempt("a softmax that overflows", lambda z, p: top_p_by(z, p, soft=naive_softmax)),
         Attempt("accumulates in id order, unsorted", lambda z, p: top_p_by(z, p, sort=False)),
         Attempt("returns the probabilities", lambda z, p: np.where(np.isfinite(top_p_by(z, p)), softmax(z), -np.inf),
                 says="you changed a kept logit"),
         forgets_return(S["top_p"])]),
    "min_p": (
        [Attempt("the solution", S["min_p"]),
         Attempt("in log space: z − max ≥ log m", min_p_by_logs),
         Attempt("a list", as_list(S["min_p"]))],
        [Attempt("p ≥ m instead of m · p_max", lambda z, m: np.where(softmax(z) >= m, z, -np.inf),
                 hint="compare with m · p_max"),
         Attempt("a softmax that overflows", lambda z, m: np.where(naive_softmax(z) >= m * naive_softmax(z).max(), z, -np.inf)),
         Attempt("compares logits with m · max logit", lambda z, m: np.where(z >= m * z.max(), z, -np.inf)),
         forgets_return(S["min_p"])]),
    "allow_only": (
        [Attempt("the solution", S["allow_only"]),
         Attempt("np.where with np.isin", lambda z, a: keep(z, a)),
         Attempt("−1e9 for the others", lambda z, a: keep(z, a, -1e9)),
         Attempt("a list", as_list(S["allow_only"]))],
        [Attempt("0 for the others", lambda z, a: keep(z, a, 0.0), says="you changed a kept logit"),
         Attempt("−1e-9 for the others (a typo for −1e9)", lambda z, a: keep(z, a, -1e-9),
                 says="which is almost 0: that keeps the token"),
         Attempt("removes the allowed ones", lambda z, a: np.where(np.isin(np.arange(len(z)), a), -np.inf, z)),
         Attempt("ids off by one", lambda z, a: keep(z, np.asarray(a) + 1)),
         forgets_return(S["allow_only"])]),
    "option_probs": (
        [Attempt("the solution", S["option_probs"]),
         Attempt("softmax of the allowed logits, then the options", lambda z, ids: softmax(keep(z, ids))[ids]),
         Attempt("float32", in_float32(S["option_probs"])),
         Attempt("a list", as_list(S["option_probs"]))],
        [Attempt("not renormalised: softmax over all", lambda z, ids: softmax(z)[ids],
                 hint="renormalise over the options only"),
         Attempt("a softmax that overflows", lambda z, ids: naive_softmax(z[ids]), hint="exp overflowed"),
         Attempt("the options' logits", lambda z, ids: z[ids]),
         Attempt("the whole distribution", lambda z, ids: softmax(keep(z, ids)), says="you returned shape"),
         forgets_return(S["option_probs"])]),
}
