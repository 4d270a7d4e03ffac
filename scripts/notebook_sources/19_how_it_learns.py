# %% [markdown]
# # 19 · How it learns, built by you
#
# Notebook 14 had you write the model's parts for inference; notebook 10 trained a model with the
# library's loop. Here you write how a model learns. What you write, ten functions: `ce_grad`
# (the loss's gradient, after deriving it by hand on three logits); the backward of a linear
# layer, of RMSNorm and of one causal attention head (`linear_backward`, `rms_norm_backward`,
# `attention_backward`), each checked against finite differences and against the library's
# backward (`minillm/train/`); `adamw_step`, from its update rule; `lr_schedule` and `batch_of`,
# which a training loop uses to train a fresh tiny model on the shipped Shakespeare text (the loop
# itself is given: it calls your schedule, your batches and your AdamW); and LoRA's
# `lora_forward` and `lora_grads`, on a 4 × 4 matrix, then in the model; and, as the last
# exercise, `clip_grads`, the clipping the loop does before each step. Read, not written: the
# loss as perplexity and bits against a unigram and a bigram model, and what the scale of the
# initialisation does to every layer.
#
# Each part is a function you write in its own cell (`raise NotImplementedError` marks it), checked
# at once: ✓, or ✗ with the input where it is wrong and, for a known mistake, which one. Until
# yours passes, the cells after it run the library's in its place (and say so), so the notebook
# runs from top to bottom either way. Solutions: `solutions/19_how_it_learns.py`.
#
# **Try this:** change `STEPS` (the training loop's steps, 20–400) and `MAX_LR` (its peak learning
# rate, 1e-4 to 0.1), the three initialisation scales `INIT_STDS` (each 1e-4 to 1), or LoRA's
# `LORA_RANK` in the model (1–8), and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import math
import time

import matplotlib.pyplot as plt
import numpy as np

from minillm import GPT, ModelConfig
from minillm.model.init import init_params
from minillm.tokenizer import Tokenizer
from minillm.train import loss_and_grads
from minillm.train.data import bits_per_char, split_text, token_array
from minillm.train.grads import block_forward
from minillm.train.grad_model import embed_inputs
from minillm.train.lora.adapters import init_lora, lora_loss_and_grads, merged_params
from minillm.train.optim import AdamW, clip_grad_norm
from exercises import check
from how_it_learns import LIBRARY, numeric_grad, relative_error
from nbhelpers import WEIGHTS, claim, knob_range

STEPS, MAX_LR = 200, 1e-2
INIT_STDS = [0.002, 0.02, 0.2]
LORA_RANK = 2
knob_range("STEPS", STEPS, 20, 400)
knob_range("MAX_LR", MAX_LR, 1e-4, 0.1)
knob_range("INIT_STDS", INIT_STDS, 1e-4, 1.0)
knob_range("LORA_RANK", LORA_RANK, 1, 8)
if len(INIT_STDS) != 3:
    raise ValueError(f"INIT_STDS must hold three scales (too small, right, too large), got {INIT_STDS}")
FD_TOL = 1e-6          # finite differences (float64, h = 1e-6) against a formula: relative error
LIB_TOL = 1e-6         # yours against the library's: the exercises' tolerance (float32 rounding passes)
F32_TOL = 1e-5         # the same in the model's float32 arrays, summed by two routes (section 7)
rng = np.random.default_rng(0)
passed = {}            # (name, your function) -> did it pass its check (a new definition: checked again)


def use(name, fn):
    """Your part once it passes its check, else the library's (and it says so, once)."""
    if (name, fn) not in passed:
        passed[name, fn] = bool(check(name, fn, quiet=True))
        if not passed[name, fn]:
            print(f"  … the cells below use the library's {name} until yours passes")
    return fn if passed[name, fn] else LIBRARY[name]


def against_library(name, fn, error) -> str:
    """``error`` (yours against the library's), or, while the library's stands in, that it does."""
    return "not written yet: the library's own" if use(name, fn) is LIBRARY[name] else f"{error:.1e}"

# %% [markdown]
# ## 1. The loss's gradient, by hand on three logits
#
# The model's last layer gives logits z; softmax turns them into probabilities p; the loss of
# one position whose next token is t is L = −log p_t. Written out,
#
# L = −log (e^{z_t} / Σ_j e^{z_j}) = −z_t + log Σ_j e^{z_j}
#
# and each logit's derivative is the two terms' derivatives: −1 if i = t (from −z_t), plus
# e^{z_i} / Σ_j e^{z_j} = p_i (from the log-sum). So **dL/dz = p − onehot(t)**: every logit is
# pushed down by its probability, the target's pulled up by 1 − p_t. On three logits, by the
# formula and by finite differences (nudge one logit by ±h, watch L):

# %%
z, t = np.array([2.0, 1.0, 0.1]), 0


def toy_loss(z):
    return -z[t] + math.log(np.exp(z).sum())


p = np.exp(z) / np.exp(z).sum()
by_hand = p - np.eye(3)[t]
by_differences = numeric_grad(toy_loss, z)
print(f"z = {z.tolist()}, target t = {t}: p = {np.round(p, 4).tolist()}, L = −log p_t = {toy_loss(z):.4f}")
print(f"p − onehot        = {np.round(by_hand, 6).tolist()}")
print(f"finite difference = {np.round(by_differences, 6).tolist()}")
print(f"relative error {relative_error(by_hand, by_differences):.1e}; the entries sum to "
      f"{by_hand.sum():.1e} (a softmax's gradient: raising every logit at once changes nothing)")
assert relative_error(by_hand, by_differences) < FD_TOL, "p − onehot must match the finite differences"

# %% [markdown]
# A batch holds N positions and the loss is their **mean**, so each row's gradient is divided by
# N: dL/dz[n] = (p[n] − onehot(t_n)) / N. Write it (stable for large logits: subtract each row's
# maximum before `exp`, as softmax does):

# %%
def ce_grad(logits, targets):
    raise NotImplementedError    # your code here: dL/dlogits [N, V] for the mean loss


check("ce_grad", ce_grad)

# %% [markdown]
# What a mistake looks like — the sign flipped, and the sum's gradient instead of the mean's:

# %%
def ce_grad_flipped(logits, targets):
    return -LIBRARY["ce_grad"](logits, targets)                  # onehot − p


def ce_grad_of_the_sum(logits, targets):
    return LIBRARY["ce_grad"](logits, targets) * len(targets)    # no 1/N


for wrong in (ce_grad_flipped, ce_grad_of_the_sum):
    assert not check("ce_grad", wrong), f"the checker must reject {wrong.__name__}"

# %%
logits, targets = rng.normal(size=(4, 5)), np.array([0, 3, 3, 1])


def mean_loss(logits):
    z = logits - logits.max(-1, keepdims=True)
    return float(-(z[np.arange(4), targets] - np.log(np.exp(z).sum(-1))).mean())


mine = use("ce_grad", ce_grad)(logits, targets)
print(f"N = 4 rows: against finite differences {relative_error(mine, numeric_grad(mean_loss, logits)):.1e}, "
      f"against the library's (grad_model.cross_entropy_with_grad) "
      f"{against_library('ce_grad', ce_grad, relative_error(mine, LIBRARY['ce_grad'](logits, targets)))}")

# %% [markdown]
# ## 2. Three layers' backward: linear, RMSNorm, one attention head
#
# A layer's backward takes dy = ∂L/∂y, what the layers above send down, and returns the gradient
# of every input and parameter. To test one alone, take the loss L = Σ dy ⊙ y for a random dy: its
# gradient with respect to y is exactly dy, and finite differences of L check everything else.
# Each check below is in float64 (h = 1e-6: float32 would drown the differences in rounding,
# notebook 10) with the tolerances `FD_TOL` and `LIB_TOL` stated above.
#
# **Linear**, y = x W + b over N rows: y[n, j] = Σ_i x[n, i] W[i, j] + b[j], so
# dx = dy Wᵀ (each x[n, i] feeds every y[n, j] through W[i, j]), dW = xᵀ dy (each W[i, j] is used
# by every row) and db = Σ_n dy[n] (b is added to every row).

# %%
def linear_backward(dy, x, W):
    raise NotImplementedError    # your code here: return dx, dW, db


check("linear_backward", linear_backward)

# %% [markdown]
# The three checks of a part, in one function: yours against finite differences of L and against
# the library's backward, for each gradient it returns.

# %%
def three_way(name, args, forward, dy, inputs, names):
    """Your part on ``args`` against central differences of L = Σ dy ⊙ forward(*inputs), and
    against the library's part on the same ``args``."""
    yours, library = use(name, globals()[name])(*args), LIBRARY[name](*args)
    for i, label in enumerate(names):
        def L(a, i=i):
            return float((dy * forward(*inputs[:i], a, *inputs[i + 1:])).sum())
        fd, lib = relative_error(yours[i], numeric_grad(L, inputs[i])), relative_error(yours[i], library[i])
        print(f"  {label:3s} {list(np.shape(yours[i]))}: finite differences {fd:.1e}, library "
              f"{against_library(name, globals()[name], lib)}")
        assert fd < FD_TOL and lib < LIB_TOL, f"{name}: {label} differs (tolerances {FD_TOL}, {LIB_TOL})"


x, W, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=2)
dy = rng.normal(size=(3, 2))
print("linear, N = 3, in = 4, out = 2:")
three_way("linear_backward", (dy, x, W), lambda x, W, b: x @ W + b, dy, (x, W, b), ["dx", "dW", "db"])

# %% [markdown]
# **RMSNorm**, y = x̂ ⊙ w with x̂ = x · r, r = 1 / √(mean(x²) + ε), row by row over C features.
# With g = dy ⊙ w (what reaches x̂): x_j enters x̂_j directly (slope r) *and* every x̂_i through r,
# with ∂r/∂x_j = −r³ x_j / C. dx_j is the sum of the two paths; write the second with x̂ and a
# mean over the row, and it reads as r times g minus a part along x̂ — the path through r: a
# normalised row cannot change its own length. dw: w multiplies x̂ in every row. (LayerNorm adds a
# third path, through the mean: notebook 10's exercise.)

# %%
def rms_norm_backward(dy, x, w, eps):
    raise NotImplementedError    # your code here: return dx, dw


check("rms_norm_backward", rms_norm_backward)

# %%
def rms_norm(x, w, eps=1e-5):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


x, w, dy = rng.normal(size=(3, 5)), rng.normal(size=5) + 1, rng.normal(size=(3, 5))
print("RMSNorm, N = 3, C = 5:")
three_way("rms_norm_backward", (dy, x, w, 1e-5), rms_norm, dy, (x, w), ["dx", "dw"])

# %% [markdown]
# **One causal attention head**, T positions of width D: S = q kᵀ / √D with the future masked
# (−∞), P = softmax(S) row by row, out = P v. Backward, given dout, in the reverse order: out = P v
# and S = q kᵀ / √D are products, whose backward is the linear layer's (dv and dP from the first;
# dq and dk from the second, with its 1 / √D). Between them, the softmax's backward: for one row,
# ∂P_i/∂S_j = P_i (δ_ij − P_j) (section 1's derivation, for any upstream gradient dP instead of
# −log), so dS_j = Σ_i dP_i P_i (δ_ij − P_j): a row's weights sum to 1, so raising one lowers the
# others. A masked weight is exactly 0 and dS carries a factor P: the future receives exactly zero
# gradient, with no code for it.

# %%
def attention_backward(dout, q, k, v):
    raise NotImplementedError    # your code here: return dq, dk, dv


check("attention_backward", attention_backward)

# %%
def attention(q, k, v):
    T, D = q.shape
    S = np.where(np.tril(np.ones((T, T), bool)), q @ k.T / math.sqrt(D), -np.inf)   # [T, T]
    P = np.exp(S - S.max(-1, keepdims=True))
    return P / P.sum(-1, keepdims=True) @ v                                        # [T, D]


q, k, v, dout = (rng.normal(size=(4, 3)) for _ in range(4))
print("attention, T = 4, D = 3 (the library: grad_attention.attention_backward on one head):")
three_way("attention_backward", (dout, q, k, v), attention, dout, (q, k, v), ["dq", "dk", "dv"])
_, dk0, dv0 = use("attention_backward", attention_backward)(dout * (np.arange(4) == 0)[:, None], q, k, v)
future = np.abs(dk0[1:]).max() + np.abs(dv0[1:]).max()
print(f"the loss of position 0 alone: the largest gradient of k and v at positions 1–3 (its future) "
      f"is {future:.1f}")
assert future == 0.0, "a masked weight is exactly 0: the future gets no gradient"

# %% [markdown]
# ## 3. AdamW, from its update rule
#
# For each parameter θ with gradient g, at step t = 1, 2, …:
#
# m ← β₁ m + (1 − β₁) g,   v ← β₂ v + (1 − β₂) g²,   m̂ = m / (1 − β₁ᵗ),   v̂ = v / (1 − β₂ᵗ),
# θ ← θ − lr · (m̂ / (√v̂ + ε) + λ θ).
#
# m and v are running means of the gradient and its square; both start at 0, so early on they are
# too small by the factors 1 − βᵗ — the **bias correction** divides that out. The weight decay λθ
# is **decoupled**: added to the step, not to g (adding it to g would send it through m and v, and
# a parameter with large gradients would barely decay: that is Adam with L2, not AdamW). Return new
# arrays; the caller keeps the old ones.

# %%
def adamw_step(theta, g, m, v, t, lr, beta1, beta2, eps, weight_decay):
    raise NotImplementedError    # your code here: return theta, m, v


check("adamw_step", adamw_step)

# %% [markdown]
# Beside the library's `AdamW` (`minillm/train/optim.py`, which updates its arrays in place) for
# five steps on a 3 × 4 matrix pulled towards a target (g = θ − target):

# %%
step_fn = use("adamw_step", adamw_step)
target = rng.normal(size=(3, 4))
mine, m_, v_ = rng.normal(size=(3, 4)), np.zeros((3, 4)), np.zeros((3, 4))
library = mine.copy()
opt = AdamW({"w": library}, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
for step in range(1, 6):
    g = mine - target
    mine, m_, v_ = step_fn(mine, g, m_, v_, step, 0.05, 0.9, 0.95, 1e-8, 0.1)
    opt.step({"w": library - target}, 0.05)
    print(f"step {step}: |θ − target| mean {np.abs(mine - target).mean():.4f}; yours − library's: "
          f"{against_library('adamw_step', adamw_step, np.abs(mine - library).max())}")
assert np.abs(mine - library).max() < LIB_TOL, "the AdamW step must match the library's"
first = 0.05 * 0.1 / math.sqrt(0.05)           # step 1 without correction: lr · (1 − β₁) g / √((1 − β₂) g²)
print(f"step 1's Adam part moves each entry by lr = 0.05 with the bias correction (m̂ / √v̂ = ±1); "
      f"without it, by {first:.4f}: (1 − β₁) / √(1 − β₂) = {first / 0.05:.3f} of that")

# %% [markdown]
# ## 4. The training loop
#
# Each step: a batch of windows of the text (`batch_of`), the loss and every gradient (the library's
# `loss_and_grads`: the whole model's backward, made of the pieces above — `grad_model.py`), the
# gradients clipped to norm 1, the learning rate of this step (`lr_schedule`), and your AdamW on
# every parameter (the decay on matrices only, not on biases and norm gains).
#
# **The schedule**: the learning rate rises linearly for `warmup` steps (m and v are still noisy
# averages of a few gradients), then follows half a cosine from `max_lr` down to `min_lr` at the
# last step. **A batch**: for each start s, the window ids[s : s + T] and, as targets, the token
# after each of them, ids[s + 1 : s + T + 1].

# %%
def lr_schedule(step, max_lr, min_lr, warmup, total):
    raise NotImplementedError    # your code here


def batch_of(ids, starts, T):
    raise NotImplementedError    # your code here: return x, y


check("lr_schedule", lr_schedule)
check("batch_of", batch_of)

# %% [markdown]
# The model: 2 layers of width 32, 4 heads, a 32-token window, the 2,048-token vocabulary of the
# shipped Shakespeare tokenizer; the text: the Shakespeare sample shipped in `weights/shakespeare/`,
# its last tenth held out. Before training its loss is about ln V (a uniform guess).

# %%
text = (WEIGHTS / "shakespeare" / "val_sample.txt").read_text(encoding="utf-8")
tok = Tokenizer.load(WEIGHTS / "shakespeare" / "tokenizer.json")
train_text, val_text = split_text(text, 0.1)
train_ids = token_array(tok.encode(train_text), tok.vocab_size)
val_ids = token_array(tok.encode(val_text), tok.vocab_size)
config = ModelConfig(vocab_size=tok.vocab_size, n_ctx=32, d_model=32, n_heads=4, n_layers=2)
BATCH, T, WARMUP = 8, config.n_ctx, 20
windows = np.arange(0, len(val_ids) - T - 1, T)                 # the held-out text in windows
val_x, val_y = LIBRARY["batch_of"](val_ids.astype(np.int64), windows, T)


def val_loss(params):
    return loss_and_grads(params, config, val_x, val_y)[0]


model = GPT(config, seed=0)
print(f"V = {config.vocab_size}; {len(train_ids):,} training and {len(val_ids):,} held-out tokens; "
      f"{model.num_parameters():,} parameters; loss before training {val_loss(model.params):.3f}, ln V = {math.log(config.vocab_size):.3f}")

# %%
schedule, make_batch = use("lr_schedule", lr_schedule), use("batch_of", batch_of)
step_fn = use("adamw_step", adamw_step)
named = model.params.named()                                    # {name: the model's own array}
state = {name: (np.zeros_like(a), np.zeros_like(a)) for name, a in named.items()}
batches = np.random.default_rng(1)
losses, rates = [], []
start = time.perf_counter()
for step in range(STEPS):
    x, y = make_batch(train_ids.astype(np.int64), batches.integers(0, len(train_ids) - T - 1, BATCH), T)
    loss, grads = loss_and_grads(model.params, config, np.asarray(x), np.asarray(y))
    clip_grad_norm(grads, 1.0)
    lr = schedule(step, MAX_LR, MAX_LR / 10, WARMUP, STEPS)
    for name, a in named.items():
        m_, v_ = state[name]
        new, m_, v_ = step_fn(a, grads[name], m_, v_, step + 1, lr, 0.9, 0.95, 1e-8, 0.1 if a.ndim >= 2 else 0.0)
        a[...], state[name] = new, (m_, v_)                     # into the model's array
    losses.append(loss)
    rates.append(lr)
seconds = time.perf_counter() - start
trained = val_loss(model.params)
print(f"{STEPS} steps of {BATCH} × {T} tokens in {seconds:.1f} s; training loss {np.mean(losses[:10]):.3f} "
      f"(first 10 steps) → {np.mean(losses[-10:]):.3f} (last 10); held-out loss {trained:.3f}")
claim(trained < 5.0, "the held-out loss is below 5.0 nats", f"it is {trained:.3f}: more STEPS, or another MAX_LR")
claim(seconds < 20, "the loop ran in under 20 s here", f"it took {seconds:.1f} s")
print(f"(ln V = {math.log(config.vocab_size):.3f} is a uniform guess's loss)")
print(f"held-out minus training (last 10 steps): {trained - np.mean(losses[-10:]):+.3f} nats; the run "
      f"read {STEPS * BATCH * T:,} tokens, {STEPS * BATCH * T / len(train_ids):.1f} times the training text")

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3), dpi=80)
ax1.plot(rates)
ax1.set(xlabel="step", ylabel="learning rate", title="warm-up, then half a cosine")
ax2.plot(losses, lw=0.8, label="training batch")
ax2.axhline(trained, color="C1", ls="--", label="held-out, after")
ax2.axhline(math.log(config.vocab_size), color="gray", ls=":", label="ln V (uniform)")
ax2.set(xlabel="step", ylabel="loss (nats)", title="the loss")
ax2.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# The held-out loss is above the last training batches' loss (by the +0.695 nats printed). That
# is expected of a small text: the run read its training text 3.7 times over, and the model fits
# what it has read better than what it has not — the start of overfitting, which more steps on
# this text would widen. (Part of the gap may also be that the held-out tenth is other text.)
#
# ## 5. What the loss means: perplexity and bits
#
# A loss of L nats per token is a **perplexity** of e^L: the model is as unsure as a uniform
# choice among e^L tokens. In **bits** it is L / ln 2 per token — the length of the text
# compressed with the model's probabilities (an arithmetic coder gets within a few bits of it) —
# and, over the text's characters, bits per character. Against baselines computed on the same
# held-out text: a uniform guess (ln V), a **unigram** model (each token's frequency in the
# training text, every count plus one so no token has probability 0) and a **bigram** model
# (the frequency of each token after the previous one, counts plus 0.01). The added counts are
# smoothing: a token or pair never seen in training would get probability 0, an infinite loss; the
# bigram's is small because most of its V² pairs are unseen, and a count of 1 on each would drown
# the few seen ones in its rows.

# %%
V = config.vocab_size
counts = np.bincount(train_ids, minlength=V) + 1.0
unigram = float(-np.log(counts[val_ids] / counts.sum()).mean())
pairs = np.full((V, V), 0.01)
np.add.at(pairs, (train_ids[:-1], train_ids[1:]), 1.0)
bigram = float(-np.log(pairs[val_ids[:-1], val_ids[1:]] / pairs[val_ids[:-1]].sum(-1)).mean())
rows = {"uniform (ln V)": math.log(V), "unigram": unigram, "bigram": bigram, "the trained model": trained}
chars_per_token = len(val_text) / len(val_ids)
print(f"{'':18s} {'nats/token':>10s} {'perplexity':>10s} {'bits/token':>10s} {'bits/char':>9s}")
for name, L in rows.items():
    print(f"{name:18s} {L:10.3f} {math.exp(L):10.1f} {L / math.log(2):10.3f} "
          f"{bits_per_char(L, len(val_ids), len(val_text)):9.3f}")
print(f"({chars_per_token:.2f} characters per token in the held-out text)")
claim(trained < bigram < unigram < math.log(V), "trained model < bigram < unigram < uniform",
      "a short run may not yet beat the bigram: more STEPS")
print(f"the model's perplexity is {math.exp(bigram - trained):.2f}× smaller than the bigram's")

# %% [markdown]
# ## 6. The scale of the initialisation
#
# A toy first: 8 layers of h ← tanh(h W), width 64, every W drawn with std gain / √64 (so h W has
# about gain² times h's variance). Three gains: 0.5, too small; 5/3, tanh's own (its slope at 0 is
# 1 and it squashes large inputs, and 5/3 makes up for the squashing: PyTorch's `calculate_gain`);
# and 3, too large. The activations' std at each layer going up, and the std of the gradient
# reaching each layer coming back down (it flows through the same W's, transposed, and through
# tanh's slope 1 − h²):

# %%
def tanh_stack(gain, depth=8, width=64, seed=0):
    r = np.random.default_rng(seed)
    Ws = [r.normal(size=(width, width)) * gain / math.sqrt(width) for _ in range(depth)]
    h, hs = r.normal(size=(256, width)), []                 # 256 inputs
    for W in Ws:
        h = np.tanh(h @ W)                                  # [256, 64]
        hs.append(h)
    grad, gs = r.normal(size=h.shape), []                   # ∂L/∂h at the top, for a random L
    for W, h in zip(reversed(Ws), reversed(hs)):
        grad = (grad * (1 - h * h)) @ W.T                   # back through tanh, then through W
        gs.append(grad.std())
    return [h.std() for h in hs], gs[::-1], float((np.abs(hs[-1]) > 0.99).mean())


fig, axes = plt.subplots(1, 2, figsize=(9, 2.8), dpi=80)
toy = {}
for gain in (0.5, 5 / 3, 3.0):
    acts, grads_, saturated = toy[gain] = tanh_stack(gain)
    axes[0].plot(range(1, 9), acts, "o-", label=f"gain {gain:.2f}")
    axes[1].plot(range(1, 9), grads_, "o-", label=f"gain {gain:.2f}")
    print(f"gain {gain:.2f}: activation std, layer 1 → 8: {acts[0]:.3f} → {acts[-1]:.3f} "
          f"({saturated:.0%} of the last layer's units at |h| > 0.99); gradient std, layer 8 → 1: "
          f"{grads_[-1]:.3f} → {grads_[0]:.3f}")
axes[0].set(title="toy: activation std", xlabel="layer", yscale="log")
axes[1].set(title="toy: gradient std", xlabel="layer", yscale="log")
axes[0].legend(fontsize=7)
plt.tight_layout()
plt.show()

# %% [markdown]
# Too small, the signal halves at every layer and so does the gradient on its way down: the
# first layers barely learn. Too large, the units saturate and the gradient *grows* on its way
# down (each W multiplies it by about the gain, more than tanh's slope takes away): the first
# layers' steps are the largest, the unstable end. At tanh's gain both stay within a small factor
# over the eight layers.
#
# The same measurement on the model of section 4, fresh and untrained, its weights drawn with the
# three `INIT_STDS` (GPT-2 uses 0.02; `init_params` also divides the two projections that write
# into the residual stream by √(2L)): the residual stream's std after the embedding and after each
# block, each block's weight gradients, and the loss before any step.

# %%
def measure(std):
    params = init_params(config, np.random.default_rng(0), std=std)
    x, mask, _, rope = embed_inputs(params, config, val_x[:4])
    spread = [float(x.std())]
    for bp in params.blocks:
        x, _ = block_forward(x, bp, config, mask, rope)      # [B, T, C]
        spread.append(float(x.std()))
    loss, grads = loss_and_grads(params, config, val_x[:4], val_y[:4])
    per_block = [float(np.sqrt(np.mean([grads[n].std() ** 2 for n in grads if n.startswith(f"blocks.{i}.")
                                        and grads[n].ndim == 2]))) for i in range(config.n_layers)]
    return spread, per_block, loss


fig, axes = plt.subplots(1, 2, figsize=(9, 2.8), dpi=80)
measured = {}
for std in INIT_STDS:
    spread, per_block, loss = measured[std] = measure(std)
    axes[0].plot(spread, "o-", label=f"std {std}")
    axes[1].plot(per_block, "o-", label=f"std {std}")
    print(f"init std {std}: residual std {[round(v, 4) for v in spread]}; weight-gradient std per "
          f"block {[f'{g:.1e}' for g in per_block]}; loss {loss:.3f} (ln V = {math.log(V):.3f})")
axes[0].set(title="model: residual std", yscale="log", xticks=range(config.n_layers + 1),
            xticklabels=["embedding"] + [f"block {i + 1}" for i in range(config.n_layers)])
axes[1].set(title="model: weight-gradient std", yscale="log", xticks=range(config.n_layers),
            xticklabels=[f"block {i + 1}" for i in range(config.n_layers)])
axes[0].legend(fontsize=7)
plt.tight_layout()
plt.show()
small, right, large = (measured[std] for std in INIT_STDS)
print(f"too small: block gradients {right[1][0] / small[1][0]:.0f}× smaller than at std {INIT_STDS[1]}; "
      f"too large: the stream grows {large[0][-1] / large[0][0]:.1f}× through the blocks and the loss "
      f"starts {large[2] - math.log(V):+.2f} nats from ln V (confident, wrong guesses)")
claim(right[1][0] > 10 * small[1][0], f"std {INIT_STDS[0]} gives block gradients over 10× smaller than std {INIT_STDS[1]}")
_ = claim(large[2] > math.log(V) + 0.1 and large[0][-1] > 2 * large[0][0],
          f"std {INIT_STDS[2]} starts above ln V, the blocks amplifying the stream")

# %% [markdown]
# Too small, every block adds almost nothing to the stream and their gradients are tiny: the
# model starts as "embedding, then head". Too large, the blocks amplify the stream and the first
# predictions are confident and wrong, above ln V. (Adam divides each gradient by its own running
# size, so the gradients' scale matters less to it than to plain SGD; the weights' own scale still
# does.)

# ## 7. LoRA on a 4 × 4 matrix, then in the model
#
# LoRA trains a low-rank correction of a frozen matrix. minillm stores a projection as W [in, out]
# and computes x W, so the adapted matrix is W' = W + (α / r) · A B with A [in, r] and B [r, out]
# (PEFT writes W + (α / r) · B A for its W [out, in]: the same product, transposed). At rank r = 1
# on a 4 × 4 matrix, A is a column and B a row: their product is a 4 × 4 matrix of rank one,
# written with 8 numbers instead of 16. The forward, for one row x:
#
# y = x W + (α / r) · (x A) B — x A is one number, which scales the row B.

# %%
W = np.arange(16.0).reshape(4, 4) / 4
A, B = np.array([[1.0], [0.0], [2.0], [1.0]]), np.array([[0.5, 0.0, -1.0, 1.0]])   # [4, 1], [1, 4]
alpha, r = 2.0, 1
x = np.array([[1.0, 2.0, 0.0, 1.0]])                                                # [1, 4]
s = alpha / r
print(f"x A = {(x @ A).item():.1f}; (α / r) · (x A) B = {np.round(s * (x @ A) @ B, 2).tolist()}")
print(f"y = x W + that = {np.round(x @ W, 2).tolist()} + … = {np.round(x @ W + s * (x @ A) @ B, 2).tolist()}")
merged = W + s * A @ B                                                              # the merge
print(f"merged W' = W + (α / r) A B, of rank-one change {np.linalg.matrix_rank(merged - W)}: "
      f"x W' = {np.round(x @ merged, 2).tolist()} (the same y, one product, no adapter at run time)")

# %% [markdown]
# The gradients. Given G = ∂L/∂W' (what the model's backward computes for the matrix: xᵀ dy), a
# change dA moves W' by (α / r) dA B, so dL = ⟨G, (α / r) dA B⟩ = ⟨(α / r) G Bᵀ, dA⟩, and likewise
# for B: **dL/dA = (α / r) G Bᵀ** [in, r] and **dL/dB = (α / r) Aᵀ G** [r, out]. W gets none: it
# is frozen. On the toy, with L = Σ dy ⊙ y:

# %%
dy = np.array([[1.0, -1.0, 0.0, 2.0]])
G = x.T @ dy                                                                        # [4, 4]


def toy_lora_loss(A_, B_):
    return float((dy * (x @ W + s * (x @ A_) @ B_)).sum())


dA, dB = s * G @ B.T, s * A.T @ G
print(f"dL/dA = {dA.ravel().tolist()}  finite differences {np.round(numeric_grad(lambda a: toy_lora_loss(a, B), A).ravel(), 6).tolist()}")
print(f"dL/dB = {dB.ravel().tolist()}  finite differences {np.round(numeric_grad(lambda b: toy_lora_loss(A, b), B).ravel(), 6).tolist()}")

# %% [markdown]
# Yours: the forward and the two gradients.

# %%
def lora_forward(x, W, A, B, alpha):
    raise NotImplementedError    # your code here: the adapted layer's output y [N, out]


def lora_grads(G, A, B, alpha):
    raise NotImplementedError    # your code here: return dA, dB


check("lora_forward", lora_forward)
check("lora_grads", lora_grads)

# %% [markdown]
# **Why α / r.** The first Adam step moves every entry of B by ±lr (m̂ / √v̂ = ±1 at t = 1, section
# 3), whatever r is. The change of W' is then (α / r) · A ΔB, a sum of r rank-one terms each pushing
# the loss down, so to first order the loss falls by ⟨G, ΔW'⟩ — proportional to r times the scale.
# With the scale α / r that product is α: changing r keeps the update's effect (the LoRA paper's
# reason: α and the learning rate need not be tuned again for each r). With a scale of 1 the same
# step grows with r. That argument holds **α fixed** while r changes, PEFT's convention
# (`LoraConfig` defaults to r = 8, `lora_alpha` = 8). minillm's `init_lora` ties α to r instead:
# by default α = 2 · rank, so s = 2 at every r and the step grows with r as with a scale of 1
# (pass `alpha=` to keep α fixed; notebook 15 says the same). Measured on a 64 × 64 matrix, B
# starting at 0 and A random (as `init_lora` does), for one gradient G, with α = 4 fixed, with
# init_lora's default and with a scale of 1:

# %%
G64, r64 = np.random.default_rng(2).normal(size=(64, 64)), np.random.default_rng(3)
effects = {}
for rank in (1, 2, 4, 8, 16):
    A64 = r64.uniform(-1 / 8, 1 / 8, (64, rank))                                    # ±1/√in
    for scale_name, scale in (("α / r", 4.0 / rank), ("2r / r", 2.0), ("1", 1.0)):
        dB64 = -0.01 * np.sign(scale * A64.T @ G64)                                 # the first Adam step: −lr·sign
        effects[rank, scale_name] = float((G64 * (scale * A64 @ dB64)).sum())       # ⟨G, ΔW'⟩
for scale_name in ("α / r", "2r / r", "1"):
    print(f"scale {scale_name:6s}: ⟨G, ΔW'⟩ at r = 1, 2, 4, 8, 16: "
          f"{[round(effects[rank, scale_name], 2) for rank in (1, 2, 4, 8, 16)]}")
spread = {n: max(abs(effects[k, n]) for k in (1, 2, 4, 8, 16)) / min(abs(effects[k, n]) for k in (1, 2, 4, 8, 16))
          for n in ("α / r", "2r / r", "1")}
print(f"largest / smallest over the ranks: {spread['α / r']:.2f} with α = 4 fixed, "
      f"{spread['2r / r']:.1f} with init_lora's default α = 2r, {spread['1']:.1f} with a scale of 1")
_ = claim(spread["α / r"] < 1.5 < spread["1"], "with α / r the first step's effect hardly depends on r")

# %% [markdown]
# **In the model.** Adapters of rank `LORA_RANK` on every attention and FFN matrix of the model
# trained in section 4 (`init_lora`: A random, B = 0, so training starts from the model exactly),
# taught one line it has never seen. Each step: the gradients G of the merged model
# (`merged_params`, then the library's backward), your `lora_grads` turning each G into dA and dB,
# your AdamW on A and B only.
# Beside it, the library's LoRA gradients (`lora_loss_and_grads`, which never forms W' or G).

# %%
line = "ROMEO. The moon is a cheese, and I have eaten it.\n"
ids = np.array(tok.encode(line * 3)[:config.n_ctx + 1], dtype=np.int64)[None]        # [1, T + 1]
grads_fn, forward_fn = use("lora_grads", lora_grads), use("lora_forward", lora_forward)
lora = init_lora(model.params, rank=LORA_RANK, rng=np.random.default_rng(0))
adapters = lora.named()                                                             # {"….lora_A": A, …}
lora_state = {name: (np.zeros_like(a), np.zeros_like(a)) for name, a in adapters.items()}
before = loss_and_grads(model.params, config, ids[:, :-1], ids[:, 1:])[0]
for step in range(1, 11):
    loss, G_all = loss_and_grads(merged_params(model.params, lora), config, ids[:, :-1], ids[:, 1:])
    mine = {}
    for name, (A_, B_) in lora.adapters.items():
        mine[name + ".lora_A"], mine[name + ".lora_B"] = grads_fn(G_all[name], A_, B_, lora.alpha)
    if step == 2:                                    # (at step 1 B = 0, so every dA is 0)
        _, theirs = lora_loss_and_grads(model.params, config, lora, ids[:, :-1], ids[:, 1:])
        worst = max(relative_error(mine[n], theirs[n]) for n in theirs if np.abs(theirs[n]).max() > 0)
        print(f"step 2: your dA, dB against the library's, the worst of {len(theirs)}: {worst:.2e} "
              f"(tolerance {F32_TOL:.0e}: these are the model's float32 arrays, two routes of sums)"
              if grads_fn is not LIBRARY["lora_grads"] else
              f"step 2: your dA, dB against the library's: not written yet, the library's own")
        assert worst <= F32_TOL, f"your LoRA gradients differ from the library's by {worst:.2e}"
    for name, a in adapters.items():
        m_, v_ = lora_state[name]
        new, m_, v_ = step_fn(a, mine[name], m_, v_, step, 3e-3, 0.9, 0.95, 1e-8, 0.0)
        a[...], lora_state[name] = new, (m_, v_)
after = loss_and_grads(merged_params(model.params, lora), config, ids[:, :-1], ids[:, 1:])[0]
trainable = sum(a.size for a in adapters.values())
print(f"rank {LORA_RANK}: {trainable:,} trained numbers ({trainable / model.num_parameters():.1%} of the model); "
      f"the line's loss {before:.3f} → {after:.3f} after 10 steps; the base weights unchanged: "
      f"held-out loss still {val_loss(model.params):.3f}")
wq = "blocks.0.attn.wq"
x0 = np.random.default_rng(4).normal(size=(2, config.d_model))
A0, B0 = lora.adapters[wq]
print(f"your lora_forward on {wq} equals x W' of the merged model: "
      f"{np.allclose(forward_fn(x0, model.params.blocks[0].attn.wq, A0, B0, lora.alpha), x0 @ merged_params(model.params, lora).blocks[0].attn.wq, atol=1e-5)}")
_ = claim(after < before, "ten LoRA steps lower the new line's loss")

# %% [markdown]
# ## Exercise: clipping the gradient
#
# The loop of section 4 clips every step's gradients to norm 1 before AdamW (the library's
# `clip_grad_norm`): one step on an unlucky batch cannot throw the weights far. Write
# `clip_grads(grads, max_norm)`, for a list of arrays: if their norm — taken over all of them
# together, as if they were one long vector — is above `max_norm`, scale every array by the same
# factor so that it becomes `max_norm`; otherwise leave them as they are. Return new arrays.

# %%
def clip_grads(grads, max_norm):
    raise NotImplementedError    # your code here: return the list of clipped arrays


check("clip_grads", clip_grads)
step_grads = loss_and_grads(model.params, config, val_x[:2], val_y[:2])[1]     # {name: gradient}
library_clipped = {name: g.copy() for name, g in step_grads.items()}
norm_before = clip_grad_norm(library_clipped, 0.5)                              # in place
yours_clipped = use("clip_grads", clip_grads)(list(step_grads.values()), 0.5)
gap = max(relative_error(a, b) for a, b in zip(yours_clipped, library_clipped.values()))
print(f"the trained model's gradient on two held-out windows: norm {norm_before:.3f}, clipped to 0.5; "
      f"yours against the library's clip_grad_norm: {against_library('clip_grads', clip_grads, gap)}")
assert gap <= F32_TOL, f"the clipped gradients differ from the library's by {gap:.2e}"
