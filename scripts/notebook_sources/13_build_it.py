# %% [markdown]
# # 13 · Build it yourself
#
# Every earlier notebook had you write one function on its own. Here your functions run as the
# model: a BPE trainer, the embedding lookup, attention with the causal mask, LayerNorm and
# RMSNorm, the FFN, a block, the cache append and a sampler, plugged into the shipped
# Shakespeare model — and, when the file is here, into SmolLM2-135M — through one hook,
# `build_it.YourGPT(model, parts)`. It is a `minillm.model.GPT` whose `forward` calls your
# functions: the same seam the fast engine uses (`minillm/engine/gpt.py` overrides that one
# method too). Any part you leave out, or leave as a stub, is the library's.
#
# `check_model(parts, …)` generates greedy tokens with your parts and with the library. The same
# tokens: ✓. Otherwise it names the first part whose output differs from the library's on the
# same input. Solutions: `solutions/13_build_it.py`.
#
# **Try this:** change the `PROMPT` and `N_NEW` the model is graded on, the BPE exercise's
# `BPE_TEXT` and `N_MERGES`, or the `QUESTION` SmolLM2 answers, and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import math
from collections import Counter

import numpy as np

import minillm
from minillm.tokenizer.patterns import PreTokenizer
from build_it import LIBRARY, YourGPT, check_model
from nbhelpers import claim, find_smollm2, load_shipped

model, tok = load_shipped("shakespeare", fast=False)   # plain ndarrays: only model/ code runs
PROMPT, N_NEW = "ROMEO.\nBut soft, what light", 20

# %% [markdown]
# ## The hook, with the library's parts
#
# With no parts of yours, `YourGPT` is the library's model computed by the same functions, so it
# must generate the library's tokens exactly — the grader's baseline:

# %%
print("the parts:", ", ".join(LIBRARY))
ok = check_model({}, model, tok, PROMPT, N_NEW)
assert ok, "YourGPT with the library's parts must generate the library's tokens"

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
# `train_bpe(words, n_merges)`: the list of merged pairs, in order.

# %%
def merge(ids, pair, new_id):
    raise NotImplementedError    # your code here


def train_bpe(words, n_merges):
    raise NotImplementedError    # your code here (use merge; ties: the smallest pair)


BPE_TEXT, N_MERGES = "the cat sat on the mat; the hat sat on the cat. " * 3, 12
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
# ## 2. The model's parts
#
# Write each function below (shapes: B batch, T new positions, S keys, C width, H heads, K KV
# heads, D head width, V vocabulary). The notebooks before this one derive each formula.
#
# - `embed`: `x[b, t] = wte[ids[b, t]] + wpe[positions[b, t]]` (no `wpe`, None, for RoPE models).
# - `attention(q [B, H, T, D], k, v [B, K, S, D], mask [1 or B, T, S])`: `softmax(q kᵀ / √D)` with
#   the scores where `mask` is False set to −∞, times `v`. With K < H KV heads (SmolLM2), query
#   head h uses KV head h // (H / K): `np.repeat` the KV heads.
# - `layer_norm`, `rms_norm` (variance: divide by C; `eps` inside the square root), and `norm`,
#   which picks one by `kind`.
# - `ffn`: GPT-2's `GELU(x W_up + b_up) W_down + b_down` (tanh GELU) or Llama's SwiGLU
#   `(SiLU(x W_gate) ⊙ x W_up) W_down`, by `kind`; `p` holds `w_up`, `w_down`, `w_gate`, `b_up`, `b_down`.
# - `block(x, attn, norm1, ffn, norm2)`: the pre-norm residual block, its sub-layers given as functions.
# - `kv_append(K, V, k_new, v_new)`: the cache after this step, `[B, K, S + T, D]` each.
# - `sample(logits [V])`: the next token id (greedy: the argmax).
#
# Your `merge` from section 1 is a part too: `check_model` encodes `PROMPT` with it
# (`build_it.encode_with`: the lowest-ranked pair of the tokenizer's merges, merged everywhere,
# until none is left), so the whole run — text, your BPE, your model, your sampler — is yours.

# %%
def embed(wte, ids, wpe, positions):
    raise NotImplementedError    # your code here


def attention(q, k, v, mask):
    raise NotImplementedError    # your code here


def layer_norm(x, weight, bias, eps):
    raise NotImplementedError    # your code here


def rms_norm(x, weight, eps):
    raise NotImplementedError    # your code here


def norm(x, p, kind, eps):
    return layer_norm(x, p.weight, p.bias, eps) if kind == "layernorm" else rms_norm(x, p.weight, eps)


def ffn(x, p, kind):
    raise NotImplementedError    # your code here


def block(x, attn, norm1, ffn, norm2):
    raise NotImplementedError    # your code here


def kv_append(K, V, k_new, v_new):
    raise NotImplementedError    # your code here


def sample(logits):
    raise NotImplementedError    # your code here


parts = {"embed": embed, "attention": attention, "norm": norm, "ffn": ffn, "block": block,
         "kv_append": kv_append, "sample": sample, "merge": merge}

# %% [markdown]
# ## 3. Graded end to end
#
# Your parts generate `N_NEW` greedy tokens after `PROMPT`, on the shipped model; the library does
# the same. When the tokens differ, the grader runs the library's model once more and, at every
# call of a part, runs yours on a copy of the same input: the first output that differs by more
# than 1e-4 + 1e-3·|library's| (float32 rounding of a correct formula is far below) is named.

# %%
check_model(parts, model, tok, PROMPT, N_NEW)

# %% [markdown]
# What a mistake looks like: attention that forgets the causal mask (every position sees the
# future), and LayerNorm dividing by C − 1. Computed, not pasted:

# %%
def attention_without_mask(q, k, v, mask):
    return LIBRARY["attention"](q, k, v, np.ones_like(mask))


def norm_divided_by_c_minus_1(x, p, kind, eps):
    var = x.var(-1, keepdims=True, ddof=1)                          # the bug: C − 1
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(var + eps) * p.weight + p.bias


for broken in ({"attention": attention_without_mask}, {"norm": norm_divided_by_c_minus_1}):
    ok = check_model(broken, model, tok, PROMPT, N_NEW)
    claim(not ok, f"the grader rejects {next(iter(broken.values())).__name__}",
          "at this PROMPT the mistake does not change the greedy tokens")

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
    print("SmolLM2 is not here (python -m minillm download smollm2): this section is skipped.")
else:
    smol, smol_tok = minillm.load_model(path, fast=False)
    prompt = minillm.chatml_ids(smol_tok, [{"role": "user", "content": QUESTION}])
    ok = check_model(parts, smol, smol_tok, prompt, 8)
    from build_it import generate_with
    answer = smol_tok.decode(generate_with(YourGPT(smol, parts), prompt, 8))
    print(repr(answer))
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
