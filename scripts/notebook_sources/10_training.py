# %% [markdown]
# # 10 · Training: a tiny model in under a minute
#
# > 在训练时，Transformer 是一次性并行计算整个序列的。……它不是一步一步算的，是一次性算完的。
# >
# > *During training the transformer computes the whole sequence in parallel, at once … not step
# > by step.*
#
# Training is the loop that makes the next-token predictions good: take windows of text, compute
# the mean next-token loss over every position in one forward pass, backpropagate, update the
# weights with AdamW, repeat. This notebook trains a tiny GPT on Shakespeare with
# `minillm.train.train` for a few hundred steps, plots the loss curve, checks that the loss of one
# parallel forward is exactly the loss of predicting the tokens one at a time, checks the
# hand-written backward pass against finite differences (a gradient check), and makes a model
# overfit on purpose to show what the gap between training and validation loss means.
#
# **Try this:** change `settings` (steps, batch, learning rate), the model `config`, or
# `TINY_TOKENS` in the overfitting section, and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import json
import math
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from minillm import GPT, KVCache, ModelConfig
from minillm.functional import log_softmax
from minillm import generate
from minillm.tokenizer import Tokenizer
from minillm.train import TrainSettings, loss_and_grads, train
from minillm.train.data import split_text, token_array
from nbhelpers import WEIGHTS, claim, shared_text

# %% [markdown]
# ## Data and model
#
# The text: Shakespeare (the 7-play corpus from the development data when present, else the
# sample shipped in `weights/shakespeare/`), cut into ids by the BPE tokenizer shipped with the
# Shakespeare model. The model: 2 layers, width 64, 4 heads, a 64-token window.

# %%
text = shared_text("corpora/shakespeare_7plays.txt")
text = text[:300_000] if text is not None else (WEIGHTS / "shakespeare" / "val_sample.txt").read_text(encoding="utf-8")
tok = Tokenizer.load(WEIGHTS / "shakespeare" / "tokenizer.json")
train_text, val_text = split_text(text, 0.1)
train_ids = token_array(tok.encode(train_text), tok.vocab_size)
val_ids = token_array(tok.encode(val_text), tok.vocab_size)
config = ModelConfig(vocab_size=tok.vocab_size, n_ctx=64, d_model=64, n_heads=4, n_layers=2)
model = GPT(config, seed=0)
print(f"{len(text):,} characters → {len(train_ids):,} training and {len(val_ids):,} validation tokens")
named = model.params.named()
in_blocks = sum(a.size for k, a in named.items() if k.startswith("blocks."))
print(f"{model.num_parameters():,} parameters: {in_blocks:,} in the blocks, "
      f"{named['wte'].size:,} in the token embedding table; {config}")

# %% [markdown]
# Before training, the model's predictions are close to uniform over the V tokens, so the loss
# starts near ln V:

# %%
x0 = val_ids[:config.n_ctx].astype(np.int64)[None]                 # [1, n_ctx]: n_ctx - 1 predictions
print(f"initial loss {model.loss(x0):.3f}   ln V = ln {config.vocab_size} = {math.log(config.vocab_size):.3f}")
assert abs(model.loss(x0) - math.log(config.vocab_size)) < 0.5, \
    f"an untrained model should predict about uniformly: loss {model.loss(x0):.3f} vs ln V "\
    f"{math.log(config.vocab_size):.3f}; re-create `model` (GPT(config, seed=0)) before training it"

# %% [markdown]
# ## Train
#
# Each step: a batch of 16 random 64-token windows; one forward over all 16 × 64 positions; the
# backward pass; gradient clipping; AdamW with warm-up and cosine decay. The loop writes its log
# (JSON lines) and checkpoints into a temporary directory.

# %%
settings = TrainSettings(steps=300, batch=16, lr=3e-3, min_lr=3e-4, warmup=20, eval_every=50,
                         eval_windows=16, log_every=10, checkpoint_every=300, seed=0)
with tempfile.TemporaryDirectory() as out:
    start = time.perf_counter()
    train(model, train_ids, val_ids, out, settings, progress=lambda line: None)
    seconds = time.perf_counter() - start
    log = [json.loads(line) for line in (Path(out) / "train_log.jsonl").read_text().splitlines()]
print(f"{settings.steps} steps in {seconds:.0f} s "
      f"({settings.steps * settings.batch * config.n_ctx / seconds:,.0f} tokens/s)")
print(f"training loss: first record {log[0]['loss']:.3f}, last {log[-1]['loss']:.3f}; "
      f"validation loss: {[round(r['val_loss'], 3) for r in log if 'val_loss' in r]}")
assert log[-1]["loss"] < log[0]["loss"] - 1.0, "the training loss should fall by more than 1 nat"

# %%
fig, ax = plt.subplots(figsize=(8, 4))
ax.plot([r["step"] for r in log], [r["loss"] for r in log], label="training loss (mean of 10 steps)")
val = [r for r in log if "val_loss" in r]
ax.plot([r["step"] for r in val], [r["val_loss"] for r in val], "o-", label="validation loss")
ax.axhline(math.log(config.vocab_size), color="grey", ls=":", label="ln V (uniform guess)")
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy (nats per token)")
ax.set_title(f"Training a {model.num_parameters() / 1e3:.0f}k-parameter GPT on Shakespeare")
ax.legend()
plt.show()

# %% [markdown]
# What the minute bought — a sampled continuation (temperature 0.8, top-k 40, seed 0). Greedy
# decoding of so small a model tends to repeat its single most likely token (often a line
# break); sampling shows better what it has learned: the shape of a play, names, common words.

# %%
prompt = tok.encode("KING.\n")
sampled = [s.id for s in generate(model, prompt, max_new_tokens=60, temperature=0.8, top_k=40, seed=0)]
print(tok.decode(prompt + sampled))

# %% [markdown]
# ## One parallel forward = the loss of predicting token by token
#
# The training loss of a window is the mean over its positions of −log p(next token | the tokens
# before it). Computed the training way, that is **one** forward pass over the window (the
# causal mask keeps each position from seeing its answer). Computed the generation way, it is one
# forward per token, each feeding a single new token with a KV cache. Same number:

# %%
window = val_ids[:config.n_ctx].astype(np.int64)                   # [T + 1] with T + 1 = n_ctx
parallel = model.loss(window)                                       # one forward over T positions

cache, nll, passes = KVCache(config, capacity=config.n_ctx), [], 0
for t in range(len(window) - 1):                                    # T forwards, one token each
    logits = model(window[t:t + 1], cache=cache)[-1]                # [V]
    passes += 1
    nll.append(-float(log_softmax(logits)[window[t + 1]]))
sequential = float(np.mean(nll))
train_fn, _ = loss_and_grads(model.params, config, window[None, :-1], window[None, 1:])
print(f"one parallel forward: {parallel:.6f}")
print(f"{passes} sequential forwards: {sequential:.6f}   (|difference| {abs(parallel - sequential):.1e})")
print(f"the training step's loss_and_grads on the same window: {train_fn:.6f}")
assert abs(parallel - sequential) < 1e-4 and abs(parallel - train_fn) < 1e-4, \
    f"one parallel forward, {passes} cached single-token forwards and loss_and_grads should give one loss "\
    f"(float32, ±1e-4): {parallel:.6f}, {sequential:.6f}, {train_fn:.6f}"

fig, ax = plt.subplots(figsize=(8, 3.5))
ax.plot(nll, ".-")
ax.axhline(parallel, color="C3", ls="--", label=f"mean = loss of the parallel forward ({parallel:.3f})")
ax.set_xlabel("position t in the window")
ax.set_ylabel("−log p(token t+1)")
ax.set_title("Per-position losses, computed one token at a time")
ax.legend()
plt.show()

# %% [markdown]
# Training can use the parallel form because the whole text is known in advance; that is why a
# step over 16 × 64 positions costs about as much as a few generation steps. Generation cannot
# (notebook 04): its next token has to be chosen before the following position can be computed.

# %% [markdown]
# ## The backward pass, and a gradient check
#
# `loss_and_grads` returns the loss and ∂loss/∂θ for every parameter θ, computed by hand-written
# backward passes (`minillm/train/grad_*.py`): each layer's forward keeps what its backward needs,
# and the backward applies the chain rule layer by layer in reverse. For LayerNorm, for example
# (`grad_norm.py`):
#
#     x̂ = (x − μ) · r,  r = 1/√(σ² + ε),  y = x̂ ⊙ w + b
#     ∂L/∂x = r · (g − mean(g) − x̂ · mean(g ⊙ x̂)),  g = ∂L/∂y ⊙ w
#
# How do we know such formulas are right? The **gradient check**: nudge one parameter by ±h and
# measure how the loss moves, (L(θ + h) − L(θ − h)) / 2h, which must match the computed
# derivative. On a model small enough to do it for a few entries of every kind of tensor:

# %%
tiny_config = ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
tiny = GPT(tiny_config, seed=0)
rng = np.random.default_rng(0)
ids = rng.integers(0, 16, (2, 9))                                   # [B, T + 1] random text
x_ids, y_ids = ids[:, :-1], ids[:, 1:]
loss, grads = loss_and_grads(tiny.params, tiny_config, x_ids, y_ids)
named_tiny = tiny.params.named()                                    # views into the parameters
H = 1e-2                                                            # float32: h not too small
worst = 0.0
for name in ["wte", "wpe", "blocks.0.attn.wq", "blocks.0.attn.wv", "blocks.0.ffn.w_up", "blocks.0.norm1.weight"]:
    flat = named_tiny[name].reshape(-1)
    for i in rng.choice(flat.size, 2, replace=False):
        old = flat[i]
        flat[i] = old + H
        up = loss_and_grads(tiny.params, tiny_config, x_ids, y_ids)[0]
        flat[i] = old - H
        down = loss_and_grads(tiny.params, tiny_config, x_ids, y_ids)[0]
        flat[i] = old                                               # put it back
        numeric, analytic = (up - down) / (2 * H), float(grads[name].reshape(-1)[i])
        worst = max(worst, abs(numeric - analytic) / (5e-3 + 0.05 * abs(analytic)))
        print(f"{name:22s}[{i:3d}]  finite difference {numeric:+.5f}   backward pass {analytic:+.5f}")
assert worst <= 1, "a gradient differs from its finite difference by more than float32 allows"
print("✓ every entry agrees within float32 rounding (h = 1e-2; the model computes in float32)")

# %% [markdown]
# (In float32 the loss carries ~7 digits, so h cannot be tiny and the two agree to about 1e-3,
# not 1e-8; the library's tests run the same check on every layer.)
#
# ## Overfitting: a small sample learned by heart
#
# The validation loss above keeps falling with the training loss: 300 steps on a few hundred
# thousand tokens is far from exhausting the text. Train the same model on a **tiny** sample
# instead — `TINY_TOKENS` tokens, each seen about sixty times — and the two curves part: the
# training loss keeps falling (the model memorises those windows), while the validation loss, on
# text it has never seen, stops improving and then rises. That gap is overfitting: what was learned is the
# sample, not the language. (A clone without the development data trains the main run on the
# small shipped sample, and shows the beginning of the same gap there.)

# %%
TINY_TOKENS = 1_000
small = GPT(config, seed=0)
tiny_settings = TrainSettings(steps=120, batch=8, lr=3e-3, min_lr=3e-4, warmup=10, eval_every=10,
                              eval_windows=8, log_every=10, checkpoint_every=120, seed=0)
with tempfile.TemporaryDirectory() as out:
    train(small, train_ids[:TINY_TOKENS], val_ids, out, tiny_settings, progress=lambda line: None)
    small_log = [json.loads(line) for line in (Path(out) / "train_log.jsonl").read_text().splitlines()]
small_val = [r for r in small_log if "val_loss" in r]
best = min(small_val, key=lambda r: r["val_loss"])
print(f"{TINY_TOKENS} training tokens, {tiny_settings.steps * tiny_settings.batch * config.n_ctx:,} "
      f"token positions seen: each token about "
      f"{tiny_settings.steps * tiny_settings.batch * config.n_ctx / TINY_TOKENS:.0f} times")
print(f"training loss: last {small_log[-1]['loss']:.3f};  validation: best {best['val_loss']:.3f} at step "
      f"{best['step']}, last {small_val[-1]['val_loss']:.3f}")
claim(small_val[-1]["val_loss"] > best["val_loss"] + 0.05, "the validation loss rises again: overfitting",
      "not with these settings — more steps, or fewer TINY_TOKENS, overfit sooner")
claim(small_log[-1]["loss"] < small_val[-1]["val_loss"] - 0.5, "the training loss ends far below the "
      "validation loss", "the gap is under 0.5 nat here")

fig, ax = plt.subplots(figsize=(8, 4))
ax.plot([r["step"] for r in small_log], [r["loss"] for r in small_log], label="training loss (the tiny sample)")
ax.plot([r["step"] for r in small_val], [r["val_loss"] for r in small_val], "o-", label="validation loss (unseen text)")
ax.axvline(best["step"], color="grey", ls=":", label=f"best validation (step {best['step']})")
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy (nats per token)")
ax.set_title(f"Overfitting: {TINY_TOKENS} tokens learned by heart")
ax.legend()
plt.show()

# %% [markdown]
# The usual remedies are exactly what the main run had: more text than the model can memorise,
# and stopping (or keeping the checkpoint) where the validation loss is lowest.
#
# ## Exercises
#
# Write the function, run the cell: `check` prints the first case it gets wrong, or how many it
# passed. Solutions: `solutions/10_training.py`.
#
# **1. Cross-entropy.** `logits` [T, V], `targets` [T]: the mean over t of
# −log softmax(logits[t])[targets[t]] — stable for logits in the hundreds.

# %%
from exercises import check

def cross_entropy(logits, targets):
    raise NotImplementedError    # your code here

check("cross_entropy", cross_entropy)

# %% [markdown]
# **2. The backward pass of layer norm.** Given `dy` = ∂L/∂y for y = layer_norm(x, w, b, eps),
# return ∂L/∂x ([N, C], each row on its own). The check compares with finite differences.

# %%
def layer_norm_backward(dy, x, w, eps):
    raise NotImplementedError    # your code here

check("layer_norm_backward", layer_norm_backward)
