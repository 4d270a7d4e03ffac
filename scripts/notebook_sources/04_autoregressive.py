# %% [markdown]
# # 04 · The autoregressive loop
#
# > 模型生成时，首先输出‘海水’，将其加入当前上下文；接着基于‘海水’预测下一个 Token‘会’……
# > 每一步都是一次前向传播（forward pass），模型仅能访问已生成的部分，无法预知后续内容。
# >
# > *The model first outputs 海水 and appends it to the context; then it predicts the next token
# > 会 from 海水 … Every step is one forward pass; the model sees only what has been generated so
# > far and cannot know what comes later.*
#
# > 生成必然是：上下文 → forward → 采样 → 拼到上下文 → 再 forward
# >
# > *Generation is necessarily: context → forward → sample → append to the context → forward again.*
#
# This notebook first runs the loop on a toy — a table of which word follows which, counted in
# four sentences — then on a real model, one forward pass per token, printing every step; checks
# it against `minillm.decoding.generate`; shows the *training-style* forward that predicts every
# position of "I love coding" at once — and why generation cannot do the same; and ends by
# stepping the articles' sentence through the model, token by token.
#
# **Try this:** change the toy's `TOY_TEXT` (2 to 200 words) and `TOY_START` (a word of it),
# `PROMPT` (1 to 100 characters) and `N_NEW` (1 to 16 tokens), the training text `TRAIN_TEXT`
# ("I love coding"; 1 to 80 characters, 2 tokens or more), or the word `NEW_WORD` (1 to 20
# characters) put into a sentence to see which rows move, and re-run. A value outside its range
# is refused with a message before any work starts.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import matplotlib.pyplot as plt
import numpy as np

from minillm.functional import cross_entropy, softmax
from minillm import generate, generate_simple
from minillm.sampling import Sampler
from minillm.tokenizer.display import render_token
from nbhelpers import CountingModel, chat_prompt, claim, knob, load_deepseek_v4, load_pretrained

# %% [markdown]
# ## A toy first: a table of which word follows which
#
# The simplest language model is a table. Count, in a small text, how often each word follows
# each other word; divide each row by its total, and row `a` is a probability distribution over
# the next word after `a` (a *bigram* model). Generating with it is already the articles' loop:
# look at the context, get a distribution, choose, append, repeat — except that the table looks
# only at the *last* word of the context.

# %%
TOY_TEXT = ("the sea is blue . the sky is blue . the sea absorbs red light . "
            "the sky scatters blue light .")
TOY_START = "the"
words = TOY_TEXT.split()
knob("TOY_TEXT", TOY_TEXT, lambda t: 2 <= len(t.split()) <= 200, "a str of 2 to 200 words")
knob("TOY_START", TOY_START, lambda w: w in words, f"one of the words of TOY_TEXT: {sorted(set(words))}")
vocab = sorted(set(words))
index = {w: i for i, w in enumerate(vocab)}
counts = np.zeros((len(vocab), len(vocab)))                           # [V, V] row = word, column = next
for a, b in zip(words, words[1:] + words[:1]):                        # read as a loop: every word has a next
    counts[index[a], index[b]] += 1
table = counts / counts.sum(axis=1, keepdims=True)                    # [V, V] each row sums to 1

context = [TOY_START]
for step in range(8):
    row = table[index[context[-1]]]                                   # 1-2. "forward": the last word's row [V]
    top = np.argsort(-row, kind="stable")[:3]                         # 3. its probabilities, best first
    choice = vocab[int(np.argmax(row))]                               # 4. choose (greedy)
    print(f"step {step}: last word {context[-1]!r:10} → "
          f"{[(vocab[i], round(float(row[i]), 2)) for i in top if row[i] > 0]} → append {choice!r}")
    context.append(choice)                                            # 5. append
print(" ".join(context))

fig, ax = plt.subplots(figsize=(5.5, 4.5))
fig.colorbar(ax.imshow(table, cmap="Blues", vmin=0, vmax=1), ax=ax, label="P(next | word)")
ax.set_xticks(range(len(vocab)), vocab, rotation=90)
ax.set_yticks(range(len(vocab)), vocab)
ax.set_xlabel("next word")
ax.set_ylabel("word")
ax.set_title("the bigram table: one row per word")
plt.show()
if {"sea", "sky", "is"} <= set(vocab):                                # the default TOY_TEXT's words
    nexts = {w: [vocab[i] for i in np.flatnonzero(table[index[w]])] for w in ("sea", "sky", "is")}
    print(f"after 'sea': {nexts['sea']}; after 'sky': {nexts['sky']}; after 'the sea is' and "
          f"'the sky is' alike (the row of 'is'): {nexts['is']}")

# %% [markdown]
# Greedy choice from a table soon repeats itself (the printed text above cycles once a word
# recurs), and the table sees one word: right after "sea" or "sky" it still knows which (their
# rows differ), but one word later it has forgotten — after "the sea is" and "the sky is" it
# reads the same row, "is" (printed below). A network replaces the table by a function of the *whole* context — the forward pass —
# and the loop around it stays the same.
#
# ## The same loop on a real model

# %%
model, tok, model_name = load_pretrained()

# %% [markdown]
# ## The loop, step by step
#
# Each step does the same five things (the numbered comments in `minillm/decoding/generate.py`):
#
# 1. **forward**: run the model on the *whole* context → logits `[T, V]`, one row per position;
# 2. **last position**: keep only the last row — the only one about a token that does not exist yet;
# 3. **probabilities**: softmax (after the sampler's temperature / top-k / top-p);
# 4. **choose** a token (here greedy: the most probable one);
# 5. **append** it to the context, and go back to 1.
#
# No KV cache here: as the explainer articles say, every step recomputes the full context from scratch
# (每一步都是对"当前完整上下文"的一次全量重算). Notebook 05 removes that waste.

# %%
PROMPT = "The sea looks blue because"
N_NEW = 8
knob("PROMPT", PROMPT, lambda t: isinstance(t, str) and 1 <= len(t) <= 100, "a str of 1 to 100 characters")
knob("N_NEW", N_NEW, lambda n: isinstance(n, int) and 1 <= n <= 16, "a whole number from 1 to 16")
knob("PROMPT and N_NEW", (PROMPT, N_NEW), len(tok.encode(PROMPT)) + N_NEW <= model.config.n_ctx,
     f"prompt tokens + N_NEW at most the model's context, {model.config.n_ctx}")
greedy = Sampler(temperature=0)
counter = CountingModel(model)

context = tok.encode(PROMPT)
chosen_probs = []
for step in range(N_NEW):
    logits = counter(np.array(context))                    # 1. forward: [T] -> [T, V]
    last = logits[-1]                                      # 2. last position: [V]
    probs = softmax(last)                                  # 3. probabilities: [V]
    token = int(greedy.sample(last, np.random.default_rng(0)))   # 4. choose (greedy: the argmax)
    top3 = np.argsort(-probs)[:3]
    print(f"step {step}: context {len(context):2d} tokens → logits {logits.shape} → last row → "
          f"top-3 {[(render_token(tok.token_bytes(int(i))), round(float(probs[i]), 3)) for i in top3]} → "
          f"append {render_token(tok.token_bytes(int(token)))!r}")
    chosen_probs.append(float(probs[token]))
    context.append(token)                                  # 5. append
print(f"\n{counter.calls} forward passes for {N_NEW} tokens; they computed {counter.positions} "
      f"token positions in all")
print(repr(tok.decode(context)))

# %% [markdown]
# The library holds the same loop twice. `minillm.generate_simple` is exactly the five steps above
# in a dozen lines (read it in `minillm/decoding/generate.py`); `minillm.decoding.generate` adds a KV cache (each
# step feeds only the newest token), stop strings and streaming text. Same model, same greedy
# rule → the same tokens:

# %%
prompt_ids = tok.encode(PROMPT)
simple = list(generate_simple(model, prompt_ids, N_NEW, temperature=0))
generated = [s.id for s in generate(model, prompt_ids, max_new_tokens=N_NEW, temperature=0)]
print("hand-written loop:", context[len(prompt_ids):])
print("generate_simple  :", simple)
print("minillm.decoding.generate :", generated)
assert simple == generated == context[len(prompt_ids):], "the three loops should agree"
print("identical: True")

# %% [markdown]
# ## The training-style forward: every position at once
#
# > 假设训练数据是："I love coding"。模型在一次 forward 中：同时计算 "I" → 预测 "love"；
# > "I love" → 预测 "coding"；"I love coding" → 预测 <EOS>。它不是一步一步算的，是一次性算完的。
# >
# > *Given the training text "I love coding", in ONE forward pass the model computes "I" → predict
# > "love", "I love" → predict "coding", "I love coding" → predict <EOS> — all at once.*
#
# One call on the whole sequence returns one row of logits per position; row t is the
# prediction for token t + 1. The training loss is the mean of −log p(actual next token) over the
# rows — `model.loss` computes exactly that, in one forward.

# %%
eos = tok.special_tokens.get("<|endoftext|>", tok.eos_id)
TRAIN_TEXT = "I love coding"
knob("TRAIN_TEXT", TRAIN_TEXT, lambda t: 1 <= len(t) <= 80 and len(tok.encode(t)) + (eos is not None) >= 2,
     "a str of 1 to 80 characters, at least 2 tokens counting the end-of-text token (when the model has one)")
ids = tok.encode(TRAIN_TEXT) + ([eos] if eos is not None else [])
names = [render_token(tok.token_bytes(int(i))) for i in ids]
counter.reset()
logits = counter(np.array(ids[:-1]))                                 # [T-1, V] in one call
probs = softmax(logits)
for t in range(len(ids) - 1):
    guess = int(np.argmax(logits[t]))
    print(f"row {t}: sees {''.join(names[:t + 1])!r:18} → p(next = {names[t + 1]!r}) = "
          f"{probs[t, ids[t + 1]]:.4f}; the model's top guess: {render_token(tok.token_bytes(int(guess)))!r}")
per_position = -np.log(probs[np.arange(len(ids) - 1), ids[1:]])
print(f"\n{counter.calls} forward pass; per-position losses {np.round(per_position, 3)}")
print(f"their mean {per_position.mean():.6f}   model.loss {model.loss(np.array(ids)):.6f}   "
      f"cross_entropy {cross_entropy(logits, np.array(ids[1:])):.6f}")
assert counter.calls == 1, f"one forward pass should give every row; counted {counter.calls}"
assert abs(per_position.mean() - model.loss(np.array(ids))) < 1e-4, \
    f"the mean of the per-position losses ({per_position.mean():.6f}) should be model.loss "\
    f"({model.loss(np.array(ids)):.6f}): rows 0..T-2 score tokens 1..T-1 — check the shift by one"

# %% [markdown]
# (The probabilities are low — a bare "I love coding" with nothing before it is an unusual text
# for this model — but the point is the shape of the computation: three predictions, one call.)
#
# Is row t really the same prediction the model makes when it sees only the first t + 1 tokens?
# Run each prefix alone and compare: the causal mask (notebook 03) guarantees it, up to float32
# rounding.

# %%
for t in range(len(ids) - 1):
    alone = model(np.array(ids[:t + 1]))[-1]                          # [V]: the prefix by itself
    print(f"prefix of {t + 1} token(s): largest |difference| from row {t} = "
          f"{np.abs(alone - logits[t]).max():.2e}")
    assert np.abs(alone - logits[t]).max() < 1e-3, \
        f"row {t} of the full pass should be the prediction after the prefix alone (float32, ±1e-3); "\
        f"differs by {np.abs(alone - logits[t]).max():.2g}: the causal mask is not doing its job"

# %% [markdown]
# ## Why generation cannot be parallel
#
# > 推理阶段：下一个 token 不存在，必须先生成它，才能成为下一步的上下文。……你不能用一个还不存在的信息。
# >
# > *At inference the next token does not exist yet: it must be generated before it can be part of
# > the next step's context … you cannot use information that does not exist yet.*
#
# The parallel forward needs the whole sequence as *input*. Row t's prediction does not depend on
# later tokens (changing one leaves rows ≤ t unchanged), but every later row *does* depend on the
# token at t + 1 — the very token generation is trying to choose. Change one token in the middle
# and watch which rows move:

# %%
text_ids = tok.encode("The sea looks blue because water absorbs red light")
original = model(np.array(text_ids))                                  # [T, V]
NEW_WORD = " green"                                                   # replaces the token 3 from the end
knob("NEW_WORD", NEW_WORD, lambda w: isinstance(w, str) and 1 <= len(w) <= 20, "a str of 1 to 20 characters")
changed_ids = text_ids[:-3] + tok.encode(NEW_WORD)[:1] + text_ids[-2:]
changed = model(np.array(changed_ids))
k = len(text_ids) - 3
diff = np.abs(changed - original).max(axis=-1)                        # [T] per row
print(f"token {k} changed from {render_token(tok.token_bytes(text_ids[k]))!r} to {render_token(tok.token_bytes(changed_ids[k]))!r}")
for t, d in enumerate(diff):
    print(f"row {t:2d}: max |Δ logit| = {d:.3g}" + ("   ← rows before the change: exactly 0" if t == k - 1 else ""))
assert (diff[:k] == 0).all(), "rows before the change must not move: row t reads tokens ≤ t only"
claim((diff[k:] > 0).all(), "every row from the change on moves",
      "NEW_WORD's first token is the token it replaces" if text_ids[k] == changed_ids[k] else "")

fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 3.8))
a1.bar(range(N_NEW), chosen_probs)
a1.set_xlabel("generation step")
a1.set_ylabel("probability of the chosen token")
a1.set_title(f"greedy loop: one forward per token ({N_NEW} forwards)")
a2.bar(range(len(diff)), diff, color=["C0" if t < k else "C3" for t in range(len(diff))])
a2.set_xlabel("row (position) of the parallel forward")
a2.set_ylabel("max |Δ logit|")
a2.set_title(f"changing token {k}: only rows ≥ {k} change")
plt.tight_layout()
plt.show()

# %% [markdown]
# **Summary.** Training knows the whole text, so one forward scores every position (the rows are
# independent of their futures thanks to the mask). Generation knows only the past: each new
# token needs a forward pass whose last row chooses it, and only then can the next pass start.
#
# > 它解释了为何 AI 回答‘大海为何是蓝色’需要 19 步计算。
# > *That is why answering "why is the sea blue" takes 19 steps of computation.*
#
# 19 is the sentence's length in DeepSeek-V4's tokens (notebook 01). The number of sequential
# forward passes is the number of tokens the *text* takes under the generating model's tokenizer
# (one pass per token written, not one per entry of its vocabulary):

# %%
SENTENCE = "海水会吸收较多红光，蓝光更容易被散射回来，所以大海常呈蓝色。"
deepseek, deepseek_name = load_deepseek_v4()
print(f"{model_name} would need {len(tok.encode(SENTENCE))} sequential forward passes to write "
      f"the articles' sentence; {deepseek_name}'s tokenizer: {len(deepseek.encode(SENTENCE))}")

# %% [markdown]
# ## The articles' sentence, step by step
#
# The articles describe 海水 → 会 → 吸收 → … as choices the model makes. Put the question before
# it (in the model's chat format) and the sentence after it as the answer, and one training-style
# forward gives, at every step, what the model would have chosen there: its top candidates, and
# the probability and rank of the token the articles' answer actually has. SmolLM2 cuts Chinese
# into byte pieces (`<e6 b5>` is part of a character), so its steps are not the articles' 19
# words. Without SmolLM2 the small Shakespeare model gets the English translation instead — it
# knows no Chinese at all.

# %%
QUESTION = "为什么大海是蓝色的？"
if model_name == "SmolLM2-135M-Instruct":
    question, answer = QUESTION, SENTENCE
else:
    question, answer = ("Why is the sea blue?", "Seawater absorbs more red light; blue light is more "
                        "easily scattered back, so the sea often looks blue.")
prefix = chat_prompt(tok, question)                                    # the question, in chat format
answer_ids = tok.encode(answer)
all_ids = prefix + answer_ids
rows = softmax(model(np.array(all_ids))[len(prefix) - 1:-1])           # [A, V]: row k predicts answer token k
probs_actual = rows[np.arange(len(answer_ids)), answer_ids]           # [A]
ranks = (rows > probs_actual[:, None]).sum(axis=1) + 1                 # [A] 1 = the model's first choice
for k, (i, p_k, r) in enumerate(zip(answer_ids, probs_actual, ranks)):
    top = np.argsort(-rows[k])[:3]
    print(f"step {k:2d}: the answer has {render_token(tok.token_bytes(i))!r:12} p = {p_k:.3f}, rank {r:6,}"
          f"   the model's top 3: {[(render_token(tok.token_bytes(int(j))), round(float(rows[k, j]), 3)) for j in top]}")
first = int((ranks == 1).sum())
print(f"\n{model_name}: the answer's token is the model's first choice at {first} of {len(answer_ids)} "
      f"steps, in its top 10 at {int((ranks <= 10).sum())}; median rank {int(np.median(ranks))}")
inside = np.array([0x80 <= tok.token_bytes(i)[0] < 0xC0 for i in answer_ids])   # [A] starts mid-character
if inside.any() and (~inside).any():
    print(f"tokens that continue a character (first byte 80-bf): {inside.sum()}, median p "
          f"{np.median(probs_actual[inside]):.3f}; the others: median p {np.median(probs_actual[~inside]):.3f}")
    claim(np.median(probs_actual[inside]) > 0.5 > np.median(probs_actual[~inside]),
          "inside a character the next piece is nearly forced; the choices are where a character starts",
          "the medians say otherwise here")

fig, ax = plt.subplots(figsize=(12, 3.5))
ax.bar(range(len(answer_ids)), probs_actual, color=["C2" if r == 1 else "C0" for r in ranks])
ax.set_xlabel("step (the tokens are printed above; the plot's font has no Chinese characters)")
ax.set_ylabel("p(the answer's token)")
ax.set_title(f"{model_name} stepping through the answer (green: it was the model's first choice)")
plt.tight_layout()
plt.show()

# %% [markdown]
# Each bar is one step of the loop with the context fixed to the articles' answer so far
# ("teacher forcing", as training does). Where a bar is not green, greedy decoding would have
# left the articles' sentence at that step and written something else — from then on, a
# different text. The counts printed above say how often that happens for this model. With
# SmolLM2, note where the model is sure (the medians above): inside a character, once its first
# byte piece is given, the rest is nearly forced; the real choices are where a character starts.

# %% [markdown]
# ## Exercises
#
# Write the function, run the cell: `check` prints the first case it gets wrong, or how many it
# passed. Solutions: `solutions/04_autoregressive.py`.
#
# **1. The greedy loop.** `next_logits(ids)` is a model: it takes the list of ids so far and
# returns the logits [V] for the next token. Return the `n` new ids chosen greedily.

# %%
from exercises import check

def greedy_loop(next_logits, prompt, n):
    raise NotImplementedError    # your code here

check("greedy_loop", greedy_loop)

# %% [markdown]
# **2. Training pairs.** For a sequence `ids`, return `(inputs, targets)`: the model reads
# `inputs` in one forward, and row t of its logits is scored against `targets[t]`.

# %%
def shift_targets(ids):
    raise NotImplementedError    # your code here

check("shift_targets", shift_targets)
