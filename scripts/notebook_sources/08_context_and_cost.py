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
# **Try this:** change the budget's `parts`, the made-up `NAME`, the `windows` tried, or the
# prices `PRICE_IN` / `PRICE_OUT`, and re-run.

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
from nbhelpers import claim, load_deepseek_v4, load_pretrained

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
print(f"{len(ids)} tokens; the name is tokens {at}–{at + len(name_ids) - 1} "
      f"({[tok.decode([i]) for i in name_ids]}); a window needs ≥ {needed} tokens to hold it")

# %%
windows = sorted({len(ids), *range(needed + 4, needed - 8, -2), needed // 2, needed // 4},
                 reverse=True)
results = []
for W in windows:
    window_ids = ids[-W:]                                           # the sliding window: last W tokens
    p = float(np.exp(score_options(model, tok, window_ids, [NAME]).logprobs[0]))
    results.append((W, p))
    print(f"W = {W:3d}: window starts with {tok.decode(window_ids[:5])!r:34} → p({NAME!r}) = {p:.2e}")

W, p = map(np.array, zip(*results))
p_whole, p_lost = p[W == len(ids)][0], p[W < needed].max()
if model_name == "SmolLM2-135M-Instruct":       # the claim of the paragraph below the plot
    claim(p_whole > 100 * p_lost, f"p(name) with the whole text {p_whole:.2e}, at most {p_lost:.2e} "
          f"once it left the window", "less than 100× apart for this NAME")
else:
    print("(The forgetting demonstration needs SmolLM2: the small fallback model does not recall "
          "the name even with the whole text, so the curve above is flat noise.)")
fig, ax = plt.subplots(figsize=(8, 3.8))
ax.plot(W, p, "o-")
ax.axvline(needed, color="C3", ls=":", label=f"W = {needed}: the name just fits")
ax.set_yscale("log")
ax.set_xlabel("window W (tokens the model reads)")
ax.set_ylabel(f"p({NAME.strip()!r} | last W tokens)")
ax.set_title(f"Forgetting = falling out of the window ({model_name})")
ax.legend()
plt.show()

# %% [markdown]
# And in words: the greedy continuation with the whole text, and with a window that has just lost
# the name.

# %%
for label, window_ids in (("whole text", ids), (f"last {needed - 2} tokens", ids[-(needed - 2):])):
    reply = "".join(s.text for s in generate(model, window_ids, max_new_tokens=6, temperature=0,
                                             stop_ids=stop_ids(tok), tokenizer=tok))
    print(f"{label:16s}: ...my friend is called{reply!r}")

# %% [markdown]
# Nothing decays: the weights are identical in every row (with SmolLM2; the small fallback model
# never recalls the name in the first place). What changes is only which tokens are
# in the window. Once the name has slid out, it is simply not in the input, and its probability
# falls to what a guess gives a made-up word.
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
# parts; the prices are example figures (per 1,000 tokens, in any
# currency), not a quote:

# %%
Q, A = "为什么大海是蓝色的？", "海水会吸收较多红光，蓝光更容易被散射回来，所以大海常呈蓝色。"
PRICE_IN, PRICE_OUT = 0.5, 1.5                               # example prices per 1K tokens
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
print(f"cost at {PRICE_IN}/1K in and {PRICE_OUT}/1K out: {cost:.4f} "
      f"({len(hidden)} in × {PRICE_IN / 1000:g} + {len(tok.encode(A))} out × {PRICE_OUT / 1000:g})")

# %% [markdown]
# With SmolLM2 the template and its default system prompt more than double the input (checked
# above) before any tool definitions or documents are added, and a model that "reasons" first (notebook 11) adds its
# reasoning tokens to the billed output. Token counts — not characters or words — are the unit
# of both the window and the bill, and they depend on the tokenizer (notebook 01).

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
# **2. The bill.** `n_in` input and `n_out` output tokens, prices per 1,000 tokens: the cost.

# %%
def estimate_cost_(n_in, n_out, price_in, price_out):
    raise NotImplementedError    # your code here

check("estimate_cost", estimate_cost_)
