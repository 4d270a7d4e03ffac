# %% [markdown]
# # 08 · The context window, forgetting, and cost
#
# > 以 32K 上下文窗口为例，实际可用空间需扣除系统指令、历史对话、工具定义、RAG 检索结果等多类输入。
# > 某次请求若已占用 24K Token，则剩余仅 8K 可用于新输入与输出。
# >
# > *Take a 32K context window: the system instructions, the conversation history, tool
# > definitions and retrieved (RAG) text all come out of it. If a request already uses 24K tokens,
# > only 8K are left for the new input and the output.*
#
# > 用户与 AI 聊得越久，模型越易遗忘早期信息——并非记忆衰减，而是旧内容已被挤出窗口。
# >
# > *The longer a chat goes on, the more the model "forgets" early information — not because
# > memory fades, but because old content has been pushed out of the window.*
#
# This notebook does the explainer articles' arithmetic with `minillm.decoding.budget`, makes a real model
# forget an early fact by sliding its window past it, and counts what a short exchange really
# costs in tokens — with DeepSeek-V4's tokenizer, the one the articles used, when it is present.
#
# **Try this:** change the budget's `parts` (token counts ≥ 0), the toy's `TOY_WINDOW` (1 to 22
# words), the made-up `NAME` (a word the model cannot know), the `windows` tried (1 to the
# text's length), or the example prices `PRICE_IN` / `PRICE_OUT` (per million tokens, 0 to
# 1,000), and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import matplotlib.pyplot as plt
import numpy as np

from minillm.decoding.budget import context_budget, estimate_cost
from minillm.chat.chatml import chatml_ids, render_chatml, stop_ids
from minillm import generate
from minillm.decoding.options import score_options
from minillm.tokenizer import Tokenizer
from minillm.tokenizer.display import render_token
from nbhelpers import claim, explore, knob_range, load_deepseek_v4, load_pretrained

# %% [markdown]
# ## The articles' 32K budget
#
# 32K = 32 × 1024 = 32,768 tokens. The articles give only the total in use (24K = 24,576); how it
# splits between the parts below is an illustration, but the arithmetic is the budget helper's:

# %%
WINDOW = 32 * 1024
parts = {"system instructions": 1_200, "conversation history": 15_000,
         "tool definitions": 2_376, "RAG results": 6_000}
b = context_budget(WINDOW, parts)
print(f"window {b.window:,}; used {b.used:,} = {' + '.join(f'{n:,}' for n in b.counts.values())}; "
      f"left {b.left:,} tokens (= {b.left / 1024:g}K) for the new input and the answer")
claim(b.used == 24 * 1024 and b.left == 8 * 1024, "the articles' example: 24K used leaves 8K",
      f"your parts use {b.used:,}")

fig, ax = plt.subplots(figsize=(9, 1.8))
left = 0
for name, n in b.counts.items():
    ax.barh(0, n, left=left, label=f"{name} ({n:,})")
    left += n
ax.barh(0, b.left, left=left, color="lightgrey", label=f"left ({b.left:,})")
ax.set_xlim(0, WINDOW)
ax.set_yticks([])
ax.set_xlabel("tokens")
ax.set_title("A 32K window with 24K in use")
ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.5))
plt.show()

# %% [markdown]
# If the answer needs a guaranteed share (`reserve_output`), a part that does not fit is named —
# this is the point where a chat application must drop or summarise something:

# %%
b = context_budget(WINDOW, {**parts, "new document": 7_000}, reserve_output=2_000)
print(f"used {b.used:,}, left {b.left:,}; does not fit with 2,000 reserved for the answer: "
      f"{b.not_fitting}; left once it is dropped: {b.left_after_dropping:,}")

# %% [markdown]
# ## Forgetting, first as a toy
#
# A "model" that answers "what is my friend called?" by one rule: find the words "is called" in
# what it reads and return the word after them. It reads only the last W words: slide the window
# over the text below (W from the whole text down to a few words past the name, and `TOY_WINDOW`)
# and watch what leaves first.

# %%
TOY_TEXT = ("My friend is called Zorblat . The sea is salty . Tides follow the Moon . "
            "What is my friend called ?").split()
TOY_WINDOW = 10
knob_range("TOY_WINDOW", TOY_WINDOW, 1, len(TOY_TEXT))


def toy_answer(words):
    """The toy's rule: the word after "is called" in the words it reads, else a guess."""
    for i in range(len(words) - 2):
        if words[i:i + 2] == ["is", "called"]:
            return words[i + 2]
    return "(a guess)"


name_at = TOY_TEXT.index("Zorblat")
for W in sorted({*range(len(TOY_TEXT), len(TOY_TEXT) - name_at - 3, -1), TOY_WINDOW}, reverse=True):
    seen = TOY_TEXT[-W:]                                                # the last W words
    print(f"W = {W:2d}: reads {' '.join(seen)[:60]:60s} → {toy_answer(seen)}")
answers_from = min(W for W in range(len(TOY_TEXT), 0, -1)                # the smallest W that still answers
                   if all(toy_answer(TOY_TEXT[-w:]) != "(a guess)" for w in range(W, len(TOY_TEXT) + 1)))
print(f"the name is word {name_at} of {len(TOY_TEXT)}: it is in the window for W ≥ "
      f"{len(TOY_TEXT) - name_at}, but the toy answers only for W ≥ {answers_from} — "
      f"'is called', the words that tie the name to the question, leave first")

# %% [markdown]
# The toy loses the answer *before* the name leaves its window: what it needs is the words that
# link the name to the question ("is called"), and they are written before the name. A real model
# reads all of its window at once, not with a rule — measured next.
#
# ## Forgetting: a sliding window on a real model
#
# A text states a made-up fact at its start, talks about other things, then asks for the fact.
# When a conversation outgrows the window, something must go: `minillm.decoding.generate(...,
# sliding_window=k)` keeps only the last k tokens, and `minillm.chat.conversation.Chat.fit_window` drops the
# oldest turns. Either way the start of the text leaves the model's input. Below, the model reads
# only the last W tokens, for shrinking W, and we measure the probability it gives the right
# answer (with `score_options`, one forward pass each).

# %%
model, tok, model_name = load_pretrained()
NAME = " Zorblat"
facts = ["The sea covers about 71 percent of the Earth's surface.",
         "The deepest point of the ocean is the Challenger Deep in the Mariana Trench.",
         "Sea water is salty because rivers carry dissolved minerals into it.",
         "Tides are caused mainly by the gravity of the Moon.",
         "Coral reefs are built by tiny animals called polyps.",
         "The Pacific is the largest and deepest ocean on Earth."]
def make_text(n_facts):
    return (f"My friend is called{NAME}. " + " ".join(facts[:n_facts])
            + " Do you remember what my friend is called? My friend is called")

n_facts = len(facts)              # as many as fit the model's own window (with room for the name)
while len(tok.encode(make_text(n_facts))) + 8 > model.config.n_ctx:
    n_facts -= 1
TEXT = make_text(n_facts)
ids = tok.encode(TEXT)
name_ids = tok.encode(NAME)
at = next(i for i in range(len(ids)) if ids[i:i + len(name_ids)] == name_ids)
needed = len(ids) - at              # the smallest window that still holds the whole name
print(f"{len(ids)} tokens; {tok.decode(ids[:at])!r} is tokens 0–{at - 1}, the name tokens {at}–"
      f"{at + len(name_ids) - 1} ({[render_token(tok.token_bytes(i)) for i in name_ids]}); a window needs ≥ {needed} "
      f"tokens to hold the name, {len(ids)} to hold the sentence that introduces it")

# %%
windows = sorted({len(ids), *range(len(ids) - 1, needed - 8, -2), needed, needed // 2, needed // 4},
                 reverse=True)
knob_range("windows", windows, 1, len(ids))
results = []
for W in windows:
    window_ids = ids[-W:]                                           # the sliding window: last W tokens
    p = float(np.exp(score_options(model, tok, window_ids, [NAME]).logprobs[0]))
    results.append((W, p))
    print(f"W = {W:3d}: window starts with {tok.decode(window_ids[:5])!r:34} → p({NAME!r}) = {p:.2e}")

W, p = map(np.array, zip(*results))
p_of = dict(results)
if model_name == "SmolLM2-135M-Instruct" and len(ids) in p_of and needed in p_of:   # the paragraph below
    p_whole, p_name_in = p_of[len(ids)], p_of[needed]
    print(f"p(name): {p_whole:.2e} with the whole text; {p_name_in:.2e} at W = {needed}, where the "
          f"whole name is still in the window but {tok.decode(ids[:at])!r} is not "
          f"({p_whole / p_name_in:,.0f}× lower)")
    claim(p_whole > 100 * p_name_in, "p(name) has fallen more than 100× while the name is still in the "
          "window: the introduction left first", "less than 100× apart for this NAME")
    if (W < needed).any():
        print(f"once the name itself has left (W < {needed}): at most {p[W < needed].max():.2e}")
else:
    print("(The forgetting demonstration needs SmolLM2: the small fallback model does not recall "
          "the name even with the whole text, so the curve above is flat noise.)")
fig, ax = plt.subplots(figsize=(8, 3.8))
ax.plot(W, p, "o-")
ax.axvline(needed, color="C3", ls=":", label=f"W = {needed}: the name just fits, its introduction has left")
ax.axvspan(needed, len(ids), color="C1", alpha=0.15, label=f"{tok.decode(ids[:at]).strip()!r} leaving")
ax.set_yscale("log")
ax.set_xlabel("window W (tokens the model reads)")
ax.set_ylabel(f"p({NAME.strip()!r} | last W tokens)")
ax.set_title(f"Forgetting = falling out of the window ({model_name})")
ax.legend()
plt.show()

# %% [markdown]
# Slide the window yourself: the tokens the model reads (black) and the ones that have left
# (grey), with p(name) at that window. With Jupyter widgets installed a slider moves W; without
# them (and in the test suite) three windows are shown: the whole text, the smallest one that
# holds the name, and half of that.

# %%
def p_name(W):
    """p(NAME | the last W tokens), one forward pass (kept in p_of)."""
    if W not in p_of:
        p_of[W] = float(np.exp(score_options(model, tok, ids[-W:], [NAME]).logprobs[0]))
    return p_of[W]


def draw_window(ax, W):
    """The text as a strip of tokens, the last W in the window; p(name) in the title."""
    width, x, line = 70, 0, 0                                   # characters per line, wrapped
    for k, i in enumerate(ids):
        piece = render_token(tok.token_bytes(i))
        if x + len(piece) > width:
            x, line = 0, line + 1
        ax.text(x, -line, piece, fontsize=6, family="monospace",
                color="black" if k >= len(ids) - W else "lightgrey",
                fontweight="bold" if at <= k < at + len(name_ids) else "normal")
        x += len(piece)
    ax.set_xlim(0, width + 4)
    ax.set_ylim(-line - 1, 1)
    ax.axis("off")
    ax.set_title(f"W = {W}: p({NAME.strip()!r}) = {p_name(W):.1e}", fontsize=9)


shown = explore(draw_window, {"W": (1, len(ids), 1, needed)},
                static=[{"W": len(ids)}, {"W": needed}, {"W": max(1, needed // 2)}])

# %% [markdown]
# And in words: the greedy continuation with the whole text, with the window that has just lost
# the introduction (the name whole), and with one that has lost part of the name.

# %%
for label, window_ids in (("whole text", ids), (f"last {needed} tokens", ids[-needed:]),
                          (f"last {needed - 2} tokens", ids[-(needed - 2):])):
    reply = "".join(s.text for s in generate(model, window_ids, max_new_tokens=6, temperature=0,
                                             stop_ids=stop_ids(tok), tokenizer=tok))
    print(f"{label:16s}: ...my friend is called{reply!r}")

# %% [markdown]
# Nothing decays: the weights are identical in every row (with SmolLM2; the small fallback model
# never recalls the name in the first place). What changes is only which tokens are in the
# window — and, as in the toy, what leaves first is the start of the text: "My friend is called",
# the words that tie the name to the question. With them gone the name is still in the window
# (the shaded band ends where it leaves) but nothing says whose name it is, and its probability
# has already fallen (printed above); once the name itself slides out, it is simply not in the
# input. A chat that drops the oldest turns loses their *context* before it loses every word
# the user may ask about.
#
# ## What a short exchange really costs
#
# > Token 计费模式（如 OpenAI API）进一步凸显其经济意义：输入与输出 Token 均计入成本，一段简短回答
# > 可能因隐含的 prompt 或推理过程消耗数十倍于表面字数的 Token。
# >
# > *Per-token billing (as in the OpenAI API) makes it an economic question: input and output
# > tokens both cost, and a short answer can consume tens of times more tokens than its visible
# > words, because of the hidden prompt or the reasoning.*
#
# The visible exchange: "Why is the sea blue?" and the articles' one-sentence answer. What the
# model actually reads includes the chat template and the system prompt; in an application often
# also tool definitions and retrieved text. Counted with the model's tokenizer, and with
# DeepSeek-V4's (the articles': 19 tokens for the answer) and GPT-4's (`cl100k`) for the visible
# parts; the prices are example figures (per million tokens, in any currency, as providers quote
# them), not a quote:

# %%
Q, A = "为什么大海是蓝色的？", "海水会吸收较多红光，蓝光更容易被散射回来，所以大海常呈蓝色。"
PRICE_IN, PRICE_OUT = 2.0, 8.0                               # example prices per million tokens
knob_range("PRICE_IN and PRICE_OUT", [PRICE_IN, PRICE_OUT], 0, 1000)
cl100k = Tokenizer.load("cl100k")
deepseek, deepseek_name = load_deepseek_v4()
hidden = chatml_ids(tok, [{"role": "user", "content": Q}]) if "<|im_start|>" in tok.special_tokens \
    else tok.encode(Q)
print(render_chatml([{"role": "user", "content": Q}]) if "<|im_start|>" in tok.special_tokens else Q)
rows = {"question, as typed": (tok.encode(Q), deepseek.encode(Q), cl100k.encode(Q)),
        "question, as the model reads it": (hidden, None, None),
        "answer": (tok.encode(A), deepseek.encode(A), cl100k.encode(A))}
for label, (ours, ds, gpt4) in rows.items():
    print(f"{label:32s}: {len(ours):3d} tokens ({model_name})" +
          (f", {len(ds):3d} ({deepseek_name}), {len(gpt4):3d} (cl100k)" if ds is not None else ""))
if deepseek_name == "DeepSeek-V4":
    claim(len(deepseek.encode(A)) == 19, "the articles' 19 tokens", f"{len(deepseek.encode(A))} here")
if "<|im_start|>" in tok.special_tokens:            # the claim below: the template multiplies the input
    claim(len(hidden) > 2 * len(tok.encode(Q)), "the template more than doubles the input",
          f"{len(hidden)} vs {len(tok.encode(Q))} tokens")
    print(f"the model reads {len(hidden) / len(tok.encode(Q)):.1f}× the tokens of the typed question")
print(f"visible characters: question {len(Q)}, answer {len(A)}")
cost = estimate_cost(hidden, tok.encode(A), PRICE_IN, PRICE_OUT)
print(f"cost at {PRICE_IN:g} per million in and {PRICE_OUT:g} per million out: {cost:.6f} "
      f"= {len(hidden)} × {PRICE_IN:g}/10⁶ + {len(tok.encode(A))} × {PRICE_OUT:g}/10⁶; "
      f"{cost * 1e6:,.0f} for a million such exchanges")

# %% [markdown]
# With SmolLM2 the template and its default system prompt more than double the input (checked
# above) before any tool definitions or documents are added, and a model that "reasons" first (notebook 11) adds its
# reasoning tokens to the billed output. Token counts — not characters or words — are the unit
# of both the window and the bill, and they depend on the tokenizer (notebook 01).

# %% [markdown]
# ## A document longer than the window: chunks and map-reduce
#
# > 同样，上传长文档时，模型常需分块处理，本质是受限于上下文长度。
# >
# > *Likewise, when a long document is uploaded the model often has to work through it in
# > chunks — because of the limit on context length.*
#
# The document: a ship's log, one line per day, and on day `KEY_DAY` one sentence that says where
# the captain hid the gold key. The question comes after it. The window is `SMALL_WINDOW` tokens
# (96: smaller than the log; SmolLM2's real 8,192 would hold it, but a small window shows the
# same thing with cheap forward passes). Every forward pass must hold a chunk, the question and the
# answer, so a chunk may have at most `window − question − answer` tokens;
# `minillm.decoding.chunks.chunk_ids` cuts the log into chunks of that size, consecutive ones
# sharing `OVERLAP` tokens (so a sentence cut at one boundary is whole in one of the two chunks,
# if it is no longer than the overlap).
#
# **Try this:** change `KEY_DAY` (1 to 16), `HIDDEN` (one of the scored places), `OVERLAP` (0 to 24
# tokens) or `SMALL_WINDOW` (48 to 128 tokens), and re-run the cells of this section.

# %%
from minillm.decoding.chunks import chunk_ids, chunk_spans

PLACES = [" barrel", " cabin", " chest", " boat", " kitchen"]   # the answers scored (1 token each)
HIDDEN, KEY_DAY, N_DAYS = " cabin", 4, 16
SMALL_WINDOW, OVERLAP = min(96, model.config.n_ctx), 12
if HIDDEN not in PLACES:
    raise ValueError(f"HIDDEN = {HIDDEN!r} must be one of the scored PLACES {PLACES}")
knob_range("KEY_DAY", KEY_DAY, 1, N_DAYS)
knob_range("OVERLAP", OVERLAP, 0, 24)
knob_range("SMALL_WINDOW", SMALL_WINDOW, 48, min(128, model.config.n_ctx))

directions = ["north", "east", "south", "west"]
key_sentence = f" The captain hid the gold key in the{HIDDEN}."
log = " ".join(f"Day {d}: we sailed {20 + (7 * d) % 31} miles {directions[d % 4]}."
               + (key_sentence if d == KEY_DAY else "") for d in range(1, N_DAYS + 1))
question = tok.encode("\nQuestion: Where did the captain hide the gold key?\nAnswer: In the")
log_ids = tok.encode(log)
answer_tokens = max(len(tok.encode(place)) for place in PLACES)
chunk_size = SMALL_WINDOW - len(question) - answer_tokens          # what is left for the document
chunks = chunk_ids(log_ids, chunk_size, OVERLAP)
spans = chunk_spans(len(log_ids), chunk_size, OVERLAP)
key_start = tok.encode(" The captain hid")
key_at = next(i for i in range(len(log_ids)) if log_ids[i:i + len(key_start)] == key_start)
key_end = key_at + len(tok.encode(key_sentence))                # the key sentence: [key_at, key_end)
print(f"log: {len(log_ids)} tokens (> the {SMALL_WINDOW}-token window); question "
      f"{len(question)}, answer ≤ {answer_tokens} → chunks of ≤ {chunk_size} tokens, "
      f"{OVERLAP} shared between neighbours; the key sentence starts at token {key_at}")
for k, (start, stop) in enumerate(spans):
    fit = context_budget(SMALL_WINDOW, {"chunk": chunks[k], "question": question},
                         reserve_output=answer_tokens)
    print(f"chunk {k}: tokens {start:3d}–{stop - 1:3d} ({stop - start:3d}) + question "
          f"{len(question)} + answer {answer_tokens} = {fit.used + answer_tokens} ≤ {SMALL_WINDOW}"
          f"   starts {tok.decode(chunks[k][:6])!r}")
    assert fit.fits, f"chunk {k} does not fit the window with the question and the answer"
assert len(log_ids) + len(question) > SMALL_WINDOW, \
    "the log fits the window in one piece: raise N_DAYS or lower SMALL_WINDOW to need chunks"

# %% [markdown]
# **Map:** one forward pass per chunk, scoring the places (`score_options`, notebook 09): "chunk
# + question → p(each place)". **Reduce:** keep the answer of the most confident chunk. Beside it,
# what a model with the same window does without chunking — it reads the last tokens that fit
# (the sliding window above) and answers once.

# %%
mapped, passes, positions = [], 0, 0
for k, chunk in enumerate(chunks):
    scores = score_options(model, tok, chunk + question, PLACES)          # map: one chunk
    mapped.append(scores)
    passes += scores.forward_passes
    positions += len(chunk) + len(question)
    print(f"chunk {k}: best {scores.best.strip()!r:9} p = {scores.probs.max():.2f}   "
          + "  ".join(f"{place.strip()} {q:.2f}" for place, q in zip(PLACES, scores.probs)))
winner = max(range(len(chunks)), key=lambda k: mapped[k].probs.max())    # reduce: most confident
answer = mapped[winner].best
window_only = score_options(model, tok, log_ids[-chunk_size:] + question, PLACES)
print(f"map-reduce over {len(chunks)} chunks: {answer.strip()!r} (chunk {winner}, p = "
      f"{mapped[winner].probs.max():.2f}); {passes} forward passes over {positions} positions")
print(f"one pass over the last {chunk_size} tokens: {window_only.best.strip()!r} (p = "
      f"{window_only.probs.max():.2f}); forward passes {window_only.forward_passes} over "
      f"{chunk_size + len(question)} positions")

key_in_window = key_at >= len(log_ids) - chunk_size
holders = [k for k, (start, stop) in enumerate(spans) if start <= key_at and key_end <= stop]
checks = [(bool(holders), f"the key sentence is whole in chunk {holders}",
           f"no chunk holds the whole key sentence (tokens {key_at}–{key_end - 1}): a boundary "
           f"cuts it — raise OVERLAP"),
          (answer == HIDDEN, f"map-reduce answers {HIDDEN.strip()!r}, from chunk {winner}",
           f"map-reduce answers {answer.strip()!r}, not {HIDDEN.strip()!r}"),
          (winner in holders, "the most confident chunk is one that holds the key sentence",
           f"the most confident chunk is {winner}, the key sentence is whole in {holders}"),
          (key_in_window or window_only.best != HIDDEN,
           "the single window never saw the key sentence and answers something else"
           if not key_in_window else "the key sentence is in the last window too (KEY_DAY is late)",
           f"the single window answered {HIDDEN.strip()!r} without seeing the key sentence "
           "(a lucky guess)")]
for ok, yes, no in checks:
    print(("✓ " + yes) if ok else ("✗ " + no))
at_defaults = (HIDDEN, KEY_DAY, N_DAYS, SMALL_WINDOW, OVERLAP) == (" cabin", 4, 16, 96, 12)
if model_name == "SmolLM2-135M-Instruct" and at_defaults:
    assert all(ok for ok, _, _ in checks), "at the defaults SmolLM2 finds the key only by chunking"
elif model_name != "SmolLM2-135M-Instruct":
    print("(The small fallback model cannot answer the question: its ✓/✗ above are chance. The "
          "demonstration needs SmolLM2: python -m minillm download smollm2.)")

# %% [markdown]
# **What it cost.** Chunking pays for the overlap and for the question in every chunk, and (with
# a generated map step, e.g. a summary per chunk) one pass per generated token. A window large
# enough for the whole log would take one pass — and attention over the full length, which grows
# as the square of it. Counted (the rows marked "not run" are arithmetic):

# %%
SUMMARY_TOKENS = 30                                        # if the map step wrote a summary instead
whole = len(log_ids) + len(question)


def pairs(n):
    """The query-key pairs causal attention scores over n positions: n(n + 1) / 2."""
    return n * (n + 1) // 2


rows = [("map-reduce, scoring (run above)", passes, positions,
         sum(pairs(len(c) + len(question)) for c in chunks)),
        (f"map-reduce, {SUMMARY_TOKENS}-token summaries + reduce (not run)",
         len(chunks) * (1 + SUMMARY_TOKENS) + 1,
         positions + len(chunks) * SUMMARY_TOKENS + (len(chunks) * SUMMARY_TOKENS + len(question)),
         sum(pairs(len(c) + len(question) + SUMMARY_TOKENS) for c in chunks)
         + pairs(len(chunks) * SUMMARY_TOKENS + len(question))),
        (f"one pass, last {chunk_size} tokens (run above)", window_only.forward_passes,
         chunk_size + len(question), pairs(chunk_size + len(question))),
        (f"one pass, a window of ≥ {whole} (not run)", 1, whole, pairs(whole))]
print(f"{'':50s} {'passes':>6s} {'positions':>9s} {'attention pairs':>15s}")
for label, n_pass, n_pos, n_pairs in rows:
    print(f"{label:50s} {n_pass:6d} {n_pos:9d} {n_pairs:15,d}")
overlap_cost = positions - len(chunks) * len(question) - len(log_ids)
assert overlap_cost == OVERLAP * (len(chunks) - 1), "the overlap is read twice, once per neighbour"
print(f"tokens read twice because of the overlap: {overlap_cost} = {OVERLAP} × {len(chunks) - 1} "
      f"boundaries; the question is read {len(chunks)} times")

# %% [markdown]
# The summary row is arithmetic too: per chunk one pass over chunk + instruction (taken as long as
# the question) and one per summary token (with the KV cache); then one reduce pass that reads
# the summaries and the question. Each summary token is counted twice: written, then read.
#
# **What it loses.** Each chunk is read alone: a question whose answer needs two distant
# passages (the total distance sailed, or "what happened two days after the key was hidden?")
# cannot be answered by any one chunk, and the reduce step only sees what the map step wrote
# down. The sliding window loses the start of the document; chunking keeps all of it, at the
# price of never seeing it whole. Long-context models move that limit; they do not remove it.

# %% [markdown]
# ## Exercises
#
# Write the function, run the cell: `check` prints the first case it gets wrong, or how many it
# passed. Solutions: `solutions/08_context_and_cost.py`.
#
# **1. The sliding window.** Return what a model with a window of `n_ctx` tokens can read of
# `ids` (a list).

# %%
from exercises import check

def sliding_window(ids, n_ctx):
    raise NotImplementedError    # your code here

check("sliding_window", sliding_window)

# %% [markdown]
# **2. Keep the conversation in the window — whole turns.** A chat application cannot cut a turn
# in the middle (the model would read half a sentence from nobody), and must never lose its
# system prompt. `turns` is a list of `(role, n_tokens)`, `turns[0]` the system prompt: drop whole
# turns, oldest first, never the system prompt, until the kept tokens fit `n_ctx` (or only the
# system prompt is left); return the kept turns in order (`Chat.fit_window` drops the oldest
# turns the same way; its system prompt comes from the chat template).

# %%
def fit_turns(turns, n_ctx):
    raise NotImplementedError    # your code here

check("fit_turns", fit_turns)

# %% [markdown]
# **3. The bill.** `n_in` input and `n_out` output tokens, prices per million tokens: the cost.

# %%
def estimate_cost_(n_in, n_out, price_in, price_out):
    raise NotImplementedError    # your code here

check("estimate_cost", estimate_cost_)
