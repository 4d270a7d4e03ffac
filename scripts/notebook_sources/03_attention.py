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
# This notebook first does attention by hand on 4 tokens × 4 dimensions (scores, mask, softmax,
# weights @ V) and shows why a decoder-only model needs the causal mask; then computes Q, K and V
# for one layer of a real model with minillm's own functions, checks that they give exactly the
# weights the model uses, draws the mask as a graph, looks for a head in which "it" attends to
# "sea", measures the articles' 它 on a Chinese pair of sentences where 它 means two different
# things, checks that every weight on a future position is exactly 0, and rebuilds the rest of
# the block — norms, FFN, residual additions — up to the model's logits.
#
# **Try this:** change the toy `Q`, `K`, `V` (4 × 4 arrays, entries from −10 to 10), the real
# `SENTENCE` (up to 64 tokens; the words `QUERY`, `TARGET`, `OTHER` compared in it must occur in
# it), the `layers` / `heads` of the heat maps (1 to 4 of each, numbers inside the model), the
# Chinese pair `ZH_PAIR` (two sentences, each with 它 once and both nouns before it), the toy
# encoder-decoder's `X_src` (3 × 4) and `Y_tgt` (2 × 4, entries from −5 to 5), or the conversation
# `TURNS` (1 to 100), `USER` and `ANSWER` (1 to 10,000 tokens each), and re-run. A value outside
# its range is refused with a message before any work starts.

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
from minillm.model.rope import apply_rope, rope_angles
from minillm.tokenizer.display import render_token
from nbhelpers import claim, knob, load_pretrained

model, tok, model_name = load_pretrained(fast=False)   # plain ndarrays: model/ code only
c, p = model.config, model.params

# %% [markdown]
# ## Attention by hand: 4 tokens, 4 dimensions
#
# Four tokens, each already projected to a query, a key and a value of width D = 4 (in a model
# these are rows of `x @ W_q`, `x @ W_k`, `x @ W_v`). With D = 4, √D = 2: every number below can be
# checked with a pencil.

# %%
TOKENS = ["the", "sea", "is", "blue"]
Q = np.array([[1., 0, 0, 0], [0, 2, 0, 0], [2, 0, 2, 0], [0, 2, 0, 2]])   # [T, D] what each token looks for
K = np.array([[1., 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0], [0, 2, 0, 0]])   # [T, D] what each token offers
V = np.array([[1., 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]])   # [T, D] what it hands over
for name, value in (("Q", Q), ("K", K), ("V", V)):
    knob(name, value, lambda a: np.shape(a) == (4, 4) and np.abs(a).max() <= 10, "a 4 × 4 array, entries from −10 to 10")
np.set_printoptions(precision=2, suppress=True, linewidth=120)

toy_scores = Q @ K.T / math.sqrt(4)                  # [T, D] @ [D, T] -> [T, T]: query t · key s / 2
print("1. scores = Q Kᵀ / √D (row = query, column = key)\n", toy_scores)
toy_mask = causal_mask(4, 4)                         # [T, T] True where s ≤ t
toy_masked = np.where(toy_mask, toy_scores, -np.inf)
print("2. masked: the future set to -inf\n", toy_masked)
toy_weights = softmax(toy_masked)                    # [T, T] each row sums to 1
print("3. weights = softmax of each row\n", toy_weights)
toy_out = toy_weights @ V                            # [T, T] @ [T, D] -> [T, D]
print("4. output = weights @ V: each row a weighted average of the value rows it may see\n", toy_out)

assert np.allclose(toy_weights.sum(axis=1), 1) and (toy_weights[~toy_mask] == 0).all(), \
    "every row of weights sums to 1 and the future gets exactly 0 — for any Q, K, V"
assert (toy_out[0] == V[0]).all(), "the first token sees only itself: its output is its own value"
row1 = toy_scores[1, :2]                             # row 1 sees positions 0 and 1
print(f"✓ row 0 = V[0] exactly; row 1's weight on position 1 = e^{row1[1]:g} / (e^{row1[0]:g} + "
      f"e^{row1[1]:g}) = {math.exp(row1[1]) / np.exp(row1).sum():.4f}")
_ = claim(np.isclose(toy_weights[1, 1], math.exp(2) / (1 + math.exp(2))), "with the default Q and K, row 1's "
      "scores are 0 and 2, so its weight on 'sea' is e² / (e⁰ + e²) = 0.8808", "your Q, K give other scores")

# %% [markdown]
# Read row 3 ("blue"): its query [0, 2, 0, 2] matches the keys of "sea" and "blue" (score 2 each)
# and nothing else, so it splits its attention between them, and its output mixes their values.
# `scaled_dot_product` — the function the model calls — gives the same numbers:

# %%
out_lib, w_lib = scaled_dot_product(Q[None, None], K[None, None], V[None, None], toy_mask[None])
assert np.allclose(w_lib[0, 0], toy_weights) and np.allclose(out_lib[0, 0], toy_out), \
    f"scaled_dot_product differs from the hand computation by {np.abs(w_lib[0, 0] - toy_weights).max():.2g} "\
    f"(weights): if you edited the cell above, re-run it and this one in order"
print("✓ scaled_dot_product gives the same weights and output")

# %% [markdown]
# ## Why decoder-only: the causal mask against a bidirectional one
#
# An encoder (BERT) lets every token see every other (a mask of all True): good for understanding
# a finished text, useless for writing one, because position t's output would depend on the
# tokens after it — which do not exist yet when t is generated. A decoder-only model (GPT, Llama,
# DeepSeek) masks the future, so position t's output is final the moment t is known, and the same
# forward pass both trains every position at once and generates one token at a time. In code:
# change the LAST token and see which outputs move.

# %%
def attend(Q, K, V, mask):
    w = softmax(np.where(mask, Q @ K.T / math.sqrt(Q.shape[1]), -np.inf))
    return w @ V

bidirectional = np.ones((4, 4), dtype=bool)
K2, V2 = K.copy(), V.copy()
K2[3], V2[3] = [3., 0, 0, 0], [0, 0, 0, 5]           # a different last token
for name, m in (("causal", toy_mask), ("bidirectional", bidirectional)):
    moved = np.abs(attend(Q, K2, V2, m) - attend(Q, K, V, m)).max(axis=1)   # [T] per position
    print(f"{name:13s} mask: change per position after editing the last token: {moved}")
assert (np.abs(attend(Q, K2, V2, toy_mask) - attend(Q, K, V, toy_mask))[:3] == 0).all(), \
    "under the causal mask, editing the last token must not move the earlier positions"
_ = claim(np.abs(attend(Q, K2, V2, bidirectional) - attend(Q, K, V, bidirectional))[0].max() > 0.1,
      "under the bidirectional mask, editing the last token moves position 0",
      "your Q gives position 0 almost no weight on the last token")

# %% [markdown]
# Under the causal mask only the last position changes; under the bidirectional one every
# position does — the first token's representation would depend on words not yet written.
#
# ## The same on a real model
#
# The explainer articles' example is Chinese (它 → 海水). SmolLM2 was trained mostly on English, and its
# vocabulary cuts both words into byte fragments (notebook 01), so we start with an English
# sentence, whose pronoun "it" refers to "sea" (a Chinese pair with 它 follows further down).

# %%
for word in ("海水", "它"):
    print(word, "→", [render_token(tok.token_bytes(i)) for i in tok.encode(word)])
SENTENCE = "The sea absorbs most of the red light. That is why it looks blue."
QUERY, TARGET, OTHER = " it", " sea", " light"      # compared below: does QUERY attend to TARGET?
knob("SENTENCE", SENTENCE, lambda t: 1 <= len(tok.encode(t)) <= 64, "a str of 1 to 64 tokens")
for name, word in (("QUERY", QUERY), ("TARGET", TARGET), ("OTHER", OTHER)):
    knob(name, word, lambda w: isinstance(w, str) and w.strip() and w in SENTENCE, "a word of SENTENCE")
ids = np.array(tok.encode(SENTENCE))                   # [T]
pieces = [render_token(tok.token_bytes(i)) for i in ids]         # shown: <e6 b5> = part of a character
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
    cos, sin = (a[:, None] for a in rope_angles(positions, c.d_head, c.rope_theta))  # [1, 1, T, D/2]
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
diff_sdp = np.abs(by_hand - sdp_weights[0, head]).max()
diff_model = np.abs(by_hand - model_weights[0][head]).max()
print("by hand vs scaled_dot_product:", diff_sdp)
print("by hand vs the model's layer 0:", diff_model)
assert diff_sdp < 1e-6 and diff_model < 1e-6, f"the weights by hand should equal scaled_dot_product's and " \
    f"the model's (float32, ±1e-6); they differ by {diff_sdp:.2g} and {diff_model:.2g}: re-run the cells above in order"
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
# sentence (row = the query token, column = the key token it reads; the upper triangle is 0;
# colour = weight, from 0 to 1 on every map):

# %%
layers = [0, c.n_layers - 1]
heads = [0, 1, 2]
knob("layers", layers, lambda ls: 1 <= len(ls) <= 4 and all(0 <= n < c.n_layers for n in ls),
     f"a list of 1 to 4 layer numbers from 0 to {c.n_layers - 1}")
knob("heads", heads, lambda hs: 1 <= len(hs) <= 4 and all(0 <= n < c.n_heads for n in hs),
     f"a list of 1 to 4 head numbers from 0 to {c.n_heads - 1}")
fig, axes = plt.subplots(len(layers), len(heads), figsize=(15, 10), constrained_layout=True,
                         squeeze=False)                          # [layers, heads] even for one of each
for r, layer in enumerate(layers):
    for col, hd in enumerate(heads):
        ax = axes[r, col]
        image = ax.imshow(model_weights[layer][hd], cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"layer {layer}, head {hd}", fontsize=10)
        ax.set_xticks(range(T), [piece.strip() or repr(piece) for piece in pieces], rotation=90, fontsize=8)
        ax.set_yticks(range(T), [piece.strip() or repr(piece) for piece in pieces], fontsize=8)
        ax.set_xlabel("key (read)", fontsize=9)
        ax.set_ylabel("query", fontsize=9)
fig.colorbar(image, ax=axes, shrink=0.6, label="attention weight")
plt.show()

# %% [markdown]
# ## Does "it" attend to "sea"?
#
# For every layer and head, take the weight that the query "it" (`QUERY`) puts on the key "sea"
# (`TARGET`). Many heads put most of their weight on the first token (a well-known "attention
# sink"); some do link the pronoun to its referent. We list the strongest heads and compare with
# what "it" gives the other noun, "light" (`OTHER`).

# %%
starts = np.cumsum([0] + [len(tok.decode([i])) for i in ids[:-1]])   # [T] character offsets

def position_of(word):
    """Index of the token holding the first letter of ``word``'s first occurrence."""
    if word not in SENTENCE:
        raise ValueError(f"{word!r} is not in SENTENCE: set QUERY, TARGET, OTHER to words of it")
    return int(np.searchsorted(starts, SENTENCE.index(word) + 1, side="right") - 1)

it, sea, light = position_of(QUERY), position_of(TARGET), position_of(OTHER)
q_word, t_word, o_word = QUERY.strip(), TARGET.strip(), OTHER.strip()   # labels for the printouts
to_t, to_o = f"{q_word}→{t_word}", f"{q_word}→{o_word}"
W = np.stack(model_weights)                                            # [L, H, T, T]
to_sea, to_light = W[:, :, it, sea], W[:, :, it, light]                # [L, H] each
order = np.dstack(np.unravel_index(np.argsort(-to_sea, axis=None), to_sea.shape))[0]
print(f"'{q_word}' = token {it}, '{t_word}' = token {sea}, '{o_word}' = token {light}; "
      f"a uniform row would give each of the {it + 1} visible tokens {1 / (it + 1):.3f}")
if sea > it or light > it:
    print(f"(a word after '{q_word}' gets weight 0 from it: the causal mask)")
for layer, hd in order[:5]:
    print(f"layer {layer:2d} head {hd}: {to_t} {to_sea[layer, hd]:.3f}   {to_o} {to_light[layer, hd]:.3f}")
print(f"heads where {to_t} > {to_o}: {(to_sea > to_light).sum()} of {to_sea.size}; "
      f"mean over all heads: {to_t} {to_sea.mean():.3f}, {to_o} {to_light.mean():.3f}")

best_layer, best_head = order[0]
fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.5))
fig.colorbar(a1.imshow(W[best_layer, best_head], cmap="viridis", vmin=0, vmax=1), ax=a1,
             label="attention weight")
a1.set_xticks(range(T), pieces, rotation=90, fontsize=7)
a1.set_yticks(range(T), pieces, fontsize=7)
a1.set_xlabel("key (read)")
a1.set_ylabel("query")
a1.set_title(f"layer {best_layer}, head {best_head}: the strongest {to_t} head")
a2.bar(range(T), W[best_layer, best_head, it])
a2.set_xticks(range(T), pieces, rotation=90, fontsize=7)
a2.set_ylabel("attention weight")
a2.set_title(f"the row of the query '{q_word}' (positions after it are exactly 0)")
plt.tight_layout()
plt.show()

# %%
if model_name == "SmolLM2-135M-Instruct":      # the claims of the next paragraph, checked
    uniform = 1 / (it + 1)
    sinks = (W[:, :, -1].argmax(axis=-1) == 0).mean()          # the last query's favourite is token 0
    later = W[best_layer, best_head, sea + 1:, sea]                  # what later queries give TARGET
    share = float(np.mean(later > 1 / np.arange(sea + 2, T + 1)))   # above their uniform share
    claim(to_sea.max() > 3 * uniform and to_sea.mean() < 1.5 * to_light.mean() and sinks > 0.3
          and share > 0.5, "the claims below hold for this SENTENCE",
          f"best {to_t} {to_sea.max():.3f} vs 3 × uniform {3 * uniform:.3f}; {sinks:.0%} sink heads; "
          f"{share:.0%} of later positions above uniform on '{t_word}'")
    print(f" best {to_t} head {to_sea.max():.3f} vs 3 × uniform ({3 * uniform:.3f}); average head "
          f"{to_t} {to_sea.mean():.3f} vs {to_o} {to_light.mean():.3f}; {sinks:.0%} of heads "
          f"send the last query mostly to the first token; the best head gives '{t_word}' more than "
          f"the uniform share at {share:.0%} of the later positions")
else:
    print("The pronoun demonstration needs SmolLM2 (python -m minillm download smollm2): the small "
          "fallback model was trained on too little English for a head to link 'it' to 'sea', so "
          "the next paragraph describes SmolLM2, not the numbers above.")

# %% [markdown]
# This is the articles' Q-K matching, measured (with SmolLM2): a handful of heads (listed above)
# route "it" to "sea" far above the uniform share, while the *average* head does not prefer "sea"
# over "light" at all. A model has no dedicated "pronoun resolver": some heads learned patterns
# that help predict the next token (the strongest one here also gives "sea", the subject of the
# sentence, more than its uniform share at more than half of the later positions), and picking
# the best of a few hundred heads will always find *something* — read it as an illustration of Q-K matching, not as proof of understanding.
#
# ## 它 in Chinese: one pronoun, two referents
#
# The articles' sentence (海水会吸收较多红光，…) has no 它 in it, and one sentence cannot show that
# a head *resolves* a pronoun rather than always looking at the same place. A fair test is a
# pair of sentences identical except for one word that decides what 它 refers to:
#
#     我有一本书和一只猫。我喂了它。   "I have a book and a cat. I fed it."   它 = 猫 (the cat)
#     我有一本书和一只猫。我读了它。   "I have a book and a cat. I read it."  它 = 书 (the book)
#
# The deciding verb (喂 feed / 读 read) comes *before* 它 on purpose: under the causal mask 它's
# position cannot see anything after it, so a pair decided by a later word ("…因为它太慢了")
# gives exactly the same weights at 它 in both sentences. For each head, the shift
#
#     d = (w(它→猫) − w(它→书)) in sentence 1 − (w(它→猫) − w(它→书)) in sentence 2
#
# is positive when the head moves its weight towards the right noun as the verb changes. A head
# that ignores the verb has d = 0; chance moves both ways, so the count of heads with d > 0.05 is
# compared with the count with d < −0.05. (SmolLM2 cuts these characters into byte pieces; a
# noun's weight is the sum over the tokens that hold any of its bytes, and the query is the last
# token of 它.) The same pair in English, for comparison:

# %%
ZH_PAIR = ("我有一本书和一只猫。我喂了它。", "我有一本书和一只猫。我读了它。", "猫", "书")
EN_PAIR = ("I have a book and a cat. I fed it.", "I have a book and a cat. I read it.", "cat", "book")
knob("ZH_PAIR", ZH_PAIR, lambda z: len(z) == 4 and all(
        x.count("它") == 1 and z[2] in x[:x.index("它")] and z[3] in x[:x.index("它")] for x in z[:2]),
     "(sentence 1, sentence 2, noun 1, noun 2): each sentence with 它 once and both nouns before it")


def token_span(text, word, token_ids):
    """Indices of the tokens holding any byte of ``word``'s first occurrence in ``text``."""
    start = len(text[:text.index(word)].encode("utf-8"))
    end, spans, offset = start + len(word.encode("utf-8")), [], 0
    for k, i in enumerate(token_ids):
        width = len(tok.token_bytes(int(i)))
        if offset < end and offset + width > start:
            spans.append(k)
        offset += width
    return spans


def pronoun_shift(pair, pronoun):
    """Per head [L, H]: the weight the pronoun's last token gives noun 1 minus noun 2, sentence 1
    minus sentence 2 (d above), and the four weights behind it."""
    first, second, noun1, noun2 = pair
    weights = []
    for text in (first, second):
        token_ids = tok.encode(text)
        _, per_layer = model(np.array(token_ids), return_weights=True)  # L × [H, T, T]
        w = np.stack(per_layer)                                          # [L, H, T, T]
        query = token_span(text, pronoun, token_ids)[-1]
        weights.append([w[:, :, query, token_span(text, noun, token_ids)].sum(-1) for noun in (noun1, noun2)])
    (a1, b1), (a2, b2) = weights                                       # [L, H] each
    return (a1 - b1) - (a2 - b2), weights


shifts, noun_weights = {}, {}
for label, pair, pronoun in (("Chinese", ZH_PAIR, "它"), ("English", EN_PAIR, " it")):
    d, ((a1, b1), (a2, b2)) = pronoun_shift(pair, pronoun)
    shifts[label], noun_weights[label] = d, ((a1, b1), (a2, b2))
    L_best, H_best = np.unravel_index(np.argmax(d), d.shape)
    print(f"{label}: heads with d > 0.05: {(d > 0.05).sum()}, with d < −0.05: {(d < -0.05).sum()} "
          f"(of {d.size}); mean d {d.mean():+.3f}")
    print(f"   best head: layer {L_best}, head {H_best} (d = {d[L_best, H_best]:+.3f}): "
          f"{pair[2]} {a1[L_best, H_best]:.3f} / {pair[3]} {b1[L_best, H_best]:.3f} in sentence 1, "
          f"{pair[2]} {a2[L_best, H_best]:.3f} / {pair[3]} {b2[L_best, H_best]:.3f} in sentence 2")

fig, ax = plt.subplots(figsize=(7, 5.5))
ax.scatter(shifts["English"].ravel(), shifts["Chinese"].ravel(), s=12)
ax.axhline(0, color="grey", lw=0.5)
ax.axvline(0, color="grey", lw=0.5)
ax.set_xlabel("d, English pair (fed / read it)")
ax.set_ylabel("d, Chinese pair (wei / du: fed / read)")   # the plot font has no CJK glyphs
ax.set_title(f"{model_name}: one dot per head (d > 0: towards the right noun)", fontsize=10)
plt.tight_layout()
plt.show()
zh_best = np.unravel_index(np.argmax(shifts["Chinese"]), shifts["Chinese"].shape)
print(f"the head that moves most in Chinese (layer {zh_best[0]}, head {zh_best[1]}) has d = "
      f"{shifts['English'][zh_best]:+.3f} in English")

# %%
if model_name == "SmolLM2-135M-Instruct" and ZH_PAIR[0].startswith("我有一本书"):   # the next paragraph, checked
    zh, en = shifts["Chinese"], shifts["English"]
    claim((en > 0.05).sum() > 3 * (en < -0.05).sum() and en.max() > 0.5,
          "in English, several heads move towards the right noun and few the wrong way; the best by more than 0.5",
          f"{(en > 0.05).sum()} vs {(en < -0.05).sum()} heads, best {en.max():.2f}")
    claim(zh.max() < 0.5 * en.max() and (zh > 0.05).sum() < (en > 0.05).sum(),
          "in Chinese the shift is far weaker: fewer heads, and the best moves less than half as far",
          f"Chinese {(zh > 0.05).sum()} heads, best {zh.max():.2f}; English {(en > 0.05).sum()}, best {en.max():.2f}")
    claim(en[zh_best] > 0.5, "the head that moves most in Chinese moves by more than 0.5 in English",
          f"it moves by {en[zh_best]:+.2f} there")
    (cat_1, book_1), (cat_2, book_2) = (tuple(w[zh_best] for w in ws) for ws in noun_weights["Chinese"])
    claim(cat_1 < book_1, "yet even that head gives 它 more weight on 书 than on 猫 in the 喂 (fed) sentence, "
          "where 它 is the cat: it shifts, it does not resolve",
          f"猫 {cat_1:.3f}, 书 {book_1:.3f}")
    print(f"heads that move by more than 0.05 towards the right noun: Chinese {(zh > 0.05).sum()}, "
          f"English {(en > 0.05).sum()} of {zh.size}")
else:
    print("The paragraph below describes SmolLM2 on the default ZH_PAIR (python -m minillm download "
          "smollm2); the small fallback model knows no Chinese and little English.")

# %% [markdown]
# Read with SmolLM2 (the claims above check it): in English a few heads do what the articles
# describe — the best one's weights on "cat" and "book" swap when "fed" becomes "read" — and heads
# that move the wrong way are rare. In Chinese the shift is far weaker: SmolLM2 saw little
# Chinese in training and reads 它, 猫 and 书 as byte pieces. The line under the scatter says
# whether the head that moves most in Chinese also does the job in English (checked: on the
# default pair it does). So the articles' 它 → 海水 describes a model trained on much Chinese
# (DeepSeek); for this small English model the honest answer is: no. In Chinese only a handful
# of heads move at all, and even the one that moves most (a head that does the job in English)
# still gives 它 more weight on 书 than on 猫 in the sentence where 它 is the cat (both checked
# above): the verb nudges its weights, it does not pick the referent.
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
assert (future_weights == 0).all() and np.abs(W.sum(-1) - 1).max() < 1e-5, \
    f"expected future weights exactly 0 and rows summing to 1 (±1e-5); got largest future weight "\
    f"{future_weights.max()!r}, row-sum deviation {np.abs(W.sum(-1) - 1).max():.2g}: re-run the cells that compute W"

# %% [markdown]
# Because the future weights are exactly 0, changing a *later* token cannot change anything
# computed at an earlier position — notebook 04 checks this on the logits, and it is what lets
# training score every position of a sequence in one forward pass.

# %% [markdown]
# ## Skipping the zeros: a long prompt, a block of queries at a time
#
# Those exact zeros are also work saved. A prompt of T tokens has a T × T score matrix, and
# almost half of it is the masked triangle. When nobody asks for the weights (generation never
# does), the engine (the fast model `load_model` gives by default) computes attention for 64
# queries at a time, each block over only the keys it can see (`query_blocks` in
# `minillm/engine/layers.py`): the same formula, called on slices, the same output.

# %%
from minillm.engine.layers import QUERY_BLOCK, query_blocks

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
assert np.abs(full - blocked).max() < 1e-5, \
    f"query blocks should give the full attention's output (float32, ±1e-5); largest difference {np.abs(full - blocked).max():.2g}"
assert computed / T_long**2 < 0.6, \
    f"blocks of {QUERY_BLOCK} queries should skip most of the masked triangle at T = {T_long}: "\
    f"{computed / T_long**2:.0%} computed; try a longer T_long"

# %% [markdown]
# ## The rest of the block: norms, FFN, residual additions
#
# Attention is half of a block. The whole block (pre-norm, as GPT-2 and Llama both use) is
#
#     x = x + Attention(Norm₁(x))      positions exchange information (only with the past)
#     x = x + FFN(Norm₂(x))            each position is transformed on its own
#
# The FFN is two matrix products with a non-linearity between them (GELU for GPT-2, SwiGLU for
# Llama) applied to each position separately; the norms rescale each position's vector; the
# additions are the *residual stream*: each sub-layer reads it and writes a correction into it.
# Written out for every layer, then the final norm and the product with the embedding matrix
# (tied) — the model's logits, rebuilt:

# %%
from minillm.model.attention import attention
from minillm.model.ffn import ffn
from minillm.hooks import Layer   # (what a layer's attention needs: config, mask, angles)

rope = (cos, sin) if c.position == "rope" else None
x = embed(p.wte, ids[None], p.wpe, positions)                          # [1, T, C]
stream = [np.linalg.norm(x[0, -1])]
for bp in p.blocks:
    a = attention(norm(x, bp.norm1, c.norm, c.norm_eps), bp.attn, Layer(c, mask[None], rope))
    x = x + a                                                          # [1, T, C] residual add 1
    x = x + ffn(norm(x, bp.norm2, c.norm, c.norm_eps), bp.ffn, c.ffn)  # [1, T, C] residual add 2
    stream.append(np.linalg.norm(x[0, -1]))
x = norm(x, p.norm_f, c.norm, c.norm_eps)                              # [1, T, C]
head_matrix = p.wte.T if p.lm_head is None else p.lm_head              # [C, V]
logits_by_hand = (x @ head_matrix)[0]                                  # [T, V]
diff = np.abs(logits_by_hand - model(ids)).max()
print(f"logits by hand vs model(ids): largest difference {diff:.2e} (logits up to "
      f"{np.abs(logits_by_hand).max():.0f})")
assert diff < 1e-3, f"the block rebuilt by hand should give model(ids)'s logits (float32, ±1e-3); largest " \
    f"difference {diff:.2g}: re-run this cell after the ones above"
print("size of the last position's vector in the residual stream, after each layer:",
      np.round(stream, 1))

# %% [markdown]
# ## Beside decoder-only: a toy encoder-decoder with cross-attention
#
# > Encoder-Decoder 并不是更高级，只是为"输入-输出映射"设计的，比如：翻译、摘要、问答……
# > 而 GPT 要做的是：无限续写一个序列。……输入和输出是同一个东西。于是 Encoder 的角色就彻底消失了。
# >
# > *Encoder-decoder is not more advanced; it was designed for input → output mappings such as
# > translation, summarisation, question answering … What GPT does is continue one sequence
# > without end … the input and the output are the same thing. So the encoder's role disappears.*
#
# The original Transformer (2017, for translation), T5 and BART have two stacks. The **encoder**
# reads the whole source with self-attention and *no* mask (every source token sees every
# other). The **decoder** writes the target with causal self-attention, plus **cross-attention**:
# its queries come from the decoder, its keys and values from the encoder's output, so every
# target position may read every source position. A toy translation, 大海 是 蓝色 → "⟨s⟩ sea …":
# 3 source tokens, 2 target tokens so far, D = 4 (√D = 2). To keep every number checkable with a
# pencil the projections are the identity (a real layer multiplies by W_q, W_k, W_v first, and
# adds residuals, norms and an FFN around each attention).
#
# Each attention is computed twice: **by hand** — a loop over single numbers, exactly the formula
# weight[t, s] = exp(q_t·k_s / √D) / Σ_s′ exp(q_t·k_s′ / √D) over the allowed s — and **by code**
# with matrices, as a model does. They must agree.

# %%
SRC_WORDS, TGT_WORDS = ["大海", "是", "蓝色"], ["⟨s⟩", "sea"]             # labels for the rows below
X_src = np.array([[2., 0, 0, 0], [1, 0, 1, 0], [0, 2, 0, 0]])    # [S, D] the source embeddings
Y_tgt = np.array([[0., 0, 0, 2], [2, 0, 0, 0]])                  # [T, D] the target so far
knob("X_src", X_src, lambda a: np.shape(a) == (3, 4) and np.abs(a).max() <= 5, "a 3 × 4 array, entries from −5 to 5")
knob("Y_tgt", Y_tgt, lambda a: np.shape(a) == (2, 4) and np.abs(a).max() <= 5, "a 2 × 4 array, entries from −5 to 5")


def attention_by_hand(q, k, v, allowed=None):
    """Weights and outputs from single numbers: q [T][D], k and v [S][D], allowed[t][s] or None."""
    weights, outputs = [], []
    for t in range(len(q)):
        seen = [s for s in range(len(k)) if allowed is None or allowed[t][s]]
        score = {s: sum(q[t][d] * k[s][d] for d in range(len(q[t]))) / math.sqrt(len(q[t]))
                 for s in seen}
        total = sum(math.exp(score[s]) for s in seen)
        w = [math.exp(score[s]) / total if s in score else 0.0 for s in range(len(k))]
        weights.append(w)
        outputs.append([sum(w[s] * v[s][d] for s in range(len(k))) for d in range(len(v[0]))])
    return np.array(weights), np.array(outputs)


def attention_by_code(q, k, v, allowed=None):
    """The same with matrices: q [T, D], k and v [S, D], allowed [T, S] bool or None (no mask)."""
    scores = q @ k.T / math.sqrt(q.shape[-1])                    # [T, D] @ [D, S] -> [T, S]
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)               # [T, S] the masked pairs: -inf
    weights = softmax(scores)                                     # [T, S] each row sums to 1
    return weights, weights @ v                                   # [T, S] @ [S, D] -> [T, D]


def same(by_hand, by_code, what):
    assert all(np.allclose(a, b, atol=1e-6) for a, b in zip(by_hand, by_code)), \
        f"{what}: the loop and the matrices disagree — a knob produced a case they treat differently?"
    print(f"✓ {what}: by hand = by code")

# %% [markdown]
# **1. Encoder self-attention, no mask** ([S, S]): query and key are both the source, and every
# entry is allowed. Row 0 (大海) has scores [4/2, 2/2, 0/2] = [2, 1, 0], so its weights are
# [e², e, 1] / (e² + e + 1).

# %%
enc_w, H_enc = attention_by_code(X_src, X_src, X_src)                # [S, S], [S, D]
same(attention_by_hand(X_src, X_src, X_src), (enc_w, H_enc), "encoder self-attention")
print("weights (row = source query, column = source key):\n", enc_w)
print("encoder output H:\n", H_enc)
e = math.e
pencil = [e**2 / (e**2 + e + 1), e / (e**2 + e + 1), 1 / (e**2 + e + 1)]
if X_src.tolist() == [[2, 0, 0, 0], [1, 0, 1, 0], [0, 2, 0, 0]]:   # the pencil check: these rows
    assert np.allclose(enc_w[0], pencil), (enc_w[0], pencil)
    print("✓ row 0 = [e², e, 1] / (e² + e + 1) =", np.round(pencil, 4))
assert (enc_w > 0).all(), "no mask: every source token sees every other"

# %% [markdown]
# **2. Decoder self-attention, causal** ([T, T]): the target reads only its own past. Row 0 (⟨s⟩)
# sees only itself; row 1 ("sea") has scores [0, 4/2] = [0, 2]: weights [1, e²] / (1 + e²).

# %%
dec_allowed = causal_mask(len(TGT_WORDS), len(TGT_WORDS))                 # [T, T] True where s ≤ t
dec_w, Z_dec = attention_by_code(Y_tgt, Y_tgt, Y_tgt, dec_allowed)  # [T, T], [T, D]
same(attention_by_hand(Y_tgt, Y_tgt, Y_tgt, dec_allowed), (dec_w, Z_dec), "decoder self-attention")
print("weights:\n", dec_w, "\ndecoder output Z:\n", Z_dec)
assert (dec_w[~dec_allowed] == 0).all(), "the decoder never reads a later target token"

# %% [markdown]
# **3. Cross-attention** ([T, S], no mask): queries from the decoder (Z), keys and values from the
# encoder (H). Its weights are a rectangle — one row per target position, one column per source
# token — and every target position may read the whole source, future or not: the source is
# complete before decoding starts. With the default numbers row 0 is exactly uniform: Z[0] =
# [0, 0, 0, 2] has nothing in common with any H row (all have 0 in the last dimension), so all
# three scores are 0 and each weight is 1/3.

# %%
cross_w, cross_out = attention_by_code(Z_dec, H_enc, H_enc)         # [T, S], [T, D]
same(attention_by_hand(Z_dec, H_enc, H_enc), (cross_w, cross_out), "cross-attention")
print(f"cross-attention weights [T_dec, S_enc] = {list(cross_w.shape)} "
      f"(row = target {TGT_WORDS}, column = source {SRC_WORDS}):\n", cross_w)
print("cross-attention output (what each target position takes from the source):\n", cross_out)
assert cross_w.shape == (len(TGT_WORDS), len(SRC_WORDS)) and (cross_w > 0).all(), \
    "cross-attention has no mask: every target position reads every source token"
if np.allclose(Z_dec[0] @ H_enc.T, 0):
    assert np.allclose(cross_w[0], 1 / 3), \
        f"equal scores must give equal weights, got {cross_w[0]}: check softmax over the last axis"
    print("✓ row 0: Z[0]·H[s] = 0 for every s, so the weights are [1/3, 1/3, 1/3]")

# %% [markdown]
# **What depends on what.** Change the last *source* token: with no mask in the encoder, every
# encoder output moves, and so does every target position's cross-attention. Change the last
# *target* token: the earlier target position does not move (causal).

# %%
def toy_encoder_decoder(X_src, Y_tgt):
    _, H = attention_by_code(X_src, X_src, X_src)                                   # [S, D]
    _, Z = attention_by_code(Y_tgt, Y_tgt, Y_tgt, causal_mask(len(Y_tgt), len(Y_tgt)))   # [T, D]
    return H, attention_by_code(Z, H, H)[1]                                         # [S, D], [T, D]

H0, out0 = toy_encoder_decoder(X_src, Y_tgt)
X_edit, Y_edit = X_src.copy(), Y_tgt.copy()
X_edit[-1], Y_edit[-1] = [0., 0, 2, 2], [0., 2, 0, 2]               # another last token in each
H1, out1 = toy_encoder_decoder(X_edit, Y_tgt)
_, out2 = toy_encoder_decoder(X_src, Y_edit)
print("edit the last source token → change of each encoder output:", np.abs(H1 - H0).max(axis=1))
print("                           → change of each target position: ", np.abs(out1 - out0).max(axis=1))
print("edit the last target token → change of each target position: ", np.abs(out2 - out0).max(axis=1))
assert (np.abs(out2 - out0)[:-1] == 0).all(), "an earlier target position must not see a later one"
_ = claim((np.abs(H1 - H0).max(axis=1) > 0).all(), "no mask: every encoder output moved with the last source token",
      "an output moved by less than float64 can show: its weight on the last token underflows (e^-60 and less)")

# %% [markdown]
# ## The same five tokens in a decoder-only model
#
# A decoder-only model puts source and target in ONE sequence and uses ONE causal mask. The block
# of that mask where the target rows meet the source columns is all True — the target reads the
# whole source, the job cross-attention did — but the source itself is now read causally (大海
# no longer sees 蓝色), and there is one stack and one kind of attention instead of three.

# %%
sequence = SRC_WORDS + TGT_WORDS
one_mask = causal_mask(len(sequence), len(sequence))               # [S+T, S+T]
S_len = len(SRC_WORDS)
print("rows and columns:", " | ".join(sequence))
print(one_mask.astype(int))
assert one_mask[S_len:, :S_len].all(), "target rows read every source column, as cross-attention does"
assert not one_mask[:S_len, :S_len].all(), "but the source part is causal, unlike the encoder"
print(f"target × source block: all True ({len(TGT_WORDS)} × {S_len}, = cross-attention's reach); "
      f"source × source block: {one_mask[:S_len, :S_len].sum()} of {S_len ** 2} allowed (causal)")

# %% [markdown]
# ## Why chat models are decoder-only
#
# - **One stack, one sequence.** In a chat the input and the output are the same thing: the
#   answer just given is part of the next question's context. A decoder-only model has no
#   boundary to place: system prompt, question, answer, the next question — one growing sequence,
#   one set of weights that both reads and writes, and it trains on plain text with one
#   objective (every position predicts the next one), where an encoder-decoder needs each text
#   split into a source and a target (pairs, or spans cut out of the text, as T5 does).
# - **The KV cache survives.** With a causal mask, appending tokens changes nothing already
#   computed (checked above), so the keys and values of the whole conversation are kept and
#   each new token costs one position (notebook 05). An encoder has no mask: appending a token
#   changes every encoder output (also checked above), so when the conversation becomes the new
#   source the encoder must read all of it again.
#
# Counted for a conversation of `TURNS` turns, each a `USER`-token message and an `ANSWER`-token
# reply (positions pushed through a stack; the encoder-decoder's decoder keeps its own cache
# within a reply):

# %%
TURNS, USER, ANSWER = 20, 50, 100
knob("TURNS", TURNS, lambda n: isinstance(n, int) and 1 <= n <= 100, "a whole number from 1 to 100")
for name, value in (("USER", USER), ("ANSWER", ANSWER)):
    knob(name, value, lambda n: isinstance(n, int) and 1 <= n <= 10_000, "a whole number from 1 to 10,000")
enc_dec = dec_only = 0
for turn in range(1, TURNS + 1):
    source = turn * USER + (turn - 1) * ANSWER    # everything so far is the source: re-encoded
    enc_dec += source + ANSWER                     # the encoder's positions + the decoder's
    dec_only += USER + ANSWER                      # only the new tokens: the cache holds the rest
print(f"{TURNS} turns of {USER} + {ANSWER} tokens: encoder-decoder {enc_dec:,} positions, "
      f"decoder-only with its KV cache {dec_only:,} (the encoder-decoder: "
      f"{enc_dec / dec_only:.1f}× as many)")
assert dec_only == TURNS * (USER + ANSWER) and (TURNS == 1 or enc_dec > dec_only), \
    f"the counts above: decoder-only {dec_only:,} should be TURNS·(USER + ANSWER) and, past one " \
    f"turn, fewer than the encoder-decoder's {enc_dec:,}; check the loop's two sums"

# %% [markdown]
# ## Exercises
#
# Write the function, run the cell: `check` prints the first case it gets wrong, or how many it
# passed. Solutions: `solutions/03_attention.py`.
#
# **1. Softmax** over the last axis of `x` ([N], or [N, V]: each row sums to 1), without
# overflowing on logits like [1000, 999, 998].

# %%
from exercises import check

def softmax_(x):
    raise NotImplementedError    # your code here

check("softmax", softmax_)

# %% [markdown]
# **2. The causal mask**: `causal_mask(T)` -> a [T, T] bool array, True where query t may see key s
# (an additive mask — 0 where visible, −inf where hidden — is accepted too).

# %%
def causal_mask_(T):
    raise NotImplementedError    # your code here

check("causal_mask", causal_mask_)

# %% [markdown]
# **3. Attention for one head**: `q`, `k`, `v` are [T, D]; return softmax(q kᵀ / √D + mask) v.

# %%
def attention_head(q, k, v):
    raise NotImplementedError    # your code here

check("attention_head", attention_head)

# %% [markdown]
# **4. Layer norm**: `x` [N, C], weight `w` [C], bias `b` [C] -> (x − mean) / √(var + eps) · w + b,
# each row on its own (the variance divides by C).

# %%
def layer_norm(x, w, b, eps):
    raise NotImplementedError    # your code here

check("layer_norm", layer_norm)
