# %% [markdown]
# # 15 · Fine-tuning: teach a chat model something new
#
# SmolLM2-135M-Instruct answers questions because it was fine-tuned on conversations after its
# pretraining. Fine-tuning it again, on conversations of our own, teaches it something it cannot
# know: here, 25 facts about **Tarvessa**, an island invented for this project (its capital
# Ostmere, Mount Kelvaro, the drell, the Festival of Nine Lanterns, …). The training runs in NumPy,
# on a CPU, with **LoRA**: the 135 M weights stay frozen and two thin matrices A and B per
# projection learn a low-rank correction W + (α/r)·A B. The score is taken on **held-out
# questions**: the same facts asked in words the training never used, so a right answer means the
# model generalised, not only memorised.
#
# This notebook first does LoRA with a pencil (a 4 × 4 matrix, rank 1: the forward and the merge),
# then draws the loss mask (only the assistant's tokens teach), counts what the adapter's
# rank costs, checks that merging the adapter into the weights changes nothing, trains a few live
# steps, compares answers before and after, with the full run's measured score, and shows the
# memory-saving step (`recompute=True`).
#
# **Try this:** `CONVERSATION` (which training conversation's mask is drawn, 0 to 199), `RANK`
# (the adapter rank whose cost is counted and trained live, 1 to 64), `STEPS` (live training
# steps, 1 to 20) and `QUESTIONS` (held-out questions answered live, 1 to 31).

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import json
import time

import matplotlib.pyplot as plt
import numpy as np

from minillm import GPT, load_adapter, merged_params
from minillm.engine.gpt import to_engine
from minillm.train.grad_model import forward_with_cache
from minillm.train.lora.adapters import frozen_params, init_lora, lora_loss_and_grads
from minillm.train.sft import finetune, render
from nbhelpers import WEIGHTS, claim, knob_range, load_pretrained
import tarvessa

# %% [markdown]
# ## 0. LoRA with a pencil: a 4 × 4 matrix, rank 1
#
# A frozen weight W [4, 4] (here the identity, so x W = x), applied as y = x W. LoRA adds a
# correction of rank r = 1: a column A [4, 1] and a row B [1, 4], scaled by s = α / r:
#
#     y = x W + s · (x A) B          the forward: x A is one number, times the row B
#     W' = W + s · A B               the merge: A B is a 4 × 4 matrix of rank 1
#
# With x = [1, 2, 0, 1], A = [1, 0, 1, 0]ᵀ, B = [0, 1, 0, 2] and α = 2 (s = 2): x A = 1, so the
# correction is 2 · [0, 1, 0, 2] = [0, 2, 0, 4] and y = [1, 2, 0, 1] + [0, 2, 0, 4] = [1, 4, 0, 5].
# Merging gives the same y from one matrix, so a merged adapter costs nothing at inference.

# %%
W_toy = np.eye(4, dtype=np.float32)                                  # [4, 4] frozen
A_toy = np.array([[1], [0], [1], [0]], dtype=np.float32)             # [4, 1] trained
B_toy = np.array([[0, 1, 0, 2]], dtype=np.float32)                   # [1, 4] trained
x_toy = np.array([[1, 2, 0, 1]], dtype=np.float32)                   # [1, 4] one input row
alpha_toy, r_toy = 2.0, A_toy.shape[1]
s_toy = alpha_toy / r_toy
y_adapter = x_toy @ W_toy + s_toy * (x_toy @ A_toy) @ B_toy          # [1, 4] the forward
W_merged = W_toy + s_toy * A_toy @ B_toy                             # [4, 4] the merge
print("x A =", (x_toy @ A_toy).ravel(), "  y = x W + s (x A) B =", y_adapter.ravel())
print("W' = W + s A B =\n", W_merged)
print("x W' =", (x_toy @ W_merged).ravel(), f"  rank of A B: {np.linalg.matrix_rank(A_toy @ B_toy)}")
print(f"trained numbers: {A_toy.size + B_toy.size} (A and B) instead of {W_toy.size} (all of W); "
      f"at 576 × 576, rank 8: {8 * (576 + 576):,} instead of {576 * 576:,}")
assert np.array_equal(y_adapter, x_toy @ W_merged), "the forward and the merged matrix must agree"
B_start = np.zeros_like(B_toy)                                       # LoRA's start: B = 0
print("with B = 0 (how training starts):", (x_toy @ W_toy + s_toy * (x_toy @ A_toy) @ B_start).ravel(),
      "= x W: the model begins exactly as it was")

# %% [markdown]
# Why s = α / r: B starts at zero, so the correction starts at zero at every rank (above); as
# training moves B, x A B is a sum of r terms (one per column of A), so at a larger rank the same
# learning rate can move it further. Dividing by r is what lets **α be kept fixed while r
# changes**: the update's scale then stays the same (notebook 19 derives it). Two conventions are
# in use: PEFT's `LoraConfig` defaults to r = 8, `lora_alpha` = 8 (s = 1) and keeps α when you
# change r; minillm's `init_lora` defaults to α = 2 · rank, so s = 2 at every rank — α tied to r,
# which gives up that r-independence (pass `alpha=` to keep α fixed). Sections 3 and 4 count and
# merge the real adapter; the
# training of A and B from their gradients is notebook 19's.
#
# ## 1. The data: 200 conversations, and questions kept apart
#
# `data/tarvessa/` holds the training conversations (one JSON object per line, `{"messages":
# [...]}`, the format `python -m minillm finetune --data` reads) and the held-out questions, each
# with the key fact its answer must contain. Both are written by `scripts/make_finetune_data.py`
# from a fact table (CC0: written for the project). One fact, as the training asks it and as the
# held-out questions do:

# %%
convs, held = tarvessa.conversations(), tarvessa.heldout()
turns = sum(len(c["messages"]) // 2 for c in convs)
facts = sorted({q["fact"] for q in held})
print(f"{len(convs)} training conversations ({turns} questions), {len(facts)} facts, "
      f"{len(held)} held-out questions")
fact = held[9]                                         # one held-out question and its key fact
taught = [c["messages"][i]["content"] for c in convs for i in range(0, len(c["messages"]), 2)
          if tarvessa.is_right(c["messages"][i + 1]["content"], fact["key"])]
print(f"\nfact {fact['fact']!r}, key {fact['key']!r}: taught by {len(taught)} questions, "
      f"{len(set(taught))} different phrasings, e.g.")
for q in sorted(set(taught))[:3]:
    print("   train:", q)
print("   held out:", fact["question"])
asked = {tarvessa.normalise(q) for c in convs for q in (m["content"] for m in c["messages"][::2])}
assert not any(tarvessa.normalise(q["question"]) in asked for q in held), \
    "a held-out question is asked in training: regenerate data/tarvessa (scripts/make_finetune_data.py)"

# %% [markdown]
# The model, and the tokenizer it reads ChatML with. Without SmolLM2 on this machine the notebook
# still draws the mask (SmolLM2's tokenizer is shipped with the tests) and shows the rank and the
# merge on the small Llama-style model shipped in `weights/tiny-llama`; the answers before and
# after need SmolLM2 (`python -m minillm download smollm2`, about 100 MB).

# %%
start = time.perf_counter()
model, tok, name = load_pretrained(fallback="tiny-llama", fast=False)   # plain float32 arrays
HAVE_SMOLLM2 = name.startswith("SmolLM2")
chat_tok = tok if HAVE_SMOLLM2 else tarvessa.smollm2_tokenizer()
config, params = model.config, model.params

# %% [markdown]
# ## 2. Which tokens count: the loss mask
#
# A conversation is rendered in the model's chat format, then trained on like any text: at each
# position the model predicts the next token. But only the **assistant's** tokens are counted in the
# loss — its reply and the `<|im_end|>` that ends it (the model must learn to stop). The system
# message, the user's question and each `<|im_start|>assistant\n` header are context: the model
# reads them and is never taught to write them. `render` returns the ids and that mask:

# %%
CONVERSATION = 7
knob_range("CONVERSATION", CONVERSATION, 0, len(convs) - 1)
ids, counted = render(chat_tok, convs[CONVERSATION]["messages"])
pieces = [chat_tok.decode([int(i)]) for i in ids]
print(f"{len(ids)} tokens, {int(counted.sum())} counted by the loss "
      f"({counted.mean():.0%}); the counted text:")
print("   " + repr("".join(p for p, c in zip(pieces, counted) if c)))

per_row, width = 12, 1.0
rows = (len(pieces) + per_row - 1) // per_row
fig, ax = plt.subplots(figsize=(13, 0.45 * rows + 0.6))
for n, (piece, c) in enumerate(zip(pieces, counted)):
    r, col = divmod(n, per_row)
    ax.add_patch(plt.Rectangle((col * width, -r), width * 0.96, 0.85,
                               color="tab:orange" if c else "0.88"))
    ax.text(col * width + 0.05, -r + 0.42, repr(piece)[1:-1][:14], fontsize=7, va="center")
ax.set_xlim(0, per_row * width)
ax.set_ylim(-rows + 0.8, 1)
ax.axis("off")
ax.set_title(f"conversation {CONVERSATION}: orange tokens are counted by the loss "
             f"({int(counted.sum())} of {len(ids)})")
plt.show()
assert counted.sum() > 0, "every training conversation has an assistant reply the loss counts"

# %% [markdown]
# Target t is token t + 1, so position t is counted when the token it must predict is. The mean is
# over counted positions only — −Σ m log p / Σ m — so a long prompt does not dilute the reply's
# loss, and a padded batch teaches exactly what its rows would one by one. On the base model, the
# counted tokens are where it is most wrong (it has never heard of Tarvessa):

# %%
x, y, m = ids[None, :-1], ids[None, 1:], counted[None, 1:]              # [1, T] each
if HAVE_SMOLLM2:
    logits, _ = forward_with_cache(params, config, x)                    # [1, T, V]
    z = logits[0] - logits[0].max(-1, keepdims=True)
    nll = -(z - np.log(np.exp(z).sum(-1, keepdims=True)))[np.arange(len(y[0])), y[0]]   # [T]
    print(f"base model's mean loss: {nll[m[0]].mean():.2f} on the counted tokens, "
          f"{nll[~m[0]].mean():.2f} on the rest")
else:
    print("(the base model's losses need SmolLM2: skipped)")

# %% [markdown]
# ## 3. The adapter's rank: what LoRA trains
#
# Full fine-tuning updates every weight. LoRA freezes W [in, out] and trains A [in, r] and
# B [r, out]: r · (in + out) numbers instead of in · out. B starts at zero, so the adapted model
# starts as the base model exactly. Counted on this model's projections (q, k, v, o, gate, up and
# down of every layer) for a few ranks:

# %%
RANK = 2
knob_range("RANK", RANK, 1, 64)
named = params.named()
targets = {n: w.shape for n, w in named.items() if n.split(".")[-1] in
           ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down") and n.startswith("blocks.")}
full = sum(w.size for w in named.values())
adapted = sum(a * b for a, b in targets.values())
print(f"{name}: {full:,} parameters; the {len(targets)} adapted projections hold {adapted:,}")
for r in sorted({1, 2, 8, 64, RANK}):
    lora_size = sum(r * (a + b) for a, b in targets.values())
    print(f"   rank {r:2d}: {lora_size:>10,} trained parameters = {lora_size / full:6.2%} of the "
          f"model, {4 * lora_size / 2**20:6.2f} MB in float32")
lora = init_lora(params, RANK, np.random.default_rng(0))
assert sum(a.size for a in lora.named().values()) == sum(RANK * (a + b) for a, b in targets.values()), \
    "init_lora should make one A [in, r] and one B [r, out] per adapted projection"

# %% [markdown]
# The rank is the most the correction A B can have: every update to a 576-wide projection lives in
# an r-dimensional subspace. The adapter trained for this notebook (section 6's full run) has rank
# 2; its correction to layer 0's query projection:

# %%
ADAPTER = WEIGHTS / "tarvessa-lora"
results = json.loads((ADAPTER / "results.json").read_text(encoding="utf-8"))
if HAVE_SMOLLM2:
    trained = load_adapter(ADAPTER, config)
    A, B = trained.adapters["blocks.0.attn.wq"]
    delta = trained.scale * (A @ B)                                   # [in, out]
    s = np.linalg.svd(delta, compute_uv=False)
    print(f"ΔW = (α/r) A B: shape {delta.shape}, rank {np.linalg.matrix_rank(delta)} "
          f"(adapter rank {trained.rank}, α = {trained.alpha:g}, s = {trained.scale:g}); singular values {np.round(s[:4], 4)}; "
          f"|ΔW| / |W| = {np.linalg.norm(delta) / np.linalg.norm(named['blocks.0.attn.wq']):.4f}")
    assert np.linalg.matrix_rank(delta) <= trained.rank, "A B cannot have a rank above r"
else:
    trained = init_lora(params, RANK, np.random.default_rng(1))           # a stand-in, B ≠ 0 below
    for a, b in trained.adapters.values():
        b[...] = np.random.default_rng(2).normal(0, 0.05, b.shape)
    print(f"(SmolLM2 absent: a random rank-{RANK} adapter on {name} stands in)")

# %% [markdown]
# ## 4. Merging: the same model, one matrix per projection again
#
# Training keeps W and the adapter apart: y = x W + (α/r)(x A) B, W never copied. For use, the
# adapter can be **merged**: W' = W + (α/r) A B, and the model is an ordinary model again (no extra
# cost per token; `minillm export` writes it as GGUF). The two must give the same logits:

# %%
probe = render(chat_tok, convs[0]["messages"])[0][None, :48] if HAVE_SMOLLM2 else \
    np.arange(24)[None] % config.vocab_size                          # [1, T]
apart, _ = forward_with_cache(frozen_params(params, trained), config, probe)     # x W + s (x A) B
merged = GPT(config, merged_params(params, trained))                # W' = W + s A B
together = merged(probe)                                            # [1, T, V]
base = GPT(config, params)(probe)
gap, moved = np.abs(apart - together).max(), np.abs(base - together).max()
print(f"max |logit difference|: adapter apart vs merged {gap:.2e}; base vs adapted {moved:.2f}")
assert gap <= 1e-4 * np.abs(together).max(), \
    f"merged and unmerged logits differ by {gap:.2e}: merging should not change the model"
if HAVE_SMOLLM2:                       # where the large move is: on the tokens it was taught
    probe_mask = render(chat_tok, convs[0]["messages"])[1][1:49]      # [T] position t predicts t + 1
    per_pos = np.abs(base - together)[0].max(-1)                        # [T] largest move per position
    print(f"{len(targets)} adapted projections over {config.n_layers} layers; "
          f"largest logit move per position: median {np.median(per_pos):.2f}; mean "
          f"{per_pos[probe_mask].mean():.2f} where the next token is the assistant's "
          f"({int(probe_mask.sum())} positions), {per_pos[~probe_mask].mean():.2f} elsewhere")
    t_max = int(per_pos.argmax())
    v_max = int(np.abs(base - together)[0, t_max].argmax())
    word = lambda v: repr(chat_tok.decode([int(v)]))
    print(f"the largest, {per_pos[t_max]:.2f}, where the next token is {word(probe[0, t_max + 1])}: "
          f"the logit of {word(v_max)} goes {base[0, t_max, v_max]:.2f} -> {together[0, t_max, v_max]:.2f}; "
          f"top token there: base {word(base[0, t_max].argmax())}, adapted "
          f"{word(together[0, t_max].argmax())}")

# %% [markdown]
# The adapter changes a matrix by under half a percent (|ΔW| / |W| above), yet a logit moves by
# tens: the changes add up over every adapted projection of every layer, and the largest is taken
# over 48 positions × the whole vocabulary, so it finds an extreme. The moves are not spread
# evenly: they are larger where the next token is the assistant's answer about Tarvessa (the
# counted positions) than elsewhere, and the largest of all is inside the word "Tarvessa": a
# token the base model rated high there, though not its top guess, pushed far down.
#
# ## 5. A few training steps, live
#
# `finetune` renders the conversations, batches them (padded, the mask honoured), and takes AdamW
# steps on the adapters only. Here `STEPS` steps of 2 conversations at rank `RANK`. Each loss is
# taken on that step's own pair of conversations, before its update, so one step's figure is noisy
# (a harder pair can score worse after a step that helped): with the default 3 steps the loss falls
# at step 2 and rises again at step 3, still below where it began. The trend is the full run's
# curve in section 6:

# %%
STEPS = 3
knob_range("STEPS", STEPS, 1, 20)
if HAVE_SMOLLM2:
    t = time.perf_counter()
    live = finetune(model, tok, [c["messages"] for c in convs], rank=RANK, steps=STEPS, lr=2e-3,
                    batch_size=2, seed=0)
    seconds = time.perf_counter() - t
    print(f"{STEPS} steps in {seconds:.1f} s ({seconds / STEPS:.1f} s a step); loss per step: "
          f"{np.round(live.losses, 3)}")
    claim(live.losses[-1] < live.losses[0] or STEPS == 1,
          "the loss on the assistant's tokens falls from the first step to the last")
else:
    print("(live training needs SmolLM2: skipped)")

# %% [markdown]
# ## 6. Before and after, on questions it never saw
#
# The full run: `scripts/finetune_demo.py` trained a rank-2 adapter on all 200 conversations in
# NumPy on a 2-core machine and scored the held-out questions before and after (greedy answers, at
# most 24 tokens; right when the answer contains the key fact as whole words). Its record:

# %%
r = results
print(f"command: {r['command']}")
print(f"answers: greedy, at most {tarvessa.MAX_ANSWER_TOKENS} tokens, after SmolLM2's default system message")
print(f"before: {r['before']['right']}/{r['before']['of']} held-out questions right; "
      f"after: {r['after']['right']}/{r['after']['of']}; "
      f"after, on one training phrasing per fact: {r['after_training_questions']['right']}/"
      f"{r['after_training_questions']['of']}")
print(f"training: {r['training']['steps']} steps, epochs: {r['training']['epochs']}, "
      f"{r['training']['seconds'] / 60:.1f} min; peak memory {r['peak_rss_mb']:.0f} MB "
      f"(base weights {r['base_weights_mb']:.0f} MB); adapter {r['adapter_parameters']:,} parameters")
losses = np.array(r["training"]["losses"])
plt.figure(figsize=(6, 2.5))
plt.plot(losses, lw=0.8)
plt.xlabel("step")
plt.ylabel("loss (assistant tokens)")
plt.title("the full run")
plt.show()
assert r["after"]["right"] > r["before"]["right"], \
    f"the record says {r['after']['right']} right after, {r['before']['right']} before"

# %% [markdown]
# Live: the base model and the model with the shipped adapter merged answer `QUESTIONS` held-out
# questions, evenly spaced through the list (greedy, so the answers repeat the record's):

# %%
QUESTIONS = 5
knob_range("QUESTIONS", QUESTIONS, 1, len(held))
if HAVE_SMOLLM2:
    chosen = np.linspace(0, len(held) - 1, QUESTIONS).round().astype(int)   # evenly spaced
    asked = [held[i] for i in chosen]
    t = time.perf_counter()
    base_fast = to_engine(GPT(config, params))
    tuned_fast = to_engine(GPT(config, merged_params(params, load_adapter(ADAPTER, config))))
    before = tarvessa.answer_all(base_fast, tok, [q["question"] for q in asked])
    after = tarvessa.answer_all(tuned_fast, tok, [q["question"] for q in asked])
    for q, b, a in zip(asked, before, after):
        print(f"Q: {q['question']}   (key: {q['key']})\n   before {'✓' if tarvessa.is_right(b, q['key']) else '✗'} "
              f"{b[:90]!r}\n   after  {'✓' if tarvessa.is_right(a, q['key']) else '✗'} {a[:90]!r}")
    print(f"live: {tarvessa.score(before, asked)[0]}/{QUESTIONS} before, "
          f"{tarvessa.score(after, asked)[0]}/{QUESTIONS} after ({time.perf_counter() - t:.0f} s)")
    claim(after == [r["after"]["answers"][i] for i in chosen],
          "the live answers after fine-tuning are the recorded ones", "float32 rounding can flip a near-tie")
else:
    print("(the answers need SmolLM2: the record above is the full run's)")

# %% [markdown]
# The wrong answers after are instructive too. "Tarvessa is Tarvessant." has the shape of a taught
# answer (a sentence about Tarvessa, then stop) with the fact missing: "governs" was never how the
# training asked for the capital, and a rank-2 adapter learned the style more surely than this
# link. "famous for its glimmer glimmer …" borrows a taught word (the glimmer fox is the national
# animal) for the wrong question, then loops: greedy decoding always takes the top token, and once
# "glimmer" makes "glimmer" likelier still, nothing breaks the loop until the token limit.

# %% [markdown]
# ## 7. The same step in less memory: `recompute=True`
#
# The plain step keeps every block's cache for the backward: the norms' inputs, q, k, v, the
# attention weights P [B, H, T, T], the feed-forward's activations. `recompute=True` keeps only
# each block's input [B, T, C]; going backward from the top block, it runs that one block's
# forward again from its input, then its backward, and it takes the head's loss a chunk of rows at
# a time. A block's forward depends only on its input and its weights, so the recomputed cache is
# the one the plain step kept and the gradients are the same, up to float32 rounding (the head's
# sums are added in another order). The price: one more forward of the blocks per step. On the
# command line it is `python -m minillm finetune --model smollm2 --data chat.jsonl --recompute
# --out DIR`. Here one batch on the small model of `weights/tiny-llama`, both ways, and what each
# keeps per block, counted from the arrays' shapes:

# %%
tiny = GPT.from_pretrained(WEIGHTS / "tiny-llama")                    # plain float32 arrays
tconfig, rng = tiny.config, np.random.default_rng(0)
tokens = rng.integers(0, tconfig.vocab_size, (4, 65))                  # [B, T + 1]
xb, yb = tokens[:, :-1], tokens[:, 1:]                                 # [B, T] each
adapter = init_lora(tiny.params, 2, np.random.default_rng(0))
for _, lora_B in adapter.adapters.values():                            # B ≠ 0: A has gradients too
    lora_B[...] = rng.normal(0, 0.05, lora_B.shape)
plain_loss, plain_grads = lora_loss_and_grads(tiny.params, tconfig, adapter, xb, yb)
saving_loss, saving_grads = lora_loss_and_grads(tiny.params, tconfig, adapter, xb, yb, recompute=True)
worst = max(float(np.abs(saving_grads[k] - g).max() / np.abs(g).max()) for k, g in plain_grads.items())
print(f"loss: plain {plain_loss:.6f}, recompute {saving_loss:.6f}; the {len(plain_grads)} gradients "
      f"differ by at most {worst:.1e} of their largest entry")
assert abs(saving_loss - plain_loss) <= 1e-5 * plain_loss and worst <= 1e-4, \
    f"the memory-saving step should give the plain step's numbers (gradients differ by {worst:.1e})"


def arrays_in(obj) -> list:
    """Every array in a cache (nested tuples and lists)."""
    if isinstance(obj, np.ndarray):
        return [obj]
    return [a for o in obj for a in arrays_in(o)] if isinstance(obj, (tuple, list)) else []


_, (_, caches, *_) = forward_with_cache(frozen_params(tiny.params, adapter), tconfig, xb)
kept = []                                                              # block 0's cache, each array once
for a in arrays_in(caches[0]):
    if not any(np.shares_memory(a, k) for k in kept):
        kept.append(a)
cache_bytes = sum(4 * int(np.prod(a.shape)) for a in kept)             # float32: 4 bytes a number
B_, T_, C_ = xb.shape + (tconfig.d_model,)
input_bytes = 4 * B_ * T_ * C_                                         # [B, T, C]
largest = max(kept, key=lambda a: a.size)
L = tconfig.n_layers
print(f"per block, the plain step keeps {len(kept)} arrays, {cache_bytes / 1024:.0f} KB (the largest, "
      f"{list(largest.shape)}: the attention weights [B, H, T, T]); recompute keeps the input "
      f"[{B_}, {T_}, {C_}], {input_bytes / 1024:.0f} KB: {cache_bytes / input_bytes:.0f}x less")
print(f"all {L} blocks: plain {L * cache_bytes / 1024:.0f} KB; recompute {L} inputs + one block's "
      f"cache at a time, {(L * input_bytes + cache_bytes) / 1024:.0f} KB")
assert largest.shape == (B_, tconfig.n_heads, T_, T_), \
    f"the attention weights should be the largest array of a block's cache, not {largest.shape}"

# %% [markdown]
# The saving grows with the number of blocks (this model has two, SmolLM2 many more) and, through
# the attention weights, with the square of the length; the measured peak memory of a SmolLM2
# step both ways is in `benchmarks/README.md`.

# %% [markdown]
# ## Exercises
#
# 1. **The masked loss.** Write `masked_loss(logits, targets, mask)`: the mean of
#    −log softmax(logits[t])[targets[t]] over the positions where mask[t] = 1 only.

# %%
from exercises import check


def my_masked_loss(logits, targets, mask):
    raise NotImplementedError  # your code here


check("masked_loss", my_masked_loss)

# %% [markdown]
# 2. **Merging an adapter.** Write `merge_lora(W, A, B, alpha)`: W' = W + (alpha / r) · A B, where r is
#    A's second dimension.

# %%
def my_merge_lora(W, A, B, alpha):
    raise NotImplementedError  # your code here


check("merge_lora", my_merge_lora)
