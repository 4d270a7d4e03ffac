# %% [markdown]
# # 11 · "Thinking" is tokens
#
# > 模型内部不存在"思考过程"和"最终结果"的区分。在模型眼里，只有一件事：根据已有 token，预测下一个
# > token。所谓思考过程、推理步骤、Chain-of-Thought，只是训练数据中高概率出现的语言模式。
# >
# > *Inside the model there is no distinction between a "thinking process" and a "final result".
# > It does one thing: predict the next token from the tokens so far. "Thinking", "reasoning
# > steps", chain-of-thought are language patterns that were likely in the training data.*
#
# > 不是因为它先想好了，而是因为它还没"结束输出"。
# >
# > *Not because it has thought it through first, but because it has not "ended its output" yet.*
#
# The same model gets the same question twice — once asked to answer directly, once asked to
# think step by step. Both replies come out of the same call to `minillm.generate`, one token per
# forward pass; the "reasoning" is ordinary tokens with ordinary probabilities, the reply ends
# when the end-of-turn token wins, and every reasoning token takes room in the same context
# window.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import inspect

import matplotlib.pyplot as plt
import numpy as np

from minillm.budget import context_budget
from minillm.chat import stop_ids
from minillm.functional import softmax
from minillm.generate import generate
from nbhelpers import CountingModel, chat_prompt, load_pretrained

model, tok, model_name = load_pretrained()
counter = CountingModel(model)
ENDS = stop_ids(tok)

QUESTION = "Tom has 3 apples and buys 4 more. How many apples does he have?"
PROMPTS = {"direct": QUESTION + " Reply with only the number.",
           "step by step": QUESTION + " Let's think step by step."}
LIMITS = {"direct": 32, "step by step": 72}          # enough for both replies to end by themselves

# %% [markdown]
# ## One loop, two prompts
#
# `generate`'s signature has no "reasoning" switch — there is nothing in the model or the loop
# that could tell reasoning from answer:

# %%
print("generate" + str(inspect.signature(generate)))

# %%
runs = {}
for name, text in PROMPTS.items():
    prompt = chat_prompt(tok, text)
    counter.reset()
    steps = list(generate(counter, prompt, max_new_tokens=LIMITS[name], temperature=0,
                          stop_ids=ENDS, tokenizer=tok, logprobs=True))
    runs[name] = dict(prompt=prompt, steps=steps, calls=counter.calls)
    print(f"── {name}: prompt {len(prompt)} tokens → reply {len(steps)} tokens, "
          f"{counter.calls} forward passes")
    print("   " + repr("".join(s.text for s in steps)))

# %% [markdown]
# The step-by-step reply, token by token, with the probability the model gave each token when it
# chose it. "Steps" such as "1." and the arithmetic are drawn from the same distribution as any
# other word — and, for a 135 M-parameter model, are not necessarily correct: writing a
# derivation does not make it one.

# %%
steps = runs["step by step"]["steps"]
for k, s in enumerate(steps[:24]):
    print(f"{k:2d} {tok.decode([s.id])!r:14} p = {np.exp(s.logprob):.3f}")
print("…" if len(steps) > 24 else "")

# %% [markdown]
# ## The reply ends when the end-of-turn token wins
#
# A single training-style forward pass over prompt + reply (notebook 04) gives, at every position
# of the reply, the probability that the turn ends *there*. The model stops writing exactly when
# that probability becomes the largest — "it has not ended its output yet" is the whole story.

# %%
fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4))
for name, run in runs.items():
    ids = run["prompt"] + [s.id for s in run["steps"]]
    probs = softmax(model(np.array(ids)))[len(run["prompt"]) - 1:]   # [reply + 1, V]: before each reply token
    if ENDS:
        p_end = probs[:, list(ENDS)].sum(axis=-1)
        a1.plot(p_end, marker=".", label=name)
        print(f"{name:12s}: p(end of turn) at the last position {p_end[-1]:.3f}; "
              f"largest before it {p_end[:-1].max():.3f}")
    logp = [s.logprob for s in run["steps"]]
    a2.plot(np.exp(logp), marker=".", label=name)
a1.set_xlabel("position in the reply (tokens)")
a1.set_ylabel("p(end-of-turn token)")
a1.set_title("probability that the reply ends here" if ENDS else "(this model has no end-of-turn token)")
if ENDS:
    a1.legend()
a2.set_xlabel("position in the reply (tokens)")
a2.set_ylabel("p(chosen token)")
a2.set_title("every reply token is a draw from the same kind of distribution")
a2.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Reasoning tokens count against the same window
#
# > 一段简短回答可能因隐含的 prompt 或推理过程消耗数十倍于表面字数的 Token。
# >
# > *A short answer can consume tens of times more tokens than its visible words, because of the
# > hidden prompt or the reasoning.*
#
# The context window holds the prompt *and* everything generated, reasoning included. With the
# budget helper (notebook 08):

# %%
answer_tokens = len(tok.encode("7"))
for name, run in runs.items():
    reply = [s.id for s in run["steps"]]
    b = context_budget(model.config.n_ctx, {"prompt (chat template included)": run["prompt"],
                                            "reply": reply})
    print(f"{name:12s}: {b.counts} → {b.used} used of {b.window}, {b.left} left; "
          f"{len(reply) / answer_tokens:.0f}× the {answer_tokens} token(s) of the bare answer '7', "
          f"{b.used / answer_tokens:.0f}× counting the prompt")

fig, ax = plt.subplots(figsize=(8, 3.5))
for name, run in runs.items():
    P, R = len(run["prompt"]), len(run["steps"])
    ax.plot(np.arange(R + 1), P + np.arange(R + 1), label=f"{name}: {P} + {R} tokens")
ax.set_xlabel("generation step (one forward pass each)")
ax.set_ylabel("tokens in the context window")
ax.set_title("The window fills with every generated token, reasoning or not")
ax.legend()
plt.show()

# %% [markdown]
# **What this shows.** The step-by-step reply is longer — more forward passes, more of the window,
# more billed output tokens — and it is produced by exactly the same loop as the direct answer.
# Reasoning can help a model because each written step becomes context that later predictions
# attend to; it is not a separate process, and it can be wrong (look at the text above). Products
# that hide the chain of thought still generate those tokens and still pay for them: hiding is a
# display decision, not a different computation.
