"""Build it yourself: your own functions, run as the model, judged at every call (notebook 14).

The hook is ``YourGPT(model, parts)``: a ``minillm.model.GPT`` whose ``forward`` — the one method
the engine's ``EngineGPT`` overrides too — calls the functions in ``parts`` instead of the
library's. Input checks, the cache's bookkeeping and the projections are the library's; the math
is yours. Any part not given (or still raising NotImplementedError) is the library's (``LIBRARY``)
when the model runs — never when it is graded: ``check_model`` counts a part that raises
NotImplementedError at any call (a stub, or a branch not written) as not written, ✗:

    "bpe"        (ids [n] one pre-token's byte ids, merges {(a, b): new id}) -> ids: lowest rank first
    "embed"      (wte [V, C], ids [B, T], wpe [n_ctx, C] or None, positions [B, T]) -> x [B, T, C]
    "norm"       (x [B, T, C], p (p.weight, p.bias), kind "layernorm"/"rmsnorm", eps) -> [B, T, C]
    "rope"       (x [B, h, T, D], positions [B, T], theta) -> [B, h, T, D], pairs (i, i + D/2) turned
    "kv_append"  (K [B, KV, S, D], V, k [B, KV, T, D], v) -> (K', V') [B, KV, S + T, D] each
    "attention"  (q [B, H, T, D], k [B, KV, S, D], v, mask [1 or B, T, S] bool, True = visible)
                 -> [B, H, T, D]   softmax(q kᵀ / √D, masked) v; query head h uses KV head h // (H/KV)
    "ffn"        (x [B, T, C], p (w_up, w_down, w_gate, b_up, b_down), kind "gelu_mlp"/"swiglu") -> [B, T, C]
    "block"      (x [B, T, C], attn, norm1, ffn, norm2: functions [B, T, C] -> [B, T, C]) -> [B, T, C]
    "sample"     (logits [V]) -> int, the next token (greedy)

``check_part(name, fn)``: your part against the library's on toy inputs (build_it_toys.py); also
the trainer's "merge" and "train_bpe", each on its own (build_it_trainer.py).
``check_model(parts, model, tok, prompt)``: toys first, then the library's model runs a prompt
(through a cache: S = 0, then T = 3 new rows onto S > 0, then one at a time), and a batch of two
rows, one left-padded, read at once and then decoded one token at a time; at EVERY call of a part,
yours runs beside it on a copy of the same input.
The first call where yours differs fails the check — even when the generated tokens agree — with
what differs and, for a known mistake, what it is (build_it_symptoms.py).
"""
from __future__ import annotations

import numpy as np

import minillm
from minillm.decoding.batch import left_pad, padded_inputs
from minillm.kv_cache import KVCache
from minillm.model import GPT
from minillm.model.attention import merge_heads, split_heads
from minillm.model.linear import linear

from build_it_bpe import bpe_difference, encode_with, probe_texts
from build_it_judge import ATOL, RTOL, TOY_ATOL, TOY_RTOL, judge, show, shown
from build_it_parts import LIBRARY
from build_it_toys import CASES
from build_it_trainer import PARTS as TRAINER, trainer_difference

__all__ = ["LIBRARY", "YourGPT", "check_part", "check_model", "generate_with", "library_tokens",
           "grade_runs", "RTOL", "ATOL"]


class YourGPT(GPT):
    """The model of ``model`` (its config and plain-ndarray params: load it with ``fast=False``),
    computed by ``parts`` (see the module docstring)."""

    def __init__(self, model: GPT, parts: dict):
        super().__init__(model.config, model.params)
        self.parts = {**LIBRARY, **checked(parts)}
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
        for layer, bp in enumerate(p.blocks):
            self.layer = layer
            x = self.part("block", x,                                     # [B, T, C]
                          lambda h, a=bp.attn, i=layer: self.attention(h, a, mask, positions, cache, i),
                          lambda h, n=bp.norm1: self.part("norm", h, n, c.norm, c.norm_eps),
                          lambda h, f=bp.ffn: self.part("ffn", h, f, c.ffn),
                          lambda h, n=bp.norm2: self.part("norm", h, n, c.norm, c.norm_eps))
        self.layer = None
        if last_only:
            x = x[:, -1:]                                                 # [B, 1, C]
        x = self.part("norm", x, p.norm_f, c.norm, c.norm_eps)            # [B, T, C]
        head = p.wte.T if p.lm_head is None else p.lm_head                # [C, V]
        return linear(x, head), []                                        # [B, T, V]

    def attention(self, x, p, mask, positions, cache, layer):
        """The attention sub-layer around your parts: projections, heads, RoPE, the cache."""
        c = self.config
        q = split_heads(linear(x, p.wq, p.bq), c.n_heads)                 # [B, H, T, D]
        k = split_heads(linear(x, p.wk, p.bk), c.n_kv_heads)              # [B, KV, T, D]
        v = split_heads(linear(x, p.wv, p.bv), c.n_kv_heads)              # [B, KV, T, D]
        if c.position == "rope":
            q = self.part("rope", q, positions, c.rope_theta)
            k = self.part("rope", k, positions, c.rope_theta)
        if cache is None:
            past_k, past_v = k[:, :, :0], v[:, :, :0]                     # [B, KV, 0, D]: nothing yet
        else:
            past_k = cache.k[layer, :, :, :cache.length]                  # [B, KV, S − T, D]
            past_v = cache.v[layer, :, :, :cache.length]
        k, v = self.part("kv_append", past_k, past_v, k, v)               # [B, KV, S, D] each
        if cache is not None:                                             # what the next step reads
            # subtle: cache.length moves only after the whole forward, so writing here twice is harmless
            cache.k[layer, :, :, :k.shape[2]], cache.v[layer, :, :, :v.shape[2]] = k, v
        out = self.part("attention", q, k, v, mask)                       # [B, H, T, D]
        return linear(merge_heads(out), p.wo, p.bo)                       # [B, T, H·D] -> [B, T, C]


def checked(parts, known=LIBRARY) -> dict:
    if not isinstance(parts, dict):
        raise TypeError(f"parts must be a dict {{name: function}}, got {type(parts).__name__}")
    unknown = sorted(set(parts) - set(known))
    if unknown:
        raise ValueError(f"unknown parts {unknown}; the parts are {list(known)}")
    for name, fn in parts.items():
        if not callable(fn):
            raise TypeError(f"parts[{name!r}] is {type(fn).__name__} {show(fn)}, not a function: "
                            f"give the function itself, e.g. {{{name!r}: {name}}} (no parentheses)")
    return dict(parts)


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


# ---- the checks ---------------------------------------------------------------------------------

def check_part(name: str, fn, tok=None, quiet=False) -> bool:
    """Your part ``name`` against the library's on the toy inputs (build_it_toys.py) — for "bpe",
    on texts through ``tok``'s merges; "merge" and "train_bpe" on their own toys
    (build_it_trainer.py): ✓ or ✗ and what differs (a stub: ✗ not written yet)."""
    try:
        if name in TRAINER:
            found = trainer_difference(name, checked({name: fn}, TRAINER)[name])
        else:
            found = toy_difference(name, checked({name: fn})[name], tok)
    except NotImplementedError:
        return report(f"your {name} is not written yet (it raises NotImplementedError): write it "
                      f"above and run this cell again", quiet)
    n = count(name, tok)
    what = ("text" if name == "bpe" else "toy input") + ("s" if n > 1 else "")
    return report(found, quiet, f"your {name} equals the library's on {n} {what}")


def count(name, tok=None) -> int:
    if name in TRAINER:
        return len(TRAINER[name][1])
    return len(probe_texts(tok)) if name == "bpe" else len(CASES[name]())


def toy_difference(name, fn, tok=None, prompt=None) -> str | None:
    if name == "bpe":
        if tok is None:
            raise ValueError("the bpe part is graded on a tokenizer's merges: give tok=")
        return bpe_difference(fn, tok, probe_texts(tok, prompt))
    cases, unwritten = CASES[name](), []
    for i, args in enumerate(cases):
        try:
            found = judge(name, fn, args, TOY_RTOL, TOY_ATOL, toy=True)
        except NotImplementedError:                # a branch not written yet (kind 'swiglu', …)
            unwritten.append(i)
            continue
        if found:
            return f"your {name} {found} (toy input {i}: {shown(name, args)})"
    if len(unwritten) == len(cases):
        raise NotImplementedError
    if unwritten:
        return (f"your {name} raised NotImplementedError on toy input {unwritten[0]} "
                f"({shown(name, cases[unwritten[0]])}): a branch not written yet")
    return None


def report(found, quiet, ok_text="") -> bool:
    if not quiet:
        print(f"✗ {found}" if found else f"✓ {ok_text}")
    return found is None


def at(layer) -> str:
    return "" if layer is None else f" at layer {layer}"


class _Grader(YourGPT):
    """Runs the library's parts; at each call yours runs too, on a copy of the same input, and the
    first difference is kept (``run`` says which input the model was reading)."""

    def __init__(self, model, parts):
        super().__init__(model, {})
        self.yours, self.found, self.inner, self.calls, self.run = parts, None, False, 0, ""

    def part(self, name, *args):
        out = LIBRARY[name](*args)
        if self.found is None and not self.inner and name in self.yours:
            self.inner = True                    # your block calls the library's sub-layers
            try:
                self.calls += 1
                found = judge(name, self.yours[name], args, RTOL, ATOL)
            except NotImplementedError:          # a branch the toys never reached: not written
                found = ("raised NotImplementedError: a branch not written yet (a part that raises at "
                         "any call is not written; the library's is never used in its place)")
            finally:
                self.inner = False
            if found:
                self.found = f"your {name}{at(self.layer)} {found}, in {self.run} (input {shown(name, args)})"
        return out


def decode_padded_batch(grader, full, n_steps=3):
    """A batch of two rows, row 0 left-padded by 3, read at once and then decoded one token at a
    time (T = 1 with row 0's padding still masked), as minillm.generate_batch does."""
    n = min(len(full), 12)
    pad_ids, valid = left_pad([full[:n - 3], full[:n]])                             # [2, n]
    cache = KVCache(grader.config, batch_size=2, capacity=n + n_steps)
    cache.valid[:, :n] = valid                                                      # [2, n]
    positions, mask = padded_inputs(valid, n)                                       # [2, n], [2, n, n]
    grader.run = "a batch of two rows, row 0 left-padded by 3"
    grader(pad_ids, cache=cache, positions=positions, mask=mask, last_only=True)
    for step in range(n_steps):
        S = cache.length + 1
        grader.run = f"a padded batch decoded one token at a time (T = 1 onto S = {S - 1}, row 0's 3 pads masked)"
        positions, mask = padded_inputs(cache.valid[:, :S], 1)                      # [2, 1], [2, 1, S]
        token = np.full((2, 1), full[step % len(full)])                            # [2, 1]
        grader(token, cache=cache, positions=positions, mask=mask, last_only=True)


def grade_runs(model, parts, ids, expected) -> tuple[str | None, int]:
    """Every call of every part of yours, beside the library's, over: the prompt through a cache
    (S = 0, then T = 3 rows onto S > 0, then one token at a time) and a batch of two rows, row 0
    left-padded, read at once then decoded one token at a time; then "sample" on each step's
    logits. -> (the first difference or None, calls)."""
    grader, full = _Grader(model, parts), ids + expected
    cache = KVCache(model.config, capacity=len(full))
    head = max(1, len(ids) - 3)
    grader.run = f"the prompt's first {head} tokens (an empty cache: S = 0)"
    steps = [grader(np.asarray(ids[:head]), cache=cache, last_only=True)[-1]]      # [V]
    if len(ids) > head:
        grader.run = f"a cache append of the prompt's last {len(ids) - head} tokens onto S = {head}"
        steps[0] = grader(np.asarray(ids[head:]), cache=cache, last_only=True)[-1]
    for token in expected[:-1]:
        grader.run = f"one new token onto S = {cache.length} cached"
        steps.append(grader(np.asarray([token]), cache=cache, last_only=True)[-1])
    decode_padded_batch(grader, full)
    if grader.found is None and "sample" in parts:
        for t, logits in enumerate(steps):
            grader.calls += 1
            found = judge("sample", parts["sample"], (logits,), 0, 0)
            if found:
                return f"your sample {found} (the logits of step {t}, max {logits.max():.3f})", grader.calls
    return grader.found, grader.calls


def check_model(parts: dict, model: GPT, tokenizer, prompt, n_new: int = 20, quiet=False) -> bool:
    """Grade ``parts`` on ``model``: each written part on its toys (the "bpe" on texts through
    ``tokenizer``), then at every call while the library's model reads ``prompt`` (a text,
    encoded by your bpe when given, or ids), then the ``n_new`` greedy tokens your parts generate.
    Prints ✓, or ✗ with the first part that differs, where, and what; returns True for ✓."""
    parts = checked(parts)
    written, stubs, found = {}, [], None
    for name in [n for n in LIBRARY if n in parts]:
        try:
            failure = toy_difference(name, parts[name], tokenizer, prompt)
        except NotImplementedError:
            stubs.append(name)
            continue
        written[name] = parts[name]
        found = found or failure
    note = f" (not written yet: {', '.join(stubs)})" if stubs else ""
    if not written:
        return report("nothing to grade yet: " + (f"every part given is a stub ({', '.join(stubs)}); "
                      if stubs else "no parts given; ") + "write one and run again", quiet)
    if found:
        return report(found + note, quiet)
    ids = tokenizer.encode(prompt) if isinstance(prompt, str) else [int(i) for i in prompt]
    expected = library_tokens(model, ids, n_new)
    found, calls = grade_runs(model, written, ids, expected)
    mine = YourGPT(model, written)
    try:
        yours = encode_with(written["bpe"], tokenizer, prompt) if "bpe" in written and isinstance(prompt, str) else ids
        got, error = generate_with(mine, yours, n_new), None
    except Exception as e:                       # a part that fails in its own run: said below
        got, error = [], e
    if found is None and mine.not_written:       # raised where the grader's runs did not reach
        found = (f"your {sorted(mine.not_written)[0]} raised NotImplementedError while your model generated: "
                 f"a branch not written yet (the library's part is never counted as yours)")
    agree = got == expected
    if found:
        tokens = ("" if "NotImplementedError" in found else
                  f" — the {n_new} greedy tokens agree with the library's, but this part does not" if agree
                  else " — and the generated tokens differ")
        return report(f"{found}{tokens}{note}", quiet)
    if not agree:
        t = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), len(got))
        what = (f"your model raised {type(error).__name__}: {error}" if error else
                f"token {t} is {got[t]} ({tokenizer.decode([got[t]])!r}), the library's {expected[t]}")
        return report(f"{what}, though every part agreed at every call{note}", quiet)
    if stubs:                                    # the library's part is never counted as yours
        return report(f"not written yet: {', '.join(stubs)} (it raises NotImplementedError); the parts "
                      f"you wrote ({', '.join(written)}) equal the library's at each of their {calls} "
                      f"calls", quiet)
    return report(None, quiet, f"every part you wrote ({', '.join(written)}) equals the library's at "
                               f"each of its {calls} calls, and generates the library's {n_new} tokens")
