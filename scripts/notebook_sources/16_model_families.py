# %% [markdown]
# # 16 · From GPT-2 to Llama 3, Qwen3 and Gemma 3
#
# The models people download today are GPT-2's decoder with a handful of changes: RMSNorm and
# SwiGLU (Llama), RoPE with stretched slow frequencies (Llama 3.1 / 3.2), a norm on each head's q
# and k (Qwen3), a sliding window (Mistral, Gemma), soft-capped scores and logits (Gemma 2), norms
# after the sub-layers (OLMo 2, Gemma), layers without RoPE (SmolLM3), a mixture of experts in place
# of the FFN (Qwen3-MoE, Mixtral, OLMoE). minillm turns each on with
# one field of `ModelConfig`. Here: which fields each family turns on, read from the tiny
# `config.json` of each family in the test fixtures by minillm's own reader, and where in `model/`
# each field acts, found by searching the code (so the table follows the code when it moves);
# then each change on a toy, and each tiny model checked against the logits transformers gave.
#
# **Try this:** each knob has a stated range, checked before its section runs: `CAPS` (soft caps,
# each 1–100) and `X_RANGE` (10–500); `T_MASK` (2–32) and `WINDOW` (1–32); `ROPE_THETA`
# (1,000–10,000,000), `HEAD_DIM` (8–256, even), `FACTOR` (1–64) and `ORIGINAL_CONTEXT`
# (256–131,072); `SCALES` (activation sizes, each 0.1–100); `GATE_RANGE` (1–10); `TEXT` (1–64
# characters), `EXPERTS` (2–16) and `TOP_K` (1–`EXPERTS`).

# %%
import ast
import io
import math
import tokenize
from dataclasses import fields
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import minillm
from minillm import GPT, ModelConfig
from minillm.io.hf.config import read_config
from minillm.io.safetensors import load_safetensors
from minillm.model.attention import causal_mask
from minillm.model.ffn import gelu_tanh, silu
from minillm.model.init import init_params
from minillm.model.moe import moe, moe_loop, route
from minillm.model.norm import rms_norm
from minillm.model.rope import llama3_frequencies, rope_frequencies
from minillm.model.variants import softcap, window_mask
from nbhelpers import REPO, claim, knob, knob_range

SOURCE = Path(minillm.__file__).parent            # minillm/
FIXTURES = REPO / "tests" / "fixtures"             # present in a clone of the repository
FAMILIES = {"GPT-2": "gpt2_tiny", "Llama 2": "llama_tiny", "Llama 3.x": "llama3_tiny",
            "Qwen2": "qwen2_tiny", "Qwen3": "qwen3_tiny", "Mistral": "mistral_window_tiny",
            "Gemma 2": "gemma2_tiny", "Gemma 3": "gemma3_tiny", "Phi-3": "phi3_tiny",
            "OLMo 2": "olmo2_tiny", "SmolLM3": "smollm3_tiny", "Qwen3-MoE": "qwen3_moe_tiny",
            "Mixtral": "mixtral_tiny", "OLMoE": "olmoe_tiny"}
found = {name: FIXTURES / d for name, d in FAMILIES.items() if (FIXTURES / d / "config.json").is_file()}
if len(found) < len(FAMILIES):
    print(f"skipping sections 1 and 9 for {sorted(set(FAMILIES) - set(found))}: their fixtures are not in "
          f"{FIXTURES} (they come with a clone of the repository, not with an installed package)")
rng = np.random.default_rng(0)

# %% [markdown]
# ## 1. Which switches each family's tiny test model turns on
#
# `ModelConfig`'s fields past the sizes are switches. `arch` ("gpt2" or "llama") only sets the
# defaults of the first of them (norm, FFN, positions, biases); every later family is a Llama with
# more switches on. Each column is one family's tiny `config.json` from the test fixtures, read by
# `read_config`; a cell shows the value when the switch is on (✓ for a boolean), `·` when it is
# off. For `layer_types`, S is a sliding layer and F a full one.
#
# **These are the fixtures, not the released models.** They are made a few kilobytes small to
# test every code path against transformers, so they turn on more than their families do:
# grouped-query attention (2 KV heads for 4 query heads) and tied embeddings in nearly every
# column, a window of a few positions. What the released models turn on is in section 1b.

# %%
NOT_SWITCHES = {"vocab_size", "n_ctx", "d_model", "n_heads", "n_layers", "d_ff", "norm_eps", "arch",
                "rope_theta", "bos_id", "eos_id", "eos_ids"}
SWITCHES = [f.name for f in fields(ModelConfig) if f.name not in NOT_SWITCHES]
configs = {name: read_config(folder / "config.json") for name, folder in found.items()}


def cell(config, field):
    """A switch's value in a few characters: "·" when off (False, None, empty, or GQA unused)."""
    value = getattr(config, field)
    if field == "n_kv_heads":
        return f"{value}/{config.n_heads}" if value < config.n_heads else "·"
    if field == "layer_types" and value is not None:
        return "".join(t[0].upper() for t in value)
    if field == "rope_scaling" and value is not None:
        return value["rope_type"]
    if value is True:
        return "✓"
    if value in (False, None, ()):
        return "·"
    return ",".join(map(str, value)) if isinstance(value, tuple) else f"{value:g}" if isinstance(value, float) else str(value)


rows = SWITCHES                                    # (n_kv_heads < n_heads: grouped-query attention)
names = list(configs)
if configs:
    print(f"{'switch':22}" + "".join(f"{n:>10}" for n in names))
    for field in rows:
        print(f"{field:22}" + "".join(f"{cell(configs[n], field):>10}" for n in names))
    claim(all(configs[n].arch == "llama" and configs[n].norm == "rmsnorm" and configs[n].position == "rope"
              for n in names if n != "GPT-2"),
          "every family after GPT-2 is a Llama underneath: RMSNorm and RoPE, more switches on top")

# %% [markdown]
# ## 1b. What the released models turn on
#
# The released checkpoints, from their published `config.json` (the Hugging Face repository named
# in each row; stated here from those files, not downloaded: this notebook makes no network
# call). Heads are query heads / KV heads: equal means plain multi-head attention (MHA), fewer KV
# heads grouped-query attention (GQA). Sizes change within a family — Llama 2's 70B uses GQA
# where its 7B does not, Llama 3.2's 1B ties its embeddings where 3.1's 8B does not — so each row
# names one model.

# %%
RELEASED = {   # family: (checkpoint, query heads, KV heads, tied embeddings, what else it turns on)
    "GPT-2": ("openai-community/gpt2", 12, 12, True, "LayerNorm, GELU MLP, learned positions, biases"),
    "Llama 2": ("meta-llama/Llama-2-7b-hf", 32, 32, False, "RMSNorm, SwiGLU, RoPE (theta 10000)"),
    # (meta-llama/Llama-2-70b-hf: 64 query heads, 8 KV heads — the one Llama 2 size with GQA)
    "Llama 3.x": ("meta-llama/Llama-3.1-8B", 32, 8, False,
                  "rope_scaling llama3 (factor 8, original context 8192), rope_theta 500000"),
    "Llama 3.2": ("meta-llama/Llama-3.2-1B", 32, 8, True, "rope_scaling llama3 (factor 32)"),
    "Qwen2": ("Qwen/Qwen2-7B", 28, 4, False, "biases on q, k, v"),
    "Qwen3": ("Qwen/Qwen3-8B", 32, 8, False, "qk_norm, head_dim 128"),
    "Mistral": ("mistralai/Mistral-7B-v0.1", 32, 8, False, "sliding_window 4096 on every layer"),
    "Gemma 2": ("google/gemma-2-2b", 8, 4, True, "head_dim 256; attn_logit_softcapping 50, "
                "final_logit_softcapping 30; sliding_window 4096 on every other layer; sandwich norms; "
                "GeGLU; embeddings × √d_model; query_pre_attn_scalar 256"),
    "Gemma 3": ("google/gemma-3-1b-pt", 4, 1, True, "head_dim 256; qk_norm; sliding_window 512 on 5 "
                "layers of every 6, local rope_theta 10000; no soft caps; sandwich norms; GeGLU"),
    "Phi-3": ("microsoft/Phi-3-mini-4k-instruct", 32, 32, False, "fused qkv_proj and gate_up_proj"),
    "OLMo 2": ("allenai/OLMo-2-1124-7B", 32, 32, False, "post_norms, qk_norm over the whole projection"),
    "SmolLM3": ("HuggingFaceTB/SmolLM3-3B", 16, 4, True, "no RoPE on every 4th layer"),
    "Qwen3-MoE": ("Qwen/Qwen3-30B-A3B", 32, 4, False, "128 experts, 8 used, norm_topk_prob; qk_norm"),
    "Mixtral": ("mistralai/Mixtral-8x7B-v0.1", 32, 8, False, "8 experts, 2 used; no sliding window"),
    "OLMoE": ("allenai/OLMoE-1B-7B-0924", 16, 16, False, "64 experts, 8 used; qk_norm over the whole projection"),
}
print(f"{'family':10} {'checkpoint':34} {'heads':>6} {'':4} {'tied':5} other switches")
for family, (checkpoint, H, KV, tied, other) in RELEASED.items():
    kind = "MHA" if KV == H else "GQA"
    print(f"{family:10} {checkpoint:34} {H:>3}/{KV:<3} {kind:4} {'✓' if tied else '·':5} {other}")
differs = []
for family, (checkpoint, H, KV, tied, _) in RELEASED.items():
    if family in configs:
        fixture = configs[family]
        if (fixture.n_kv_heads < fixture.n_heads) != (KV < H):
            differs.append(f"{family}: the fixture {'uses' if fixture.n_kv_heads < fixture.n_heads else 'lacks'} "
                           f"GQA, {checkpoint} {'does not' if KV == H else 'does'}")
        if fixture.tie_embeddings != tied:
            differs.append(f"{family}: the fixture {'ties' if fixture.tie_embeddings else 'unties'} its "
                           f"embeddings, {checkpoint} {'does' if tied else 'does not'}")
print("plain MHA:", ", ".join(c for c, H, KV, _, _ in RELEASED.values() if KV == H))
print("tied embeddings:", ", ".join(c for c, _, _, tied, _ in RELEASED.values() if tied))
print(f"\nwhere the tiny fixture's switches differ from the released model's ({len(differs)}):")
print("\n".join("  " + line for line in differs) or "  none")

# %% [markdown]
# So the fixtures above test that each switch works; the rows here say which a real checkpoint
# uses. Plain MHA is still what Llama-2-7b, Phi-3-mini, OLMo-2-7B and OLMoE use; the newer models
# share KV heads. Tied embeddings are common among the small checkpoints (GPT-2, Llama 3.2 1B,
# SmolLM3-3B), where the embedding matrix is a large share of all the weights, and in both Gemma
# checkpoints here; the 7B-and-up checkpoints here keep a separate output matrix (both lists
# printed above).

# %% [markdown]
# ## 2. Where each switch acts
#
# Each switch is read by a few lines of `model/`. The lines below are found by reading the source
# as Python tokens: every `config.<field>` or `c.<field>` outside the functions that only check a
# config (`check_…`). `head_dim` acts through `config.d_head` (D: `head_dim` when given, else C / H);
# Phi-3's fused projections change only the file's tensor names, so they act outside `model/`, in
# `io/`. Printed, not typed: when the code moves, this table moves with it.

# %%
def check_ranges(path):
    """Line ranges of the functions that only validate a config (check_…): not where a switch acts."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(f.lineno, f.end_lineno) for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef) and f.name.startswith("check")]


def uses(field, folder):
    """Every `config.<field>` / `c.<field>` in the .py files under folder: ["model/gpt.py:92", …]."""
    hits = []
    for path in sorted(folder.rglob("*.py")):
        if path.name == "config.py":
            continue
        skip = check_ranges(path)
        toks = [t for t in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
                if t.type in (tokenize.NAME, tokenize.OP)]
        for a, dot, b in zip(toks, toks[1:], toks[2:]):
            line = b.start[0]
            if a.string in ("c", "config") and dot.string == "." and b.string == field \
                    and not any(lo <= line <= hi for lo, hi in skip):
                hits.append((path.relative_to(SOURCE).as_posix(), line))
    return hits


def lines(hits, most=4):
    """[("model/gpt.py", 92), …] -> "model/gpt.py:92,99; …", at most `most` lines a file."""
    by_file = {}
    for file, line in hits:
        by_file.setdefault(file, [])
        if line not in by_file[file]:
            by_file[file].append(line)
    return "; ".join(f"{f}:{','.join(map(str, ls[:most]))}{',…' if len(ls) > most else ''}"
                     for f, ls in by_file.items())


where = {}
for field in rows:
    hits = uses("d_head" if field == "head_dim" else field, SOURCE / "model")
    outside = "" if hits else "outside model/: "
    where[field] = outside + lines(hits or uses(field, SOURCE)[:4])
    print(f"{field:22} {where[field]}")
_ = claim(all(where[f] and not where[f].startswith("outside") for f in rows if f != "fused_projections"),
      "every switch but Phi-3's fused files is read in model/")

# %% [markdown]
# ## 3. Gemma 2's soft-capping
#
# `softcap(x, cap) = cap · tanh(x / cap)`: the identity near 0, bent smoothly towards ±cap, never
# past it. Gemma 2 puts its attention scores (cap 50 in the released models) and its final logits
# (cap 30) through it, so no score can grow without bound; a hard clip would also bound them but
# has zero gradient beyond the cap. Drawn with minillm's `softcap`:

# %%
CAPS, X_RANGE = [30.0, 50.0], 150.0
knob_range("CAPS", CAPS, 1, 100)
knob_range("X_RANGE", X_RANGE, 10, 500)
xs = np.linspace(-X_RANGE, X_RANGE, 1001).astype(np.float32)
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(xs, xs, "k:", label="x (no cap)")
for cap in CAPS:
    ys = softcap(xs, cap)
    ax.plot(xs, ys, label=f"cap {cap:g} · tanh(x / {cap:g})")
    print(f"cap {cap:5g}: x = 1 -> {float(softcap(np.float32(1), cap)):.4f}, x = cap -> "
          f"{float(softcap(np.float32(cap), cap)):.2f} ({float(np.tanh(1)):.0%} of cap), "
          f"x = {X_RANGE:g} -> {float(softcap(np.float32(X_RANGE), cap)):.2f}, max |out| {np.abs(ys).max():.3f}")
    assert np.abs(ys).max() <= cap, f"soft-capping left a value beyond ±{cap}: {np.abs(ys).max()}"
ax.set_ylim(-1.2 * max(CAPS), 1.2 * max(CAPS))
ax.set_xlabel("score or logit x")
ax.set_ylabel("after soft-capping")
ax.legend()
ax.set_title("Gemma 2's soft-capping")
plt.show()
_ = claim(all(abs(float(softcap(np.float32(1), c)) - 1) < 1e-3 for c in CAPS), "near 0 the cap changes nothing")

# %% [markdown]
# ## 4. A sliding window beside the causal mask
#
# Mistral's layers and Gemma's local ones let a query see only the last `WINDOW` positions: itself
# and the W − 1 before it. In the model that is one more mask AND-ed with the causal one
# (`window_mask`); the causal mask's rows grow with T, the window's stop at W keys, which is why the
# engine's decode step on a sliding layer costs the same at any length. Gemma 2's released models alternate sliding and full
# layers, Gemma 3's slide on five layers of six; the tiny fixtures' own patterns are the
# `layer_types` row of section 1.

# %%
T_MASK, WINDOW = 12, 4
knob_range("T_MASK", T_MASK, 2, 32)
knob_range("WINDOW", WINDOW, 1, 32)
causal = causal_mask(T_MASK, T_MASK)                                       # [T, T] bool
sliding = causal & window_mask(T_MASK, T_MASK, WINDOW)                      # [T, T] bool
fig, axes = plt.subplots(1, 2, figsize=(9, 4.2))
for ax, mask, title in [(axes[0], causal, "causal"), (axes[1], sliding, f"causal AND window W = {WINDOW}")]:
    ax.imshow(mask, cmap="Blues", vmin=0, vmax=1.5)
    ax.set_title(title)
    ax.set_xlabel("key position s")
    ax.set_ylabel("query position t")
plt.tight_layout()
plt.show()
print("keys each query sees, causal: ", causal.sum(1).tolist())
print("keys each query sees, window: ", sliding.sum(1).tolist())
assert sliding.sum(1).max() == min(WINDOW, T_MASK), "a window of W must let at most W keys in"
_ = claim(sliding.sum() < causal.sum() or WINDOW >= T_MASK,
      f"the window hides {causal.sum() - sliding.sum()} of the causal mask's {causal.sum()} visible pairs")

# %% [markdown]
# ## 5. Llama 3's RoPE scaling
#
# RoPE turns pair i by m·θ_i; its wavelength λ_i = 2π / θ_i is how many positions one full turn
# takes. Llama 3.1 / 3.2 were trained on `ORIGINAL_CONTEXT` positions, then stretched to read
# longer texts: pairs whose wavelength is short (under L / 4, they encode local order) are kept,
# pairs whose wavelength is longer than L are slowed by `FACTOR`, those in between are blended
# (`llama3_frequencies`). The defaults are Llama 3.1's (θ = 500,000, D = 128, factor 8, L = 8,192).

# %%
ROPE_THETA, HEAD_DIM, FACTOR, ORIGINAL_CONTEXT = 500_000.0, 128, 8.0, 8192
knob_range("ROPE_THETA", ROPE_THETA, 1_000, 10_000_000)
knob("HEAD_DIM", HEAD_DIM, lambda d: type(d) is int and 8 <= d <= 256 and d % 2 == 0, "an even whole number from 8 to 256")
knob_range("FACTOR", FACTOR, 1, 64)
knob("ORIGINAL_CONTEXT", ORIGINAL_CONTEXT, lambda n: type(n) is int and 256 <= n <= 131_072, "a whole number from 256 to 131,072")
scaling = {"rope_type": "llama3", "factor": FACTOR, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
           "original_max_position_embeddings": ORIGINAL_CONTEXT}
theta = rope_frequencies(HEAD_DIM, ROPE_THETA)                               # [D/2] θ_i
scaled = rope_frequencies(HEAD_DIM, ROPE_THETA, scaling)                     # [D/2] θ'_i
assert np.array_equal(scaled, llama3_frequencies(theta, FACTOR, 1.0, 4.0, ORIGINAL_CONTEXT)), \
    "rope_frequencies with a scaling must equal llama3_frequencies of the plain frequencies"
wavelength, new_wavelength = 2 * np.pi / theta, 2 * np.pi / scaled
kept, stretched = np.isclose(scaled, theta), np.isclose(scaled, theta / FACTOR)
blended = ~kept & ~stretched
print(f"{HEAD_DIM // 2} pairs: {kept.sum()} kept (λ < {ORIGINAL_CONTEXT / 4:g}), {stretched.sum()} slowed "
      f"{FACTOR:g}× (λ > {ORIGINAL_CONTEXT}), {blended.sum()} blended")
print(f"longest wavelength: {wavelength.max():,.0f} -> {new_wavelength.max():,.0f} positions")
fig, ax = plt.subplots(figsize=(7, 4))
ax.loglog(wavelength, new_wavelength, "o-", ms=3, label="Llama 3 scaled")
ax.loglog(wavelength, wavelength, "k:", label="unchanged")
for bound in (ORIGINAL_CONTEXT / 4, ORIGINAL_CONTEXT):
    ax.axvline(bound, color="grey", lw=0.8)
ax.set_xlabel("wavelength λᵢ = 2π/θᵢ (positions)")
ax.set_ylabel("scaled wavelength")
ax.legend()
ax.set_title("RoPE scaling: fast pairs kept, slow ones stretched")
plt.show()
_ = claim(np.all(new_wavelength >= wavelength * (1 - 1e-12)), "no pair turns faster after scaling")

# %% [markdown]
# ## 6. Qwen3's norm on q and k
#
# A score is q·k / √D. If activations grow (a large input, weights drifting in training), q and k
# grow with them and the scores with their product: the softmax turns one-hot. Qwen3 (and Gemma 3,
# OLMo 2 over the whole width) RMS-normalises each head's q and k first: each then has length √D
# (times its learned gain), so |q·k| / √D ≤ √D whatever the input's size (Cauchy–Schwarz). The
# same random q and k at growing `SCALES`, with unit gains:

# %%
SCALES, D_QK = [0.3, 1.0, 3.0, 10.0, 30.0], 16
knob_range("SCALES", SCALES, 0.1, 100)
base_q, base_k = rng.standard_normal((2, 8, D_QK)).astype(np.float32)           # [8, D] each
gain = np.ones(D_QK, np.float32)
plain_max, normed_max = [], []
for s in SCALES:
    q, k = s * base_q, s * base_k
    plain = q @ k.T / math.sqrt(D_QK)                                            # [8, 8]
    normed = rms_norm(q, gain, 1e-6) @ rms_norm(k, gain, 1e-6).T / math.sqrt(D_QK)   # [8, 8]
    plain_max.append(float(np.abs(plain).max()))
    normed_max.append(float(np.abs(normed).max()))
    print(f"scale {s:5g}: max |score| without q/k norm {plain_max[-1]:9.2f}, with {normed_max[-1]:.2f}")
fig, ax = plt.subplots(figsize=(6, 4))
ax.loglog(SCALES, plain_max, "o-", label="plain q·k/√D")
ax.loglog(SCALES, normed_max, "s-", label="RMSNorm(q)·RMSNorm(k)/√D")
ax.axhline(math.sqrt(D_QK), color="grey", ls=":", label=f"√D = {math.sqrt(D_QK):g}")
ax.set_xlabel("activation scale")
ax.set_ylabel("largest |score|")
ax.legend()
ax.set_title("Qwen3's q/k norm keeps scores bounded")
plt.show()
assert max(normed_max) <= math.sqrt(D_QK) + 1e-4, f"normed scores beyond √D: {max(normed_max)}"
_ = claim(plain_max[-1] / plain_max[0] > 100 and np.ptp(normed_max) < 1e-3,
      "without the norm the scores grow with the scale squared; with it they do not move")

# %% [markdown]
# ## 7. GeGLU against SwiGLU
#
# Both gate the FFN's up projection: (act(x W_gate) ⊙ x W_up) W_down. Llama uses SiLU as the gate
# (SwiGLU), Gemma the tanh GELU (GeGLU). Side by side, the gate's factor act(g) / g — how much of
# the unit passes: GELU opens faster and closes harder; SiLU stays further from both ends.

# %%
GATE_RANGE = 5.0
knob_range("GATE_RANGE", GATE_RANGE, 1, 10)
g = np.linspace(-GATE_RANGE, GATE_RANGE, 801).astype(np.float32)
fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
a1.plot(g, silu(g), label="SiLU (SwiGLU)")
a1.plot(g, gelu_tanh(g), label="GELU, tanh (GeGLU)")
a1.set_title("the gate act(g)")
nz = g != 0
a2.plot(g[nz], silu(g[nz]) / g[nz], label="SiLU: σ(g)")
a2.plot(g[nz], gelu_tanh(g[nz]) / g[nz], label="GELU: Φ(g), tanh form")
a2.set_title("the share that passes, act(g) / g")
for ax in (a1, a2):
    ax.set_xlabel("gate pre-activation g")
    ax.legend()
plt.tight_layout()
plt.show()
for v in (-2.0, 2.0):
    print(f"g = {v:+.0f}: SiLU passes {float(silu(np.float32(v))) / v:.1%}, GELU {float(gelu_tanh(np.float32(v))) / v:.1%}")
print(f"lowest value: SiLU {silu(g).min():.3f} at g = {g[silu(g).argmin()]:+.2f}, "
      f"GELU {gelu_tanh(g).min():.3f} at g = {g[gelu_tanh(g).argmin()]:+.2f}")
_ = claim(float(gelu_tanh(np.float32(2))) > float(silu(np.float32(2))),
      "at g = 2 GELU passes more than SiLU: the sharper gate")

# %% [markdown]
# ## 8. A mixture of experts: the router's choice for each token
#
# Qwen3-MoE, Mixtral and OLMoE replace each FFN by `EXPERTS` SwiGLU FFNs and a router, a [C, E]
# matrix: softmax(x W_router) scores the experts for each token, the `TOP_K` best run, and their
# outputs are added with the router's weights (renormalised to sum to 1 when the config says
# `norm_topk_prob`: Mixtral always, OLMoE's releases not).
# The layer holds E FFNs but each token pays for k. Here a tiny random MoE layer (minillm's
# `init_params`, with a random router of unit scale) routes the characters of `TEXT`, one token a
# byte; the gathered form (`moe`, what the model runs) is checked against the definition
# (`moe_loop`, every expert on every token).

# %%
TEXT, EXPERTS, TOP_K = "the sea is blue", 4, 2
knob("TEXT", TEXT, lambda t: isinstance(t, str) and 1 <= len(t) <= 64, "a string of 1 to 64 characters")
knob("EXPERTS", EXPERTS, lambda e: type(e) is int and 2 <= e <= 16, "a whole number from 2 to 16")
knob("TOP_K", TOP_K, lambda k: type(k) is int and 1 <= k <= EXPERTS, "a whole number from 1 to EXPERTS")
moe_config = ModelConfig(vocab_size=256, n_ctx=64, d_model=16, n_heads=2, n_layers=1, d_ff=8, arch="llama",
                         n_experts=EXPERTS, n_experts_used=TOP_K, norm_topk_prob=True)
layer = init_params(moe_config, np.random.default_rng(0)).blocks[0].ffn          # router [C, E], experts [E, …]
layer.router = rng.standard_normal(layer.router.shape).astype(np.float32)       # [C, E] a sharper random router
ids = np.frombuffer(TEXT.encode("utf-8"), np.uint8).astype(np.int64)[:64]       # [N] one id a byte
x = rms_norm(rng.standard_normal((256, 16)).astype(np.float32)[ids], np.ones(16, np.float32), 1e-6)  # [N, C]
experts, weights = route(x, layer.router, TOP_K, True)                          # [N, k] each
chosen = np.zeros((len(ids), EXPERTS), np.float32)                              # [N, E] 0 where not chosen
np.put_along_axis(chosen, experts, weights, axis=-1)
labels = [repr(chr(i))[1:-1] if i < 128 else f"x{i:02x}" for i in ids]
fig, ax = plt.subplots(figsize=(max(5, 0.45 * len(ids)), 2.8))
ax.imshow(chosen.T, cmap="Greens", vmin=0, vmax=1, aspect="auto")
ax.set_xticks(range(len(ids)), labels)
ax.set_yticks(range(EXPERTS), [f"expert {e}" for e in range(EXPERTS)])
ax.set_title(f"the router's weights: {TOP_K} of {EXPERTS} experts per token")
plt.tight_layout()
plt.show()
for label, e, w in list(zip(labels, experts, weights))[:6]:
    print(f"{label!r:6} -> experts {e.tolist()} with weights {[round(float(v), 3) for v in w]}")
print("tokens per expert:", np.bincount(experts.ravel(), minlength=EXPERTS).tolist(),
      f"— {len(ids) * TOP_K} expert runs instead of {len(ids) * EXPERTS} for a dense layer of all {EXPERTS}")
assert np.allclose(chosen.sum(-1), 1, atol=1e-5), "renormalised routing weights must sum to 1 per token"
gap = float(np.abs(moe(x[None], layer, moe_config) - moe_loop(x[None], layer, moe_config)).max())
_ = claim(gap <= 1e-5, f"the gathered form equals the definition on every token (max |Δ| {gap:.1e})")

# %% [markdown]
# ## 9. Each tiny model against transformers
#
# Every fixture folder holds a randomly initialised transformers model of its family (every
# feature above on, prompts longer than the window) and the logits transformers computed for two
# rows of ids. minillm's readable model (`GPT`, `model/` code only) reads the folder and computes
# the same logits; the bound the tests use is 1e-4 × max|logit|.

# %%
worst = 0.0
for name, folder in found.items():
    expected = load_safetensors(folder / "expected.safetensors")
    model = GPT.from_pretrained(folder)
    got = model(expected["ids"])                                                  # [B, T, V]
    ratio = float(np.abs(got - expected["logits"]).max() / np.abs(expected["logits"]).max())
    worst = max(worst, ratio)
    print(f"{name:10} ids {expected['ids'].shape}, max|logit| {np.abs(expected['logits']).max():6.2f}, "
          f"max|Δ| / max|logit| = {ratio:.1e}")
if found:
    claim(worst <= 1e-4, f"every family within 1e-4 × max|logit| of transformers (worst {worst:.1e})")
else:
    print("no fixtures found: nothing to compare (clone the repository to run this section)")

# %% [markdown]
# ## Exercises
#
# Write Gemma 2's soft cap (section 3) and a sliding window's mask (section 4, the causal mask
# included: query t sees key s when s ≤ t and t − s < W). Each check runs hand-picked cases (values
# far beyond the cap; a window of 1, a window wider than the text) and random ones, and names the
# usual mistakes. Solutions: `solutions/16_model_families.py`.

# %%
from exercises import check


def softcap_(x, cap):
    raise NotImplementedError    # your code here


check("softcap", softcap_)

# %%
def sliding_window_mask(T, W):
    raise NotImplementedError    # your code here


check("sliding_window_mask", sliding_window_mask)
