"""Variants of the exercises of notebook 12 (bytes per token, the roofline, speculation)."""
import numpy as np

from minillm.io.sizes import parameter_count

from .common import SOLUTIONS as S, Attempt, as_list, forgets_return


def decode_bytes(config, n, cache_factor=2, heads=None, bytes_per=4, cache=True):
    heads = config.n_kv_heads if heads is None else heads(config)
    kv = cache_factor * config.n_layers * heads * n * config.d_head if cache else 0
    return bytes_per * (parameter_count(config) + kv)


def accept(drafts, logits, bonus=True, replace=True, skip_misses=False):
    out = []
    for i, d in enumerate(drafts):
        best = int(np.argmax(logits[i]))
        if d != best:
            if skip_misses:
                continue
            return out + [best] if replace else out
        out.append(d)
    return out + [int(np.argmax(logits[len(drafts)]))] if bonus else out


VARIANTS = {
    "decode_bytes": (
        [Attempt("the solution", S["decode_bytes"]),
         Attempt("a float", lambda c, n: float(decode_bytes(c, n))),
         Attempt("a NumPy int", lambda c, n: np.int64(decode_bytes(c, n)))],
        [Attempt("no KV cache", lambda c, n: decode_bytes(c, n, cache=False), hint="you left out the KV cache"),
         Attempt("keys only", lambda c, n: decode_bytes(c, n, cache_factor=1), hint="the cache holds keys AND values"),
         Attempt("counts floats, not bytes", lambda c, n: decode_bytes(c, n, bytes_per=1), hint="count bytes"),
         Attempt("n_heads cache heads", lambda c, n: decode_bytes(c, n, heads=lambda c: c.n_heads),
                 hint="the cache stores n_kv_heads heads"),
         forgets_return(S["decode_bytes"])]),
    "roofline": (
        [Attempt("the solution", S["roofline"]),
         Attempt("np.clip", lambda i, peak, bw: np.clip(np.asarray(i) * bw, None, peak)),
         Attempt("a list for an array", lambda i, peak, bw: as_list(S["roofline"])(i, peak, bw))],
        [Attempt("the memory line alone", lambda i, peak, bw: np.asarray(i) * bw, hint="that is the memory line alone"),
         Attempt("the larger of the two", lambda i, peak, bw: np.maximum(peak, np.asarray(i) * bw),
                 hint="the smaller of the two limits"),
         Attempt("intensity / bandwidth", lambda i, peak, bw: np.minimum(peak, np.asarray(i) / bw)),
         Attempt("Python's min on an array", lambda i, peak, bw: min(peak, i * bw), says="your function raised"),
         forgets_return(S["roofline"])]),
    "accept_drafts": (
        [Attempt("the solution", S["accept_drafts"]),
         Attempt("an int32 array", lambda d, z: np.array(accept(d, z), dtype=np.int32)),
         Attempt("a tuple", lambda d, z: tuple(accept(d, z)))],
        [Attempt("keeps every match, adds nothing", lambda d, z: [t for i, t in enumerate(d) if t == np.argmax(z[i])]),
         Attempt("no bonus token", lambda d, z: accept(d, z, bonus=False)),
         Attempt("drops the target's own token at a miss", lambda d, z: accept(d, z, replace=False)),
         Attempt("keeps drafts that agree after a miss", lambda d, z: accept(d, z, skip_misses=True)),
         forgets_return(S["accept_drafts"])]),
}
