"""Build it yourself: your own functions, run as the model (notebook 13).

The hook is ``YourGPT(model, parts)``: a ``minillm.model.GPT`` whose ``forward`` — the one method
the engine's ``EngineGPT`` overrides too (``minillm/engine/gpt.py``) — calls the functions in
``parts`` instead of the library's. The input checks, ``__call__``, the cache's bookkeeping and
generation are the library's; the math is yours. Any part not given is the library's (``LIBRARY``):

    "embed"      (wte [V, C], ids [B, T], wpe [n_ctx, C] or None, positions [B, T]) -> x [B, T, C]
    "norm"       (x [B, T, C], p (p.weight, p.bias), kind "layernorm"/"rmsnorm", eps) -> [B, T, C]
    "kv_append"  (K [B, K, S, D], V, k [B, K, T, D], v) -> (K', V') [B, K, S + T, D] each
    "attention"  (q [B, H, T, D], k [B, K, S, D], v, mask [1 or B, T, S] bool, True = visible)
                 -> [B, H, T, D]   softmax(q kᵀ / √D, masked) v; query head h uses KV head h // (H/K)
    "ffn"        (x [B, T, C], p (w_up, w_down, w_gate, b_up, b_down), kind "gelu_mlp"/"swiglu") -> [B, T, C]
    "block"      (x [B, T, C], attn, norm1, ffn, norm2: functions [B, T, C] -> [B, T, C]) -> [B, T, C]
    "sample"     (logits [V]) -> int, the next token
    "merge"      (ids, pair (a, b), new_id) -> ids with every (a, b) replaced by new_id: your BPE
                 merge step, which ``check_model`` uses to encode a text prompt (``encode_with``)

A part that still raises NotImplementedError (a stub) is replaced by the library's and listed.
``check_model(parts, …)`` encodes the prompt with your "merge" (when given), generates with your
parts and compares with the library: when the prompt's ids differ it names your merge step; when
the tokens differ, the FIRST part whose output differs from the library's on the same input
(``first_difference``).
"""
from __future__ import annotations

import copy
import inspect

import numpy as np

import minillm
from minillm.kv_cache import KVCache
from minillm.model import GPT
from minillm.model.attention import merge_heads, scaled_dot_product, split_heads
from minillm.model.embedding import embed
from minillm.model.ffn import ffn
from minillm.model.linear import linear
from minillm.model.norm import norm
from minillm.model.rope import apply_rope, rope_angles
from minillm.tokenizer.train import merge_word

# Equal means |yours − library| ≤ ATOL + RTOL·|library| everywhere: a correct formula written
# another way differs by float32 rounding (~1e-6 relative); a missing eps or mask by far more.
ATOL, RTOL = 1e-4, 1e-3


def block(x, attn, norm1, ffn, norm2):
    """model/block.py's pre-norm residual block, its sub-layers given as functions."""
    x = x + attn(norm1(x))                       # [B, T, C]
    return x + ffn(norm2(x))                     # [B, T, C]


def kv_append(K, V, k_new, v_new):
    """What ``KVCache.store`` computes (there, into preallocated slots): old rows, then new ones."""
    return np.concatenate([K, k_new], axis=-2), np.concatenate([V, v_new], axis=-2)   # [B, K, S + T, D]


def attention(q, k, v, mask):
    return scaled_dot_product(q, k, v, mask)[0]  # [B, H, T, D] (the weights are not needed)


def greedy(logits):
    return int(np.argmax(logits))                # the first of equal maxima, as minillm.generate


def merge(ids, pair, new_id):
    """Every occurrence of ``pair`` in ``ids``, left to right, replaced by ``new_id``: the library
    trainer's step (``minillm/tokenizer/train.py`` ``merge_word``), as a list."""
    return list(merge_word(tuple(ids), tuple(pair), new_id))


LIBRARY = {"embed": embed, "norm": norm, "kv_append": kv_append, "attention": attention,
           "ffn": ffn, "block": block, "sample": greedy, "merge": merge}


def encode_with(merge, tok, text: str) -> list[int]:
    """``text`` -> ids, by the tokenizer's BPE with ``merge(ids, pair, new_id)`` doing each merge.

    The rule (minillm/tokenizer/bpe.py): split ``text`` into pre-tokens (merges never cross
    them); start each from its UTF-8 bytes' ids; then, while some adjacent pair is in
    ``tok.merges`` ({(left bytes, right bytes): rank}), merge the pair with the LOWEST rank —
    the one learned earliest — everywhere in the pre-token. With the merges ``(l, l)``, then
    ``(e, ll)``::

        " hello" -> [" ", h, e, l, l, o] -> [" ", h, e, ll, o] -> [" ", h, ell, o] -> …

    Equal to ``tok.encode(text)`` for a byte-level tokenizer with a merge list (``tok.merges``
    not None) and a text without special tokens.
    """
    if tok.merges is None:
        raise ValueError("encode_with needs a tokenizer with a merge list (tok.merges is None: "
                         "tiktoken's rule, ranks from the vocabulary)")
    ids_of = tok.encoder                                    # {token bytes: id}
    out = []
    for piece in tok.pre_tokenizer.split(text):             # the pre-tokens, as tok.encode splits
        ids = [ids_of[bytes([b])] for b in piece.encode("utf-8")]
        while len(ids) > 1:
            pairs = [(tok.token_bytes(a), tok.token_bytes(b)) for a, b in zip(ids, ids[1:])]
            ranked = [(tok.merges[p], i) for i, p in enumerate(pairs) if p in tok.merges]
            if not ranked:
                break                                       # no pair merges: this piece is done
            _, i = min(ranked)
            merged = merge(ids, (ids[i], ids[i + 1]), ids_of[pairs[i][0] + pairs[i][1]])
            if merged is None:
                raise ValueError("merge returned None — did you forget `return`?")
            if len(merged) >= len(ids):
                raise ValueError(f"merge({ids}, {(ids[i], ids[i + 1])}, …) returned {merged}: "
                                 f"the pair was not replaced")
            ids = list(merged)
        out.extend(ids)
    return out


class YourGPT(GPT):
    """The model of ``model`` (its config and its plain-ndarray params: load it with
    ``fast=False``), computed by ``parts`` (see the module docstring)."""

    def __init__(self, model: GPT, parts: dict):
        unknown = sorted(set(parts) - set(LIBRARY))
        if unknown:
            raise ValueError(f"unknown parts {unknown}; the parts are {sorted(LIBRARY)}")
        super().__init__(model.config, model.params)
        self.parts = {**LIBRARY, **parts}
        self.not_written: set[str] = set()       # stubs, replaced by the library's
        self.layer = None                        # the block being computed (None: outside)

    def part(self, name, *args):
        """Call your part ``name`` (the library's while yours is a stub)."""
        if name not in self.not_written:
            try:
                return self.parts[name](*args)
            except NotImplementedError:
                self.not_written.add(name)
        return LIBRARY[name](*args)

    def forward(self, ids, positions, mask, cache=None, return_weights=False, last_only=False):
        if return_weights:
            raise ValueError("YourGPT does not return attention weights")
        c, p = self.config, self.params
        self.layer = None
        x = self.part("embed", p.wte, ids, p.wpe, positions)              # [B, T, C]
        rope = None
        if c.position == "rope":
            cos, sin = rope_angles(positions, c.d_head, c.rope_theta)     # [B, T, D/2] each
            rope = (cos[:, None], sin[:, None])                           # [B, 1, T, D/2]
        for layer, bp in enumerate(p.blocks):
            self.layer = layer
            x = self.part("block", x,                                     # [B, T, C]
                          lambda h, a=bp.attn, i=layer: self.attention(h, a, mask, rope, cache, i),
                          lambda h, n=bp.norm1: self.part("norm", h, n, c.norm, c.norm_eps),
                          lambda h, f=bp.ffn: self.part("ffn", h, f, c.ffn),
                          lambda h, n=bp.norm2: self.part("norm", h, n, c.norm, c.norm_eps))
        self.layer = None
        if last_only:
            x = x[:, -1:]                                                 # [B, 1, C]
        x = self.part("norm", x, p.norm_f, c.norm, c.norm_eps)            # [B, T, C]
        head = p.wte.T if p.lm_head is None else p.lm_head                # [C, V]
        return linear(x, head), []                                        # [B, T, V]

    def attention(self, x, p, mask, rope, cache, layer):
        """The attention sub-layer around your parts: projections, heads, RoPE, the cache."""
        c = self.config
        q = split_heads(linear(x, p.wq, p.bq), c.n_heads)                 # [B, H, T, D]
        k = split_heads(linear(x, p.wk, p.bk), c.n_kv_heads)              # [B, K, T, D]
        v = split_heads(linear(x, p.wv, p.bv), c.n_kv_heads)              # [B, K, T, D]
        if rope is not None:
            q, k = apply_rope(q, *rope), apply_rope(k, *rope)
        if cache is None:
            past_k, past_v = k[:, :, :0], v[:, :, :0]                     # [B, K, 0, D]: nothing yet
        else:
            past_k = cache.k[layer, :, :, :cache.length]                  # [B, K, S − T, D]
            past_v = cache.v[layer, :, :, :cache.length]
        k, v = self.part("kv_append", past_k, past_v, k, v)               # [B, K, S, D] each
        if cache is not None:                                             # what the next step reads
            # subtle: cache.length moves only after the whole forward, so writing here twice is harmless
            cache.k[layer, :, :, :k.shape[2]], cache.v[layer, :, :, :v.shape[2]] = k, v
        out = self.part("attention", q, k, v, mask)                       # [B, H, T, D]
        return linear(merge_heads(out), p.wo, p.bo)                       # [B, T, H·D] -> [B, T, C]


def generate_with(model: YourGPT, prompt, n_new: int) -> list[int]:
    """n_new tokens after ``prompt``, each chosen by the model's "sample" part, with a KV cache."""
    cache = KVCache(model.config, capacity=len(prompt) + n_new)
    logits = model(np.asarray(prompt), cache=cache, last_only=True)[-1]   # [V]
    out = []
    while True:
        out.append(int(model.part("sample", logits)))
        if len(out) == n_new:
            return out
        logits = model(np.asarray(out[-1:]), cache=cache, last_only=True)[-1]   # [V]


def library_tokens(model, prompt, n_new: int) -> list[int]:
    return [s.id for s in minillm.generate(model, prompt, n_new, temperature=0, stop_at_eos=False)]


class _Grader(YourGPT):
    """Runs the library's parts; each call also runs yours on a copy of the same inputs, and the
    first output that differs is kept (inner parts before the block around them)."""

    def __init__(self, model, parts):
        super().__init__(model, {})
        self.yours, self.found, self.replaying = parts, None, False

    def part(self, name, *args):
        out = LIBRARY[name](*args)
        if self.found is None and not self.replaying and name in self.yours:
            self.replaying = True                 # your block calls the library's sub-layers
            try:
                self.found = compare(name, self.yours[name](*copy.deepcopy(args)), out, self.layer, args)
            except NotImplementedError:
                pass
            except Exception as error:
                self.found = f"your {name}{at(self.layer)} raised {type(error).__name__}: {error}"
            finally:
                self.replaying = False
        return out


def first_difference(parts: dict, model: GPT, ids) -> str | None:
    """The first part (in the order the model calls them) whose output differs from the
    library's on the library's own inputs, in words; None when every part agrees. ``ids``: a
    sequence the model reads, with the cache (all but the last, then the last)."""
    grader = _Grader(model, parts)
    cache = KVCache(model.config, capacity=len(ids))
    grader(np.asarray(ids[:-1]), cache=cache)                             # kv_append onto nothing
    grader(np.asarray(ids[-1:]), cache=cache)                             # and onto a cache
    if grader.found is None and "sample" in parts:
        for t, logits in enumerate(model(np.asarray(ids))):               # [V] per position
            try:
                mine = parts["sample"](logits.copy())
            except NotImplementedError:
                break
            if mine != greedy(logits):
                return (f"your sample chose {mine!r} where greedy chooses {greedy(logits)} "
                        f"(logits at position {t}, max {logits.max():.3f})")
    return grader.found


def at(layer) -> str:
    return "" if layer is None else f" at layer {layer}"


def compare(name, mine, library, layer, args) -> str | None:
    """None when ``mine`` equals ``library`` within the tolerance, else what differs, for which input."""
    names = list(inspect.signature(LIBRARY[name]).parameters)
    shown = ", ".join(f"{n} {show(a)}" for n, a in zip(names, args))
    where = f"{at(layer)} for input {shown}"
    pair = isinstance(library, tuple)
    if mine is None:
        return f"your {name} returned None{where} — did you forget `return`?"
    if pair and not (isinstance(mine, (tuple, list)) and len(mine) == 2):
        return f"your {name} returned {type(mine).__name__}, not a pair (K', V'){where}"
    for m, lib in zip(mine if pair else [mine], library if pair else [library]):
        m = np.asarray(m)
        if m.shape != lib.shape:
            return f"your {name} returned shape {list(m.shape)}, the library's {list(lib.shape)}{where}"
        if not np.allclose(m, lib, rtol=RTOL, atol=ATOL):
            gap = np.abs(m.astype(np.float64) - lib)
            return (f"your {name} differs from the library's{at(layer)} (max |Δ| = "
                    f"{np.nanmax(gap) if not np.isnan(gap).all() else float('nan'):.3g}"
                    f"{', NaN in yours' if np.isnan(m).any() else ''}) for input {shown}")
    return None


def show(a) -> str:
    if isinstance(a, np.ndarray):
        return f"{list(a.shape)} {a.dtype}"
    if callable(a):
        return "(a function)"
    return type(a).__name__ if hasattr(a, "__dataclass_fields__") else repr(a)


def show_ids(tokenizer, ids) -> str:
    return "[" + ", ".join(f"{i} {tokenizer.decode([i])!r}" for i in ids) + "]"


def merge_difference(parts: dict, tokenizer, prompt, ids, stubs: set) -> str | None:
    """Your "merge" encodes a text ``prompt`` as ``ids`` (the library's)? None, else what differs.
    A stub is added to ``stubs``."""
    if "merge" not in parts or not isinstance(prompt, str):
        return None
    try:
        mine = encode_with(parts["merge"], tokenizer, prompt)
    except NotImplementedError:
        stubs.add("merge")
        return None
    except Exception as error:
        return f"your merge step raised {type(error).__name__}: {error}"
    if mine == ids:
        return None
    t = next((i for i, (a, b) in enumerate(zip(mine, ids)) if a != b), min(len(mine), len(ids)))
    return (f"your merge step encodes the prompt as {show_ids(tokenizer, mine[t:t + 4])} from "
            f"token {t} where the library has {show_ids(tokenizer, ids[t:t + 4])} "
            f"({len(mine)} tokens, the library's {len(ids)})")


def check_model(parts: dict, model: GPT, tokenizer, prompt, n_new: int = 20, quiet=False) -> bool:
    """Encode ``prompt`` with your "merge" step (a text prompt, when given), generate ``n_new``
    greedy tokens with your parts and with the library; print ✓ when they are the same tokens,
    else ✗ and the first part that differs: your merge step when the prompt's ids differ, else
    the first token that differs and the first model part that does."""
    ids = tokenizer.encode(prompt) if isinstance(prompt, str) else list(prompt)
    yours, error = YourGPT(model, parts), None
    bpe = merge_difference(parts, tokenizer, prompt, ids, yours.not_written)
    if bpe is not None:
        if not quiet:
            print(f"✗ {bpe}")
        return False
    expected = library_tokens(model, ids, n_new)
    try:
        got = generate_with(yours, ids, n_new)
    except Exception as e:                     # a shape your part got wrong, …: found below
        got, error = [], e
    stubs = sorted(yours.not_written)
    note = f" (not written yet, the library's used: {', '.join(stubs)})" if stubs else ""
    if got == expected:
        message = f"✓ your parts generated the library's {n_new} tokens exactly{note}"
    else:
        t = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), len(got))
        what = (f"your model raised {type(error).__name__}: {error}" if error else
                f"token {t} is {got[t]!r} ({tokenizer.decode([got[t]])!r}), the library's "
                f"{expected[t]} ({tokenizer.decode([expected[t]])!r})")
        part = first_difference(parts, model, ids + expected)
        message = f"✗ {what}; " + (part or "every part agrees on the library's inputs") + note
    if not quiet:
        print(message)
    return got == expected
