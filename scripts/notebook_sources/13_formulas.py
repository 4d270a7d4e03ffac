# %% [markdown]
# # 13 · The formulas, each from a toy
#
# Notebook 14 has you write every part of the model. Each part is one formula, and each formula
# has a reason. Here every one is computed on a toy small enough to read: why attention divides by
# √D, why several heads, RoPE's rotations, RMSNorm against LayerNorm, the tanh GELU against the erf
# GELU and SwiGLU, and how 9 query heads share 3 KV heads (h // G).
#
# **Try this:** each section's knob has a stated range, checked before the section runs:
# `DIMS` (head widths, each 1–1024) and `SAMPLES` (1,000–50,000), `SHARPNESS` (0.5–20),
# `THETA` (10–1,000,000) and `PAIRS` (1–32), `OFFSET` (−100 to 100), `GELU_RANGE` (1–10),
# `N_HEADS` and `N_KV` (1–32, `N_HEADS` a multiple of `N_KV`).

# %%
import math

import numpy as np

from minillm.model.ffn import gelu_tanh, silu
from minillm.model.norm import layer_norm, rms_norm
from minillm.model.rope import apply_rope, rope_angles
from nbhelpers import claim


def in_range(name, value, low, high):
    """Stop before any work when a knob leaves its stated range."""
    values = value if isinstance(value, (list, tuple)) else [value]
    if not values or any(not low <= v <= high for v in values):
        raise ValueError(f"{name} = {value!r} is outside its range [{low}, {high}]")


def softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


rng = np.random.default_rng(0)

# %% [markdown]
# ## 1. Why divide by √D
#
# A score is q·k = Σ q_i k_i over the D dimensions of a head. With q and k of unit-variance
# entries (what the norms before attention aim for), each product has variance 1 and the D of them
# add: **var(q·k) = D**. At D = 64 a score is typically ±8, and softmax of numbers that far apart
# leans towards one-hot: the largest of 8 weights grows with D unscaled and stays put scaled
# (printed below). Its gradient shrinks with it: ∂w_i/∂s_i = w_i(1 − w_i) is 0 at a weight of 0 or
# 1, so the sum Σ w_i(1 − w_i) (the trace of the softmax's Jacobian, printed too) falls as D
# grows — the scores learn slowly. Dividing by √D brings the variance back to 1, for every D.
# Measured:

# %%
DIMS, SAMPLES = [4, 16, 64, 256], 20_000
in_range("DIMS", DIMS, 1, 1024)
in_range("SAMPLES", SAMPLES, 1_000, 50_000)
ratios = []
for D in DIMS:
    scores = np.concatenate([                                 # [SAMPLES] one q·k each, 5,000 at a time
        (rng.standard_normal((n, D)) * rng.standard_normal((n, D))).sum(-1)
        for n in [5_000] * (SAMPLES // 5_000) + [SAMPLES % 5_000] if n])
    ratios.append(scores.var() / D)
    keys, query = rng.standard_normal((200, 8, D)), rng.standard_normal((200, 1, D))
    raw = (keys * query).sum(-1)                              # [200, 8]: 200 queries, 8 keys each
    w_raw, w_scaled = softmax(raw), softmax(raw / math.sqrt(D))   # [200, 8] each
    print(f"D = {D:4d}: var(q·k) = {scores.var():8.2f}   var(q·k / √D) = {(scores / math.sqrt(D)).var():.3f}"
          f"   mean largest of 8 weights: {w_raw.max(-1).mean():.2f} unscaled, "
          f"{w_scaled.max(-1).mean():.2f} scaled;   mean Σ w(1 − w): "
          f"{(w_raw * (1 - w_raw)).sum(-1).mean():.2f} unscaled, {(w_scaled * (1 - w_scaled)).sum(-1).mean():.2f} scaled")
# subtle: the sample variance of N scores has relative standard error at most √(8/N) (the
# product of two normals, D = 1, has kurtosis 9); the claim allows 5 of them
tol = 5 * math.sqrt(8 / SAMPLES)
_ = claim(all(abs(r - 1) < tol for r in ratios), f"var(q·k) ≈ D at every D (within {tol:.0%}, 5 standard errors)")

# %% [markdown]
# ## 2. Why several heads
#
# One head's weights over the keys are ONE distribution: a query that needs two things — the
# previous token (position) and the earlier word it refers to (content) — has to split one row of
# weights between them and gets a blend. Two heads each take one job. A toy of 5 tokens: head 0's
# scores favour the previous position, head 1's the token "sea" at position 1; `SHARPNESS` scales
# both.

# %%
SHARPNESS = 6.0
in_range("SHARPNESS", SHARPNESS, 0.5, 20)
tokens = ["the", "sea", "looks", "blue", "it"]
T = len(tokens)
previous = np.array([[SHARPNESS * (s == t - 1) for s in range(T)] for t in range(T)])   # [T, T] head 0
sea = np.array([[SHARPNESS * (tokens[s] == "sea") for s in range(T)] for t in range(T)])  # [T, T] head 1
causal = np.tril(np.ones((T, T), bool))
heads = [softmax(np.where(causal, s, -np.inf)) for s in (previous, sea)]
one_head = softmax(np.where(causal, previous + sea, -np.inf))     # one head asked to do both
t = T - 1
for name, w in [("head 0 (previous)", heads[0]), ("head 1 (sea)", heads[1]), ("one head, both", one_head)]:
    print(f"{name:18} weights of '{tokens[t]}':", " ".join(f"{tok}:{x:.2f}" for tok, x in zip(tokens, w[t])))
claim(heads[0][t].argmax() == t - 1 and heads[1][t].argmax() == 1,
      "each head puts its largest weight on its own target")
_ = claim(one_head[t, t - 1] < heads[0][t, t - 1] and one_head[t, 1] < heads[1][t, 1],
      "one head doing both jobs gives each target less weight than the head made for it")

# %% [markdown]
# ## 3. RoPE: pairs rotated, and only the distance counts
#
# RoPE splits a head into D/2 pairs and turns pair i of the vector at position m by the angle
# m·θ_i, θ_i = `THETA`^(−2i/D) (minillm pairs dimension i with i + D/2). A rotation keeps lengths,
# and rotating q by mθ and k by nθ changes their dot product only through the difference:
# **q_m · k_n depends on m − n alone.** The same q and k, placed at different positions:

# %%
THETA, PAIRS = 10000.0, 4
in_range("THETA", THETA, 10, 1_000_000)
in_range("PAIRS", PAIRS, 1, 32)
D = 2 * PAIRS
q, k = rng.standard_normal(D).astype(np.float32), rng.standard_normal(D).astype(np.float32)


def at(x, m):
    cos, sin = rope_angles(np.array([[m]]), D, THETA)             # [1, 1, D/2]
    return apply_rope(x[None, None, None], cos[:, None], sin[:, None])[0, 0, 0]   # [D]


print("inv. freqs θ_i:", np.round(THETA ** (-2 * np.arange(PAIRS) / D), 5))
rows = [(m, n, float(at(q, m) @ at(k, n))) for m, n in [(3, 1), (10, 8), (50, 48), (7, 7), (40, 40), (1, 3)]]
for m, n, s in rows:
    print(f"q at {m:2d}, k at {n:2d} (m − n = {m - n:+d}): q·k = {s:+.5f}")
lengths = [np.linalg.norm(at(q, m)) for m in (0, 5, 99)]
claim(np.allclose(lengths, np.linalg.norm(q), rtol=1e-5), "a rotation keeps the length of q")
same = {d: [s for m, n, s in rows if m - n == d] for d in {m - n for m, n, _ in rows}}
_ = claim(all(np.allclose(v, v[0], atol=1e-4) for v in same.values()),
      "equal distances m − n give equal scores, wherever the pair sits")

# %% [markdown]
# ## 4. RMSNorm against LayerNorm
#
# LayerNorm: (x − mean) / √(var + eps) · g + b — centre, then scale. RMSNorm (Llama):
# x / √(mean(x²) + eps) · g — scale only, one reduction instead of two, no bias. Adding a constant
# `OFFSET` to every feature changes nothing for LayerNorm (the centring removes it) but changes
# RMSNorm; and on a constant row LayerNorm's variance is 0 (the output is the bias) while RMSNorm's
# mean(x²) is not:

# %%
OFFSET = 3.0
in_range("OFFSET", OFFSET, -100, 100)
x = np.array([1.0, -2.0, 0.5, 4.0], np.float32)
g, b, eps = np.ones(4, np.float32), np.zeros(4, np.float32), 1e-5
for name, row in [("x", x), ("x + OFFSET", x + OFFSET), ("constant row", np.full(4, 2.0, np.float32))]:
    print(f"{name:13} LayerNorm {np.round(layer_norm(row, g, b, eps), 3)}   "
          f"RMSNorm {np.round(rms_norm(row, g, eps), 3)}")
claim(np.allclose(layer_norm(x + OFFSET, g, b, eps), layer_norm(x, g, b, eps), atol=1e-4),
      "LayerNorm ignores the offset")
_ = claim(OFFSET == 0 or not np.allclose(rms_norm(x + OFFSET, g, eps), rms_norm(x, g, eps), atol=1e-4),
      "RMSNorm does not (at this OFFSET)")

# %% [markdown]
# ## 5. GELU (tanh and erf), SiLU and SwiGLU
#
# GELU(x) = x·Φ(x), Φ the normal CDF: ½x(1 + erf(x/√2)). GPT-2 was trained with a tanh
# approximation, ½x(1 + tanh(√(2/π)(x + 0.044715x³))): close, not equal — and a model must be run
# with the form it was trained with. Llama's FFN is SwiGLU: (SiLU(x W_gate) ⊙ x W_up) W_down, with
# SiLU(x) = x·σ(x): the gate's SiLU decides, per hidden unit, how much of x W_up passes.

# %%
GELU_RANGE = 4.0
in_range("GELU_RANGE", GELU_RANGE, 1, 10)
xs = np.linspace(-GELU_RANGE, GELU_RANGE, 4001)
erf_form = 0.5 * xs * (1 + np.vectorize(math.erf)(xs / math.sqrt(2)))
tanh_form = gelu_tanh(xs)
gap = np.abs(erf_form - tanh_form)
print(f"largest |erf GELU − tanh GELU| on [−{GELU_RANGE}, {GELU_RANGE}]: {gap.max():.2e} "
      f"at x = {xs[gap.argmax()]:+.2f}")
for v in (-3.0, -1.0, 0.0, 1.0, 3.0):
    if abs(v) <= GELU_RANGE:
        print(f"x = {v:+.1f}: erf {0.5 * v * (1 + math.erf(v / math.sqrt(2))):+.6f}  "
              f"tanh {float(gelu_tanh(np.float64(v))):+.6f}"
              f"  SiLU {float(silu(np.float64(v))):+.6f}")
claim(0 < gap.max() < 1e-3, "the two GELUs differ, by less than 1e-3: close, not equal")
gate, up = np.array([-6.0, 0.0, 6.0]), np.array([2.0, 2.0, 2.0])
print("SwiGLU on a toy hidden layer: SiLU(gate) ⊙ up =", np.round(silu(gate) * up, 3),
      "— a very negative gate closes its unit, a positive one passes it")

# %% [markdown]
# ## 6. Grouped-query attention: query head h reads KV head h // G
#
# With H query heads and KV < H key/value heads (SmolLM2: 9 and 3), each KV head serves
# G = H / KV query heads, in blocks: heads 0 … G − 1 share KV head 0, and so on — `np.repeat`
# of the KV heads along the head axis. `np.tile` would deal them out in turn (h % KV): another
# mapping, which a trained model does not use.

# %%
N_HEADS, N_KV = 9, 3
in_range("N_HEADS", N_HEADS, 1, 32)
in_range("N_KV", N_KV, 1, 32)
if N_HEADS % N_KV:
    raise ValueError(f"N_HEADS ({N_HEADS}) must be a multiple of N_KV ({N_KV})")
G = N_HEADS // N_KV
repeat = np.repeat(np.arange(N_KV), G)                # KV head of each query head
tile = np.tile(np.arange(N_KV), G)
for kv in range(N_KV):
    print(f"KV head {kv} ← query heads", " ".join(f"q{h}" for h in range(N_HEADS) if h // G == kv))
print("np.repeat:", repeat.tolist(), "  np.tile:", tile.tolist())
claim(all(repeat[h] == h // G for h in range(N_HEADS)), "np.repeat gives each query head h the KV head h // G")
_ = claim(G == 1 or N_KV == 1 or any(repeat != tile), "np.tile gives another mapping (h % KV)")

# %% [markdown]
# ## Exercises
#
# Write RMSNorm for rows `x [N, C]` (section 4), and check again notebook 02's RoPE rotation of rows
# `x [T, D]` at their `positions` (the same exercise, `rope_rotate`, now that section 3 derived it:
# pair i is (i, i + D/2)). Each check runs hand-picked cases (a constant
# row, a zero row; a unit vector at position 1) and random ones, and names the usual mistakes.
# Solutions: `solutions/13_formulas.py`.

# %%
from exercises import check


def rms_norm(x, w, eps):
    raise NotImplementedError    # your code here


check("rms_norm", rms_norm)

# %%
def rope_rotate(x, positions, theta):
    raise NotImplementedError    # your code here


check("rope_rotate", rope_rotate)
