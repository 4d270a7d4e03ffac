# %% [markdown]
# # 14 · Build it yourself
#
# Every earlier notebook had you write one function on its own. Here your functions run as the
# model: the BPE encoder, the embedding lookup, LayerNorm and RMSNorm, RoPE, the cache append,
# attention with the causal mask and grouped-query heads, the FFN (GELU and SwiGLU), a block and a
# sampler, plugged into three models through one hook, `build_it.YourGPT(model, parts)`: the
# shipped Shakespeare model (GPT-2 style), the shipped tiny Llama-style model (RMSNorm, SwiGLU,
# RoPE, 4 query heads on 2 KV heads) and SmolLM2-135M when the file is here. `YourGPT` is a
# `minillm.model.GPT` whose `forward` calls your functions: the same seam the fast engine uses
# (`minillm/engine/gpt.py` overrides that one method too). Notebook 13 derives each formula.
#
# Each part is checked right after you write it (`check_part`): toy inputs chosen to expose the
# usual mistakes, and a diagnosis when yours differs. At the end `check_model` runs the library's
# model and, at EVERY call of a part, yours beside it on the same input: the first difference
# fails, even when the generated tokens agree. Solutions: `solutions/14_build_it.py`.
#
# **Try this:** change the `PROMPT` (1–60 tokens) and `N_NEW` (1–40) the assembled model is graded
# on, the BPE exercise's `BPE_TEXT` (at least 2 characters) and `N_MERGES` (1–50), or the
# `QUESTION` SmolLM2 answers, and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import math
from collections import Counter

import numpy as np

import minillm
from minillm.tokenizer.patterns import PreTokenizer
from build_it import LIBRARY, YourGPT, check_model, check_part
from nbhelpers import claim, find_smollm2, load_shipped

model, tok = load_shipped("shakespeare", fast=False)   # plain ndarrays: only model/ code runs
llama, llama_tok = load_shipped("tiny-llama", fast=False)
PROMPT, N_NEW = "ROMEO.\nBut soft, what light", 20
if not 1 <= len(tok.encode(PROMPT)) <= 60 or not 1 <= N_NEW <= 40:
    raise ValueError(f"PROMPT must be 1–60 tokens (it is {len(tok.encode(PROMPT))}) and N_NEW 1–40 (it is {N_NEW})")

# %% [markdown]
# ## The hook, with the library's parts
#
# With no parts of yours, `YourGPT` is the library's model computed by the same functions, so it
# generates the library's tokens exactly — the baseline. (`check_model` with nothing written says
# so: there is nothing to grade yet.)

# %%
from build_it import generate_with, library_tokens

print("the parts:", ", ".join(LIBRARY))
ids = tok.encode(PROMPT)
assert generate_with(YourGPT(model, {}), ids, N_NEW) == library_tokens(model, ids, N_NEW), \
    "YourGPT with the library's parts must generate the library's tokens"
check_model({}, model, tok, PROMPT, N_NEW)

# %% [markdown]
# ## 1. A tokenizer: train BPE (minbpe style)
#
# Cut the text into pre-tokens (merges never cross them), each a list of byte ids. Then, again
# and again: count every adjacent pair in every word, take the most frequent, give it the next
# id (256, 257, …) and **merge** it everywhere. Ties (two pairs with the same count) are broken
# as minillm's trainer does: the pair with the smallest `(left id, right id)` wins (minbpe takes
# the pair seen first; either is a rule, and the merges match only with the same one).
#
# `merge(ids, pair, new_id)`: every occurrence of `pair` in `ids`, left to right, replaced by
# `new_id` (`merge([1, 2, 1, 2, 3], (1, 2), 256) = [256, 256, 3]`).
# `train_bpe(words, n_merges)`: the list of merged pairs, in order. Each is checked on its own
# first (`check_part`): a BPE encoder loops until no merge applies, so it would hide a `merge`
# that replaces only the first occurrence, and few words of a text repeat a pair.

# %%
def merge(ids, pair, new_id):
    raise NotImplementedError    # your code here


def train_bpe(words, n_merges):
    raise NotImplementedError    # your code here (use merge; ties: the smallest pair)


check_part("merge", merge)
check_part("train_bpe", train_bpe)
BPE_TEXT, N_MERGES = "the cat sat on the mat; the hat sat on the cat. " * 3, 12
if len(BPE_TEXT) < 2 or not 1 <= N_MERGES <= 50:
    raise ValueError(f"BPE_TEXT needs at least 2 characters and N_MERGES must be 1–50 (it is {N_MERGES})")
words = [list(piece.encode("utf-8")) for piece in PreTokenizer(None).split(BPE_TEXT)]
library_tok = minillm.Tokenizer.train(BPE_TEXT, 256 + N_MERGES)
table = [bytes([b]) for b in range(256)]
library_merges = sorted(library_tok.merges, key=library_tok.merges.get)   # (left, right) bytes, by rank
try:
    yours = train_bpe(words, N_MERGES)
    for a, b in yours:
        table.append(table[a] + table[b])
    yours = [(table[a], table[b]) for a, b in yours]
    for k, (mine, lib) in enumerate(zip(yours, library_merges)):
        print(f"merge {k:2d}: yours {mine[0] + mine[1]!r:10} library {lib[0] + lib[1]!r:10}"
              f"{'' if mine == lib else '   ← differs'}")
    claim(yours == library_merges, f"your {len(yours)} merges are the library trainer's "
          f"({len(library_merges)})", "see the first '← differs' above: the count, or the tie rule")
except NotImplementedError:
    print("… merge / train_bpe: not written yet. The library's first merges:",
          [a + b for a, b in library_merges[:6]])

# %% [markdown]
# ### Encoding: your BPE is the whole encode
#
# Training learned the merges in order; encoding replays them. For one pre-token: start from its
# byte ids; while some adjacent pair is in `merges` (`{(left id, right id): new id}`), take the
# pair learned **earliest** — the lowest rank, here the smallest new id — and `merge` it everywhere,
# left to right. Not the highest rank, not the first pair you find, not from the right: each gives
# other tokens ("aaa" is [aa, a], not [a, aa]). Checked on every one of the Shakespeare
# tokenizer's merges, on texts with repeats and runs of spaces:

# %%
def bpe(ids, merges):
    raise NotImplementedError    # your code here (use your merge)


check_part("bpe", bpe, tok)

# %% [markdown]
# ## 2. The model's parts, one at a time
#
# Shapes: B batch rows, T new positions, S keys (cached + new), C width, H query heads, KV KV-heads,
# D head width, V vocabulary. Each cell checks its part at once on toy inputs: a batch of two rows
# (one left-padded), a cache (S > T), a constant row, …
#
# **Embedding**: `x[b, t] = wte[ids[b, t]] + wpe[positions[b, t]]` (`wpe` is None for RoPE models).

# %%
def embed(wte, ids, wpe, positions):
    raise NotImplementedError    # your code here


check_part("embed", embed)

# %% [markdown]
# **Norms**: LayerNorm `(x − mean) / √(var + eps) · weight + bias` (variance: divide by C; eps
# inside the root) and RMSNorm `x / √(mean(x²) + eps) · weight` (no centring, no bias), over the
# last axis; `norm` picks one by `kind`.

# %%
def layer_norm(x, weight, bias, eps):
    raise NotImplementedError    # your code here


def rms_norm(x, weight, eps):
    raise NotImplementedError    # your code here


def norm(x, p, kind, eps):
    return layer_norm(x, p.weight, p.bias, eps) if kind == "layernorm" else rms_norm(x, p.weight, eps)


check_part("norm", norm)

# %% [markdown]
# **RoPE** (Llama models): `rope(x [B, h, T, D], positions [B, T], theta)` turns pair
# (i, i + D/2) of the vector at position m by m·θ_i, θ_i = theta^(−2i/D):
# `[a, b] -> [a cos − b sin, b cos + a sin]` (notebook 13, section 3).

# %%
def rope(x, positions, theta):
    raise NotImplementedError    # your code here


check_part("rope", rope)

# %% [markdown]
# **The cache append**: `kv_append(K, V, k_new, v_new)` -> the keys and values after this step,
# `[B, KV, S + T, D]` each: the old rows, then the new ones.

# %%
def kv_append(K, V, k_new, v_new):
    raise NotImplementedError    # your code here


check_part("kv_append", kv_append)

# %% [markdown]
# **Attention**: `attention(q [B, H, T, D], k, v [B, KV, S, D], mask [1 or B, T, S])` =
# `softmax(q kᵀ / √D)` over the keys, with the scores where `mask` is False set to −∞ first, times
# `v`. With KV < H, query head h uses KV head h // G, G = H / KV: `np.repeat` the KV heads
# (notebook 13, sections 1, 2 and 6).

# %%
def attention(q, k, v, mask):
    raise NotImplementedError    # your code here


check_part("attention", attention)

# %% [markdown]
# **FFN**: GPT-2's `GELU(x W_up + b_up) W_down + b_down` with the tanh GELU, or Llama's SwiGLU
# `(SiLU(x W_gate) ⊙ x W_up) W_down`, by `kind`; `p` holds `w_up`, `w_down`, `w_gate`, `b_up`, `b_down`.

# %%
def ffn(x, p, kind):
    raise NotImplementedError    # your code here


check_part("ffn", ffn)

# %% [markdown]
# **Block**: `block(x, attn, norm1, ffn, norm2)`, the pre-norm residual block, its sub-layers
# given as functions. **Sampler**: `sample(logits [V])` -> the greedy next id (the first maximum).

# %%
def block(x, attn, norm1, ffn, norm2):
    raise NotImplementedError    # your code here


def sample(logits):
    raise NotImplementedError    # your code here


check_part("block", block)
check_part("sample", sample)

# %% [markdown]
# ## 3. Assembled, judged at every call
#
# Your parts run as the Shakespeare model and as the tiny Llama-style model (every Llama branch:
# RMSNorm, SwiGLU, RoPE, h // G). `check_model` first re-checks each part on its toys, then the
# library's model reads `PROMPT` — through a cache (an empty one, then 3 new rows onto the cached
# ones, then one token at a time) and as a batch of two rows, one left-padded — and at every call
# of a part yours runs beside the library's on the same input. Equal means within a tolerance set
# by float32 rounding (`build_it.RTOL`, `ATOL`); then your parts generate `N_NEW` tokens.

# %%
parts = {"bpe": bpe, "embed": embed, "norm": norm, "rope": rope, "kv_append": kv_append,
         "attention": attention, "ffn": ffn, "block": block, "sample": sample}
for name, (m, t) in {"Shakespeare": (model, tok), "tiny Llama-style": (llama, llama_tok)}.items():
    print(f"{name}: ", end="")
    check_model(parts, m, t, PROMPT, N_NEW)

# %% [markdown]
# What a mistake looks like, on the tiny Llama-style model: attention that forgets the causal
# mask, and a norm dividing by C − 1 (LayerNorm) or by the variance about the mean (RMSNorm).
# Computed, not pasted:

# %%
def attention_without_mask(q, k, v, mask):
    return LIBRARY["attention"](q, k, v, np.ones_like(mask))


def norm_divided_by_c_minus_1(x, p, kind, eps):
    if kind == "rmsnorm":
        return x / np.sqrt(x.var(-1, keepdims=True) + eps) * p.weight     # the bug: about the mean
    var = x.var(-1, keepdims=True, ddof=1)                                # the bug: C − 1
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(var + eps) * p.weight + p.bias


for broken in ({"attention": attention_without_mask}, {"norm": norm_divided_by_c_minus_1}):
    ok = check_model(broken, llama, llama_tok, PROMPT, N_NEW)
    claim(not ok, f"the grader rejects {next(iter(broken.values())).__name__}")

# %% [markdown]
# ## 4. The same parts, a real model
#
# SmolLM2-135M-Instruct is a Llama: RoPE, RMSNorm, SwiGLU, 9 query heads sharing 3 KV heads. The
# same `parts` run it (still loaded with `fast=False`: every weight a plain array). Asked in its
# chat format (ChatML), it should answer Paris — with your functions doing the arithmetic.

# %%
QUESTION = "What is the capital of France?"
path = find_smollm2()
if path is None:
    print("SmolLM2 is not here (python -m minillm download smollm2): this section is skipped; the "
          "tiny Llama-style model above graded the same branches.")
else:
    smol, smol_tok = minillm.load_model(path, fast=False)
    prompt = minillm.chatml_ids(smol_tok, [{"role": "user", "content": QUESTION}])
    check_model(parts, smol, smol_tok, prompt, 4)
    yours = YourGPT(smol, parts)
    answer = smol_tok.decode(generate_with(yours, prompt, 8))
    print(repr(answer))
    if yours.not_written:                            # a stub runs as the library's part: not yours
        print(f"… not written yet: {', '.join(sorted(yours.not_written))} — the library's parts "
              f"computed this answer in their place; write them and run again")
    else:
        claim("Paris" in answer, "the assembled model answers Paris", "another QUESTION, another answer")

# %% [markdown]
# ## Exercises
#
# Two of your parts, checked on their own by the exercises of notebooks 03 and 05 (their
# contracts take `[N, C]` and `[S, D]`; yours work on any leading axes, so the same functions pass):

# %%
from exercises import check

check("layer_norm", layer_norm)

# %%
check("kv_append", kv_append)
