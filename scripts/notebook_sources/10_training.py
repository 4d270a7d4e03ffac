# %% [markdown]
# # 10 · Training: a tiny model, trained here
#
# > 在训练时，Transformer 是一次性并行计算整个序列的。……它不是一步一步算的，是一次性算完的。
# >
# > *During training the transformer computes the whole sequence in parallel, at once … not step
# > by step.*
#
# Training is the loop that makes the next-token predictions good: take windows of text, compute
# the mean next-token loss over every position in one forward pass, backpropagate, update the
# weights with AdamW, repeat. This notebook first trains a toy on a text of five repeating
# tokens, then a tiny GPT on Shakespeare with `minillm.train.train` for a few hundred steps, plots the loss curve, checks that the loss of one
# parallel forward is exactly the loss of predicting the tokens one at a time, checks the
# hand-written backward pass against finite differences (a gradient check), trains the same model
# *without* the causal mask to see what the mask is for, and makes a model overfit on purpose to
# show what the gap between training and validation loss means.
#
# **Try this:** change `settings` (steps 10 to 2,000, batch 1 to 64, learning rate lr from 1e-5
# to 1), the model `config` (n_ctx 8 to 128, d_model 8 to 256, n_layers 1 to 4), or
# `PEEK_STEPS` of the run without the causal mask (20 to 500), or `TINY_TOKENS` in the
# overfitting section (from n_ctx + 1 to the training text's length), and re-run.

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

from minillm import GPT, GPTParams, KVCache, ModelConfig
from minillm.functional import log_softmax
from minillm import generate
from minillm.tokenizer import Tokenizer
from minillm.train import TrainSettings, loss_and_grads, train
from minillm.train.data import split_text, token_array
from minillm.train import grad_model
from nbhelpers import WEIGHTS, claim, knob_range, min_times, shared_text

# %% [markdown]
# ## A toy first: five tokens that repeat
#
# The text "1 2 3 4 5 1 2 3 4 5 …" over a vocabulary of 16 tokens, and a model of one layer and
# width 8. Before training every next token is a guess among 16 (loss ln 16); the text is
# entirely predictable, so training should drive the loss towards 0 — and then the model
# continues the cycle by itself.

# %%
toy_config = ModelConfig(vocab_size=16, n_ctx=16, d_model=16, n_heads=2, n_layers=1)
toy = GPT(toy_config, seed=0)
toy_ids = np.tile(np.arange(1, 6), 100)                               # [500] the repeating text
toy_settings = TrainSettings(steps=60, batch=8, lr=1e-2, min_lr=1e-3, warmup=5, eval_every=60,
                             eval_windows=4, log_every=10, checkpoint_every=60, seed=0)
toy_before = toy.loss(toy_ids[:toy_config.n_ctx][None])
with tempfile.TemporaryDirectory() as out:
    train(toy, toy_ids, toy_ids, out, toy_settings, progress=lambda line: None)
toy_after = toy.loss(toy_ids[:toy_config.n_ctx][None])
toy_text = [s.id for s in generate(toy, [1, 2], max_new_tokens=10, temperature=0)]
claim(toy_text == [3, 4, 5, 1, 2, 3, 4, 5, 1, 2], "the toy continues the cycle", "not after so few steps")
print(f"loss before {toy_before:.3f} (ln 16 = {math.log(16):.3f}), after {toy_settings.steps} steps "
      f"{toy_after:.3f}; greedy after 1 2: {toy_text}")

# %% [markdown]
# The same loop, the same code, on real text next: there the loss cannot reach 0 — the next
# word of Shakespeare is not determined by the words before it.

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
knob_range("config.n_ctx", config.n_ctx, 8, 128)
knob_range("config.d_model", config.d_model, 8, 256)
knob_range("config.n_layers", config.n_layers, 1, 4)
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
knob_range("settings.steps", settings.steps, 10, 2000)
knob_range("settings.batch", settings.batch, 1, 64)
knob_range("settings.lr", settings.lr, 1e-5, 1.0)
with tempfile.TemporaryDirectory() as out:
    start = time.perf_counter()
    train(model, train_ids, val_ids, out, settings, progress=lambda line: None)
    seconds = time.perf_counter() - start
    log = [json.loads(line) for line in (Path(out) / "train_log.jsonl").read_text().splitlines()]
print(f"{settings.steps} steps in {seconds:.0f} s "
      f"({settings.steps * settings.batch * config.n_ctx / seconds:,.0f} tokens/s)")
print(f"training loss: first record {log[0]['loss']:.3f}, last {log[-1]['loss']:.3f}; "
      f"validation loss: {[round(r['val_loss'], 3) for r in log if 'val_loss' in r]}")
highest = max(log, key=lambda r: r["loss"])
claim(log[-1]["loss"] < log[0]["loss"] - 1.0, "the training loss falls by more than 1 nat",
      f"it went from {log[0]['loss']:.2f} to {log[-1]['loss']:.2f}: more steps or another learning rate")
claim(highest is log[0], "it never rose above its first record",
      f"it rose first, to {highest['loss']:.2f} at step {highest['step']}: a learning rate too large "
      f"for this model overshoots")
print(f"(ln V = {math.log(config.vocab_size):.2f} is the loss of a uniform guess)")

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
# What the training bought — a sampled continuation (temperature 0.8, top-k 40, seed 0). Greedy
# decoding of so small a model tends to repeat its single most likely token (often a line
# break); sampling shows better what it has learned: the shape of a play, names, common words.

# %%
prompt = tok.encode("KING.\n")
sampled = [s.id for s in generate(model, prompt, max_new_tokens=min(60, config.n_ctx - len(prompt)),
                                  temperature=0.8, top_k=40, seed=0)]
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
# Training can use the parallel form because the whole text is known in advance: one step
# computes every position of every window at once. Generation cannot (notebook 04): its next
# token has to be chosen before the following position can be computed, so it runs one position
# per forward. What one training step costs against one generation step, measured (the least of
# 5 interleaved runs each):

# %%
batch_ids = train_ids[:settings.batch * (config.n_ctx + 1)].reshape(settings.batch, -1).astype(np.int64)
step_cache = KVCache(config, capacity=config.n_ctx)
model(window[:config.n_ctx // 2], cache=step_cache)                 # a half-full cache


def one_generation_step():
    model(window[config.n_ctx // 2:config.n_ctx // 2 + 1], cache=step_cache)   # one new position
    step_cache.rollback(config.n_ctx // 2)


times = min_times({"train": lambda: loss_and_grads(model.params, config, batch_ids[:, :-1], batch_ids[:, 1:]),
                   "generate": one_generation_step})
positions = settings.batch * config.n_ctx
claim(times["train"] / positions < times["generate"], "per position, a training step is cheaper than "
      "a generation step", "not on this machine now")
print(f"one training step (forward + backward over {settings.batch} × {config.n_ctx} = {positions:,} "
      f"positions): {times['train'] * 1e3:.1f} ms; one cached generation step (1 position): "
      f"{times['generate'] * 1e3:.2f} ms → {times['train'] / times['generate']:.0f}× the time, for "
      f"{positions:,}× the positions ({times['train'] / positions * 1e6:.1f} µs per position against "
      f"{times['generate'] * 1e6:.0f} µs)")


# %% [markdown]
# Per position, training is far cheaper (checked above): the parallel form keeps the arithmetic
# units busy on large matrix products, where one generation step multiplies a single vector by
# every weight — and a training step also runs the backward pass, about twice the forward's work.
#
# ## Without the causal mask: the model peeks at the answer
#
# > 位置 i 的 token，不能依赖位置 > i 的 token。否则就会发生：训练时偷看答案、推理时行为不一致。……
# > 这不是防作弊，是定义计算图的因果结构。
# >
# > *The token at position i must not depend on the tokens after i. Otherwise: in training the
# > model peeks at the answer; at inference it behaves inconsistently. … This is not about
# > preventing cheating; it defines the causal structure of the computation graph.*
#
# (The article calls "to stop the model seeing the future" the surface view; the experiment below
# shows both of its consequences at once: the peek in the training loss, the inconsistency in
# the loss as generation sees it.)
#
# The mask is one line of the forward pass: `causal_mask(T, T)` in `minillm/train/grad_model.py`.
# The clearest test is a text with nothing to learn: random tokens, 16 possible, each drawn
# independently. No model can predict the next one better than a uniform guess, ln 16 — if it
# cannot see it. Train the toy's model shape twice on it with the same settings: once as the
# library does, once with the mask replaced by one that lets every position see every other.
# Two losses each: the training loss (as trained) and the validation loss as generation sees
# it — with the causal mask, since when generating the next token does not exist yet.

# %%
def see_everything(T, S):
    """A "mask" that hides nothing: every query sees every key, the later ones included."""
    return np.ones((T, S), dtype=bool)


PEEK_STEPS = 200
knob_range("PEEK_STEPS", PEEK_STEPS, 20, 500)
noise_config = ModelConfig(vocab_size=16, n_ctx=16, d_model=32, n_heads=2, n_layers=1)
noise_rng = np.random.default_rng(0)
noise_train, noise_val = noise_rng.integers(0, 16, 4000), noise_rng.integers(0, 16, 1000)
peek_settings = TrainSettings(steps=PEEK_STEPS, batch=16, lr=1e-2, min_lr=1e-3, warmup=10,
                              eval_every=PEEK_STEPS // 4, eval_windows=8, log_every=10,
                              checkpoint_every=PEEK_STEPS, seed=0)
real_mask, peek_runs = grad_model.causal_mask, {}
for name, mask in (("with the mask", real_mask), ("without the mask", see_everything)):
    net = GPT(noise_config, seed=0)
    grad_model.causal_mask = mask                                   # the one line, changed (or not)
    try:
        with tempfile.TemporaryDirectory() as out:
            train(net, noise_train, noise_val, out, peek_settings, progress=lambda line: None)
            run_log = [json.loads(line) for line in (Path(out) / "train_log.jsonl").read_text().splitlines()]
    finally:
        grad_model.causal_mask = real_mask                           # the library as it was
    peek_runs[name] = run_log
    print(f"{name:17s}: training loss {run_log[0]['loss']:.2f} → {run_log[-1]['loss']:.2f}; validation "
          f"loss, the generation way: {[round(r['val_loss'], 2) for r in run_log if 'val_loss' in r]}")
print(f"a uniform guess: ln 16 = {math.log(16):.2f}")
peeked = peek_runs["without the mask"]
claim(peeked[-1]["loss"] < 0.5 * math.log(16), "without the mask the training loss collapses far below "
      "ln 16 — on text that cannot be predicted", "not in these PEEK_STEPS")
claim(peeked[-1]["val_loss"] > math.log(16), "and the same weights predict worse than a uniform guess "
      "once the future is hidden, as it is when generating", "not in these PEEK_STEPS")

fig, ax = plt.subplots(figsize=(8, 3.6))
for k, (name, run_log) in enumerate(peek_runs.items()):
    ax.plot([r["step"] for r in run_log], [r["loss"] for r in run_log], color=f"C{k}", label=f"{name}: training")
    ax.plot([r["step"] for r in run_log if "val_loss" in r], [r["val_loss"] for r in run_log if "val_loss" in r],
            "o--", color=f"C{k}", label=f"{name}: validation (causal)")
ax.axhline(math.log(16), color="grey", ls=":", label="ln 16 (uniform guess)")
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy (nats per token)")
ax.set_title("Random tokens: only a model that peeks can beat ln 16 — in training")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# Without the mask the training task is "copy the next token, which you can see": the training
# loss collapses although the text is pure noise, and nothing that would help generation is
# learned. At generation time the next token is not there to copy, and the weights that leaned
# on it predict worse than a guess. The mask is what makes one parallel forward equal to
# predicting token by token (the previous section): without it the two are different tasks.

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
# derivative. On a model small enough to do it for a few entries of every tensor.
#
# Done in **float64**: the model computes in float32, whose ~7 digits leave no h at which the
# finite difference is accurate (shown below) — at best ~1e-4, too coarse to tell a small bug
# from rounding. The same parameters cast to float64 (16 digits) allow h = 1e-5, and the two
# then agree to a few parts in 10⁷ or better where the gradient is sizeable, and to a tiny
# absolute error where the gradient itself is tiny (both printed under the table; the query
# weights' gradients are tiny at initialisation — the table's "largest |grad|" column — hence
# their larger relative error).
# Per tensor, the table gives the largest relative error |backward − finite difference| /
# max(|backward|, |finite difference|) over the checked entries. Entries where both are below
# 1e-8 are left out and counted apart: those gradients are truly 0 (the key bias `bk`, for
# example — adding a constant to every key shifts each softmax row by a constant, which changes
# nothing) and their finite difference is rounding noise, so there is nothing to agree on.

# %%
tiny_config = ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
tiny = GPT(tiny_config, seed=0)
params64 = GPTParams.from_named({k: a.astype(np.float64) for k, a in tiny.params.named().items()},
                                tiny_config)                        # the same numbers, in float64
rng = np.random.default_rng(0)
ids = rng.integers(0, 16, (2, 9))                                   # [B, T + 1] random text
x_ids, y_ids = ids[:, :-1], ids[:, 1:]

def finite_difference(params, name, i, h):
    """(L(θ + h) − L(θ − h)) / 2h for entry i of parameter ``name`` (nudged in place, restored)."""
    flat = params.named()[name].reshape(-1)                         # a view into the parameter
    old = flat[i]
    flat[i] = old + h
    up = loss_and_grads(params, tiny_config, x_ids, y_ids)[0]
    flat[i] = old - h
    down = loss_and_grads(params, tiny_config, x_ids, y_ids)[0]
    flat[i] = old
    return (up - down) / (2 * h)

H, ZERO, PER_TENSOR = 1e-5, 1e-8, 3                                 # step, "both ~0" threshold, entries
_, grads = loss_and_grads(params64, tiny_config, x_ids, y_ids)
print(f"{'parameter':22s} {'checked':>7s} {'both ~0':>7s} {'largest |grad|':>14s} {'max rel. error':>14s}")
worst, checked, left_out, all_pairs = 0.0, 0, 0, []
for name, array in params64.named().items():
    picks = rng.choice(array.size, min(PER_TENSOR, array.size), replace=False)
    pairs = [(float(grads[name].reshape(-1)[i]), finite_difference(params64, name, i, H)) for i in picks]
    all_pairs += pairs
    errors = [abs(a - n) / max(abs(a), abs(n)) for a, n in pairs if max(abs(a), abs(n)) >= ZERO]
    worst, checked, left_out = max([worst, *errors]), checked + len(errors), left_out + len(pairs) - len(errors)
    error = f"{max(errors):14.1e}" if errors else f"{'— (all ~0)':>14s}"
    print(f"{name:22s} {len(pairs):7d} {len(pairs) - len(errors):7d} "
          f"{max(abs(a) for a, _ in pairs):14.1e} {error}")
assert worst < 1e-4, f"a gradient differs from its finite difference by {worst:.1e} relative (in float64, " \
    f"rounding reaches 1e-5 only for gradients near 1e-7): the backward pass of its layer is wrong"
print(f"✓ {checked} entries agree within {worst:.0e} relative (h = {H:g}, float64); {left_out} left out: "
      f"both gradients below {ZERO:g}")
sizeable = [abs(a - n) / abs(a) for a, n in all_pairs if abs(a) >= 1e-3]
tiny_grads = [abs(a - n) for a, n in all_pairs if ZERO <= abs(a) < 1e-4]
print(f"where |grad| ≥ 1e-3: largest relative error {max(sizeable):.1e}; where 1e-8 ≤ |grad| < 1e-4: "
      f"largest absolute error {max(tiny_grads, default=0.0):.1e}")

# %% [markdown]
# Why not float32? One entry, with finite differences of several steps h at both precisions,
# against the float64 backward pass:

# %%
name, i = "wpe", 42
exact = float(grads[name].reshape(-1)[i])
print(f"{name}[{i}]: backward pass {exact:+.8f}; relative error of the finite difference:")
for h in (1e-2, 1e-3, 1e-4, 1e-5):
    errors = [abs(finite_difference(params, name, i, h) - exact) / abs(exact) for params in (tiny.params, params64)]
    print(f"  h = {h:<6g}  float32 {errors[0]:.1e}   float64 {errors[1]:.1e}")

# %% [markdown]
# Two errors pull h in opposite directions. A large h bends: the loss is not a straight line over
# ±h, and that error grows as h² — float64 shows it too at h = 1e-2. A small h drowns in
# rounding: each float32 loss carries ~1e-7 of relative error, divided by 2h. Float32 has no good h
# in between; float64's 16 digits leave room for h = 1e-5, where both errors are tiny. That is why
# the check runs in float64, as the library's tests do on every layer (`tests/train/`).
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
knob_range("TINY_TOKENS", TINY_TOKENS, config.n_ctx + 1, len(train_ids))
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
