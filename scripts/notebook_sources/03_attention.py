# %% [markdown]
# # 03 · Attention and the causal mask
#
# > 当模型计算‘它’位置的表示时，Query（Q）代表当前位置的需求，Key（K）代表历史各位置的特征标识，
# > Value（V）则提供实际信息内容。通过 Q-K 匹配，模型可让‘它’有效关联到前文的‘海水’。
# >
# > *When the model computes the representation at the position of 它 ("it"), the Query stands for
# > what the current position needs, the Keys label what each earlier position holds, and the
# > Values carry the information itself. By matching Q with K the model can link 它 to 海水
# > ("seawater") earlier in the text.*
#
# > mask 做的事只有一件：在 attention 的路由表里，把"未来节点"的权重强行设为 0。……
# > 在一张全连接图上，人为删掉了"指向未来的边"。
# >
# > *The mask does one thing: in attention's routing table it forces the weights of "future nodes"
# > to 0 … on a fully connected graph, it deletes the edges that point to the future.*
#
# This notebook computes Q, K and V by hand for one layer of a real model with minillm's own
# functions, checks that they give exactly the weights the model uses, draws the mask as a graph,
# looks for a head in which "it" attends to "sea", and checks that every weight on a future
# position is exactly 0.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import math

import matplotlib.pyplot as plt
import numpy as np

from minillm.functional import softmax
from minillm.model.attention import causal_mask, scaled_dot_product, split_heads
from minillm.model.embedding import embed
from minillm.model.norm import norm
from minillm.model.rope import apply_rope
from nbhelpers import load_pretrained

model, tok, model_name = load_pretrained()
c, p = model.config, model.params

# %% [markdown]
# The seed's example is Chinese (它 → 海水). SmolLM2 was trained mostly on English, and its
# vocabulary cuts both words into byte fragments (notebook 01), so we use an English sentence,
# whose pronoun "it" refers to "sea".

# %%
for word in ("海水", "它"):
    print(word, "→", [tok.token_bytes(i).hex(" ") for i in tok.encode(word)])
SENTENCE = "The sea absorbs most of the red light. That is why it looks blue."
ids = np.array(tok.encode(SENTENCE))                   # [T]
pieces = [tok.decode([i]) for i in ids]
T = len(ids)
print(T, "tokens:", pieces)

# %% [markdown]
# ## Q, K and V, step by step (layer 0)
#
# A block first normalises its input, then projects it three times:
# `q = h @ W_q`, `k = h @ W_k`, `v = h @ W_v`, and splits the features into heads. With RoPE
# (SmolLM2) the position enters now, by rotating q and k. Then for one head
# `weights = softmax(q kᵀ / √D + mask)` and the head's output is `weights @ v`.

# %%
positions = np.arange(T)[None]                                         # [1, T]
x = embed(p.wte, ids[None], p.wpe, positions)                          # [1, T, C]
b0 = p.blocks[0]
h = norm(x, b0.norm1, c.norm, c.norm_eps)                              # [1, T, C]
q, k, v = h @ b0.attn.wq, h @ b0.attn.wk, h @ b0.attn.wv               # [1, T, H·D], [1, T, K·D] ×2
if b0.attn.bq is not None:
    q, k, v = q + b0.attn.bq, k + b0.attn.bk, v + b0.attn.bv
q, k, v = split_heads(q, c.n_heads), split_heads(k, c.n_kv_heads), split_heads(v, c.n_kv_heads)
if c.position == "rope":
    cos, sin = model.rope_cos[positions][:, None], model.rope_sin[positions][:, None]
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
print(f"x {x.shape}  h {h.shape}")
print(f"q {q.shape} = [batch, {c.n_heads} query heads, T, D={c.d_head}]")
print(f"k {k.shape}, v {v.shape} = [batch, {c.n_kv_heads} key/value heads, T, D]"
      + ("  (grouped-query attention: each K/V head serves "
         f"{c.n_heads // c.n_kv_heads} query heads)" if c.n_kv_heads < c.n_heads else ""))

# %%
head = 0
kv_head = head // (c.n_heads // c.n_kv_heads)
scores = q[0, head] @ k[0, kv_head].T / math.sqrt(c.d_head)            # [T, D] @ [D, T] -> [T, T]
mask = causal_mask(T, T)                                               # [T, T] bool, lower-triangular
masked = np.where(mask, scores, -np.inf)                               # [T, T]
by_hand = softmax(masked)                                              # [T, T], rows sum to 1

_, sdp_weights = scaled_dot_product(q, k, v, mask[None])               # [1, H, T, T]
_, model_weights = model(ids, return_weights=True)                     # per layer [H, T, T]
print("by hand vs scaled_dot_product:", np.abs(by_hand - sdp_weights[0, head]).max())
print("by hand vs the model's layer 0:", np.abs(by_hand - model_weights[0][head]).max())
np.set_printoptions(precision=2, suppress=True, linewidth=140)
print("head 0 of layer 0, first 6 rows and columns:\n", by_hand[:6, :6])

# %% [markdown]
# ## The mask as the graph of allowed edges
#
# Row t of the mask lists the positions that query t may read: itself and everything before it.
# Drawn as a graph, every token has an edge to each earlier token and to itself; the edges to
# the future are simply absent. Of the T² edges of the full graph, T(T+1)/2 remain.

# %%
mask = causal_mask(T, T)
print(mask.astype(int)[:8, :8], "…")
print(f"edges kept: {mask.sum()} of {T * T} = T(T+1)/2 = {T * (T + 1) // 2}")

fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [1, 1.6]})
a1.imshow(mask, cmap="Greys")
a1.set_xticks(range(T), pieces, rotation=90, fontsize=7)
a1.set_yticks(range(T), pieces, fontsize=7)
a1.set_xlabel("key position s (what is read)")
a1.set_ylabel("query position t (who reads)")
a1.set_title("causal mask: black = allowed (s ≤ t)")
for t in range(T):                     # an arc from each query down to each key it may read
    for s in range(t):
        xs = np.linspace(s, t, 30)
        a2.plot(xs, np.sin(np.linspace(0, np.pi, 30)) * (t - s) / 2, color="C0", lw=0.5, alpha=0.5)
a2.scatter(range(T), np.zeros(T), color="C1", zorder=3)
for t, piece in enumerate(pieces):
    a2.text(t, -0.6, piece, rotation=90, ha="center", va="top", fontsize=7)
a2.set_ylim(-4, T / 2 + 0.5)
a2.axis("off")
a2.set_title(f"allowed edges: each token reads only to its left ({mask.sum() - T} arcs + {T} self-edges)")
plt.show()

# %% [markdown]
# ## Attention heat maps
#
# Every layer has its own heads, each with its own weights. A few of them, on the same
# sentence (row = the query token, column = the key token it reads; the upper triangle is 0):

# %%
layers = [0, c.n_layers // 2, c.n_layers - 1]
heads = [0, 1, 2]
fig, axes = plt.subplots(len(layers), len(heads), figsize=(12, 11))
for r, layer in enumerate(layers):
    for col, hd in enumerate(heads):
        ax = axes[r, col]
        ax.imshow(model_weights[layer][hd], cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"layer {layer}, head {hd}", fontsize=9)
        ax.set_xticks(range(T), pieces, rotation=90, fontsize=6)
        ax.set_yticks(range(T), pieces, fontsize=6)
        ax.set_xlabel("key (read)", fontsize=7)
        ax.set_ylabel("query", fontsize=7)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Does "it" attend to "sea"?
#
# For every layer and head, take the weight that the query "it" puts on the key "sea". Many
# heads put most of their weight on the first token (a well-known "attention sink"); some do
# link the pronoun to its referent. We list the strongest heads and compare with what "it" gives
# the other noun, "light".

# %%
starts = np.cumsum([0] + [len(piece) for piece in pieces[:-1]])      # [T] character offsets

def position_of(word):
    """Index of the token holding the first letter of ``word``'s first occurrence."""
    return int(np.searchsorted(starts, SENTENCE.index(word) + 1, side="right") - 1)

it, sea, light = position_of(" it"), position_of(" sea"), position_of(" light")
W = np.stack(model_weights)                                            # [L, H, T, T]
to_sea, to_light = W[:, :, it, sea], W[:, :, it, light]                # [L, H] each
order = np.dstack(np.unravel_index(np.argsort(-to_sea, axis=None), to_sea.shape))[0]
print(f"'it' = token {it}, 'sea' = token {sea}, 'light' = token {light}; "
      f"a uniform row would give each of the {it + 1} visible tokens {1 / (it + 1):.3f}")
for layer, hd in order[:5]:
    print(f"layer {layer:2d} head {hd}: it→sea {to_sea[layer, hd]:.3f}   it→light {to_light[layer, hd]:.3f}")
print(f"heads where it→sea > it→light: {(to_sea > to_light).sum()} of {to_sea.size}; "
      f"mean over all heads: it→sea {to_sea.mean():.3f}, it→light {to_light.mean():.3f}")

best_layer, best_head = order[0]
fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.5))
a1.imshow(W[best_layer, best_head], cmap="viridis")
a1.set_xticks(range(T), pieces, rotation=90, fontsize=7)
a1.set_yticks(range(T), pieces, fontsize=7)
a1.set_xlabel("key (read)")
a1.set_ylabel("query")
a1.set_title(f"layer {best_layer}, head {best_head}: the strongest it→sea head")
a2.bar(range(T), W[best_layer, best_head, it])
a2.set_xticks(range(T), pieces, rotation=90, fontsize=7)
a2.set_ylabel("attention weight")
a2.set_title("the row of the query 'it' (positions after it are exactly 0)")
plt.tight_layout()
plt.show()

# %% [markdown]
# This is the seed's Q-K matching, measured: a handful of heads (listed above) route "it" to
# "sea" far above the uniform share, while the *average* head does not prefer "sea" over "light"
# at all. A model has no dedicated "pronoun resolver": some heads learned patterns that help
# predict the next token (the strongest one here also points many other positions at "sea", the
# subject of the sentence), and picking the best of a few hundred heads will always find
# *something* — read it as an illustration of Q-K matching, not as proof of understanding.
#
# ## Future weights are exactly 0
#
# The mask sets the future scores to −∞ before the softmax, and exp(−∞) is exactly 0.0 in
# floating point — not "small": zero. So nothing a position computes can depend on a later token.

# %%
future = ~causal_mask(T, T)                                            # [T, T] True above the diagonal
future_weights = W[:, :, future]                                       # [L, H, T(T-1)/2]
print(f"{future_weights.size} future weights over {c.n_layers} layers × {c.n_heads} heads; "
      f"largest: {future_weights.max()!r}; all exactly zero: {bool((future_weights == 0).all())}")
print("every row sums to 1 (largest deviation):", np.abs(W.sum(-1) - 1).max())

# %% [markdown]
# Because the future weights are exactly 0, changing a *later* token cannot change anything
# computed at an earlier position — notebook 04 checks this on the logits, and it is what lets
# training score every position of a sequence in one forward pass.

# %% [markdown]
# ## Skipping the zeros: a long prompt, a block of queries at a time
#
# Those exact zeros are also work saved. A prompt of T tokens has a T × T score matrix, and
# almost half of it is the masked triangle. When nobody asks for the weights (generation never
# does), the model computes attention for 64 queries at a time, each block over only the keys it
# can see (`query_blocks` in `minillm/model/attention.py`): the same formula, called on slices,
# the same output.

# %%
from minillm.model.attention import QUERY_BLOCK, query_blocks

rng = np.random.default_rng(0)
T_long, D = 512, 64
q_l, k_l, v_l = (rng.standard_normal((1, 12, T_long, D), dtype=np.float32) for _ in range(3))
mask_l = causal_mask(T_long, T_long)[None]                            # [1, T, T]
full, _ = scaled_dot_product(q_l, k_l, v_l, mask_l)                   # [1, 12, T, D]
blocked = query_blocks(q_l, k_l, v_l, mask_l)                          # [1, 12, T, D]
print("largest difference:", np.abs(full - blocked).max())
computed = sum(min(QUERY_BLOCK, T_long - t0) * min(T_long, t0 + QUERY_BLOCK)
               for t0 in range(0, T_long, QUERY_BLOCK))
print(f"scores computed: {computed:,} of {T_long * T_long:,} ({computed / T_long**2:.0%})")
