"""Variants of the exercises of notebooks 03 (attention, the block) and 05 (the KV cache)."""
import numpy as np

from .common import SOLUTIONS as S, Attempt, as_list, forgets_return, in_float32, naive_softmax, softmax


def logsumexp_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return np.exp(x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))


def additive_mask(T, S_=None, big=-np.inf):
    S_ = T if S_ is None else S_
    return np.where(np.tril(np.ones((T, S_), bool), k=S_ - T), 0.0, big)


def attention(q, k, v, scale=True, mask="causal", soft=softmax, after=False):
    T, D = q.shape
    scores = q @ k.T / (np.sqrt(D) if scale else 1)                    # [T, T]
    visible = np.tril(np.ones((T, len(k)), bool), k=1 if mask == "off by one" else 0)
    if mask and not after:
        scores = scores + np.where(visible, 0.0, -1e9)
    weights = soft(scores)
    if after:
        weights = weights * visible                                    # not renormalised
    return weights @ v


def layer_norm(x, w, b, eps, axis=-1, ddof=0, eps_inside=True, affine=True):
    mu = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, ddof=ddof, keepdims=True)
    y = (x - mu) / (np.sqrt(var + eps) if eps_inside else np.sqrt(var) + eps)
    return y * w + b if affine else y


def softmax_in_place(x):
    """Right values, but the input is overwritten: the caller's scores are gone."""
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


def layer_norm_in_place(x, w, b, eps):
    x -= x.mean(axis=-1, keepdims=True)                                # the caller's x is centred now
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * w + b


def append_preallocated(K, V, k, v):
    keys, values = np.empty((len(K) + len(k), K.shape[1])), np.empty((len(V) + len(v), V.shape[1]))
    keys[:len(K)], keys[len(K):], values[:len(V)], values[len(V):] = K, k, V, v
    return keys, values


def cached_mask_by_positions(T, S_):
    t = np.arange(T)[:, None] + S_ - T                                # [T, 1] query positions
    return np.arange(S_)[None, :] <= t                                  # [T, S]


VARIANTS = {
    "softmax": (
        [Attempt("the solution", S["softmax"]),
         Attempt("float32", in_float32(S["softmax"])),
         Attempt("exp of x − logsumexp", logsumexp_softmax),
         Attempt("a list", as_list(S["softmax"]))],
        [Attempt("exp without subtracting the max", naive_softmax, hint="exp overflowed"),
         Attempt("subtracts the maximum of the whole array", lambda x: np.exp(x - x.max()) / np.exp(x - x.max()).sum(-1, keepdims=True),
                 hint="you subtracted the maximum of the whole array"),
         Attempt("divides by the sum of the whole array",
                 lambda x: np.exp(x - x.max(-1, keepdims=True)) / np.exp(x - x.max(-1, keepdims=True)).sum(),
                 hint="each row must sum to 1"),
         Attempt("normalises over the first axis", lambda x: softmax(x, axis=0),
                 hint="each row must sum to 1"),
         Attempt("forgets to divide by the sum", lambda x: np.exp(x - x.max(-1, keepdims=True))),
         Attempt("right values, computed in its input (x -= …)", softmax_in_place,
                 says="changed its input x in place"),
         forgets_return(S["softmax"])]),
    "causal_mask": (
        [Attempt("the solution: bool", S["causal_mask"]),
         Attempt("additive 0 / −inf", additive_mask),
         Attempt("additive 0 / −1e9", lambda T: additive_mask(T, big=-1e9)),
         Attempt("int8 0/1", lambda T: np.tril(np.ones((T, T), np.int8))),
         Attempt("a list of lists", as_list(S["causal_mask"]))],
        [Attempt("one diagonal too many", lambda T: np.tril(np.ones((T, T), bool), k=1)),
         Attempt("transposed: upper triangle", lambda T: np.triu(np.ones((T, T), bool))),
         Attempt("hides the diagonal", lambda T: np.tril(np.ones((T, T), bool), k=-1)),
         Attempt("additive with −inf where it should be 0",
                 lambda T: np.where(np.tril(np.ones((T, T), bool)), -np.inf, 0.0)),
         Attempt("a mask of 2s", lambda T: 2 * np.tril(np.ones((T, T))), says="a mask holding"),
         Attempt("triu(ones, 1) * -inf: 0 · −inf is nan", lambda T: np.triu(np.ones((T, T)), 1) * -np.inf,
                 says="0 · (−inf) is nan"),
         forgets_return(S["causal_mask"])]),
    "attention_head": (
        [Attempt("the solution", S["attention_head"]),
         Attempt("float32", in_float32(S["attention_head"])),
         Attempt("additive −1e9 mask", attention),
         Attempt("a list", as_list(S["attention_head"]))],
        [Attempt("no mask", lambda q, k, v: attention(q, k, v, mask=None), hint="that is attention WITHOUT"),
         Attempt("no 1/√D", lambda q, k, v: attention(q, k, v, scale=False), hint="that is attention without dividing"),
         Attempt("masks the weights after the softmax", lambda q, k, v: attention(q, k, v, after=True),
                 hint="masking the weights after the softmax"),
         Attempt("a softmax that overflows", lambda q, k, v: attention(q, k, v, soft=naive_softmax),
                 hint="exp overflowed"),
         Attempt("mask one diagonal too far", lambda q, k, v: attention(q, k, v, mask="off by one")),
         forgets_return(S["attention_head"])]),
    "layer_norm": (
        [Attempt("the solution", S["layer_norm"]),
         Attempt("x.var", layer_norm),
         Attempt("float32", in_float32(S["layer_norm"])),
         Attempt("[:, None] instead of keepdims", lambda x, w, b, eps: (x - x.mean(1)[:, None])
                 / np.sqrt(x.var(1)[:, None] + eps) * w + b)],
        [Attempt("var over C − 1", lambda x, w, b, eps: layer_norm(x, w, b, eps, ddof=1),
                 hint="var divides by C, not C − 1"),
         Attempt("eps outside the root", lambda x, w, b, eps: layer_norm(x, w, b, eps, eps_inside=False),
                 hint="eps goes inside the square root"),
         Attempt("no eps", lambda x, w, b, eps: layer_norm(x, w, b, 0.0), hint="you left out eps"),
         Attempt("normalises each column", lambda x, w, b, eps: layer_norm(x, w, b, eps, axis=0)),
         Attempt("forgets w and b", lambda x, w, b, eps: layer_norm(x, w, b, eps, affine=False)),
         Attempt("centres its input in place (x -= mean)", layer_norm_in_place,
                 says="changed its input x in place"),
         forgets_return(S["layer_norm"])]),
    "kv_append": (
        [Attempt("the solution: a tuple", S["kv_append"]),
         Attempt("a list of two", lambda *a: list(S["kv_append"](*a))),
         Attempt("np.vstack in float32", in_float32(lambda K, V, k, v: (np.vstack([K, k]), np.vstack([V, v])))),
         Attempt("preallocated", append_preallocated)],
        [Attempt("new rows first", lambda K, V, k, v: (np.concatenate([k, K]), np.concatenate([v, V])),
                 hint="the cached rows come first"),
         Attempt("only the keys", lambda K, V, k, v: np.concatenate([K, k]), says="expected a pair (keys, values)"),
         Attempt("the cache unchanged", lambda K, V, k, v: (K, V)),
         Attempt("keys appended to the values", lambda K, V, k, v: (np.concatenate([K, k]), np.concatenate([V, k]))),
         forgets_return(S["kv_append"])]),
    "cached_causal_mask": (
        [Attempt("the solution: bool", S["cached_causal_mask"]),
         Attempt("by positions", cached_mask_by_positions),
         Attempt("additive 0 / −inf", additive_mask)],
        [Attempt("ignores the cached positions", lambda T, S_: np.tril(np.ones((T, S_), bool))),
         Attempt("one diagonal too many", lambda T, S_: np.tril(np.ones((T, S_), bool), k=S_ - T + 1)),
         Attempt("a square [S, S] mask", lambda T, S_: np.tril(np.ones((S_, S_), bool)),
                 says="you returned shape"),
         Attempt("upper triangle", lambda T, S_: np.triu(np.ones((T, S_), bool), k=S_ - T)),
         forgets_return(S["cached_causal_mask"])]),
}
