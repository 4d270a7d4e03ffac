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
# First a toy, where written steps demonstrably help: column addition, whose carries must be
# written down to be used. Then the same model gets the same question twice — once asked to
# answer directly, once asked to think step by step. Both replies come out of the same call to `minillm.decoding.generate`, one token per
# forward pass; the "reasoning" is ordinary tokens with ordinary probabilities, the reply ends
# when the end-of-turn token wins, and every reasoning token takes room in the same context
# window. One question is an anecdote, so 20 problems are then measured both ways. Then: why such
# text *looks* like thinking, and why products hide it.
#
# **Try this:** change the toy's `TOY_DIGITS` (1 to 12 digits per number), `QUESTION` (and its
# `ANSWER`), the two
# `PROMPTS`, the `LIMITS` (1 to 256 tokens per reply, within the model's window) or the number of
# problems measured, `N_PROBLEMS` (1 to 20), with `MEASURE_LIMIT` tokens of room per reply (1 to
# 512), and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import inspect
import math
import re

import matplotlib.pyplot as plt
import numpy as np

from minillm.decoding.budget import context_budget
from minillm.chat.chatml import stop_ids
from minillm.functional import softmax
from minillm import generate, serve
from minillm.tokenizer.display import render_token
from nbhelpers import CountingModel, chat_prompt, claim, knob_range, load_pretrained

# %% [markdown]
# ## A toy first: the carry has to be written down
#
# Adding two numbers digit by digit needs the carry from the column to the right. A toy "model"
# that can only add one column at a time (two digits and a carry it can *read*) shows what
# writing intermediate results does:
# - **direct**: it writes the answer at once, most significant digit first, as text is written.
#   The carry of each column comes from the columns to its right, which are not written anywhere
#   yet, so the toy can only take it as 0;
# - **step by step**: it first writes each column's work, right to left ("7+5+0=12, write 2
#   carry 1"); the next column *copies* the carry from the text it has just written; then it
#   copies the digits into the answer.

# %%
TOY_DIGITS = 4
knob_range("TOY_DIGITS", TOY_DIGITS, 1, 12)


def one_column(x, y, carry):
    """All the toy can compute: one column's digit and its carry out."""
    total = x + y + carry
    return total % 10, total // 10


def toy_direct(a, b):
    """The answer at once, left to right: no carry is written anywhere, so each is taken as 0."""
    xs, ys = str(a).zfill(TOY_DIGITS + 1), str(b).zfill(TOY_DIGITS + 1)
    digits = [one_column(int(x), int(y), 0)[0] for x, y in zip(xs, ys)]
    return int("".join(map(str, digits))), len(digits)                 # (answer, symbols written)


def toy_step_by_step(a, b):
    """Each column's work written right to left, the carry copied from the text, then the answer."""
    xs, ys = str(a).zfill(TOY_DIGITS + 1)[::-1], str(b).zfill(TOY_DIGITS + 1)[::-1]
    work, carry = [], 0
    for x, y in zip(xs, ys):
        digit, carry_out = one_column(int(x), int(y), carry)            # reads the carry written last
        work.append(f"{x}+{y}+{carry}={int(x) + int(y) + carry}, write {digit} carry {carry_out}")
        carry = int(work[-1].split("carry ")[-1])                       # copied from the written text
    answer = int("".join(w.split("write ")[1][0] for w in reversed(work)))   # the digits, copied
    written = "; ".join(work)
    return answer, written, len(re.findall(r"\w+|[^\w\s]", written)) + len(work)   # + the answer digits


rng = np.random.default_rng(0)
def toy_number():
    """A TOY_DIGITS-digit number, digits 1–7 (so that some sums have no carry at all)."""
    return int("".join(str(d) for d in rng.integers(1, 8, TOY_DIGITS)))


toy_problems = [(toy_number(), toy_number()) for _ in range(20)]
a, b = next((p for p in toy_problems if toy_direct(*p)[0] != sum(p)), toy_problems[0])   # one with a carry
print(f"{a} + {b} = {a + b}")
print(f"direct      : {toy_direct(a, b)[0]}")
print(f"step by step: {toy_step_by_step(a, b)[1]}\n              → {toy_step_by_step(a, b)[0]}")
toy_score = {name: sum(fn(a, b)[0] == a + b for a, b in toy_problems)
             for name, fn in (("direct", toy_direct), ("step by step", toy_step_by_step))}
toy_tokens = {name: np.mean([fn(a, b)[-1] for a, b in toy_problems])
              for name, fn in (("direct", toy_direct), ("step by step", toy_step_by_step))}
no_carry = sum(all(int(x) + int(y) < 10 for x, y in zip(str(a).zfill(TOY_DIGITS), str(b).zfill(TOY_DIGITS)))
               for a, b in toy_problems)
for name in toy_score:
    print(f"{name:12s}: {toy_score[name]:2d} of {len(toy_problems)} right, {toy_tokens[name]:.0f} symbols "
          f"written on average (numbers, words and signs)")
claim(toy_score["step by step"] == len(toy_problems) and toy_score["direct"] == no_carry,
      "writing the carries makes every sum right; without them only carry-free sums are",
      "not at this TOY_DIGITS")
print(f"problems without any carry: {no_carry} — direct is right exactly on those")

# %% [markdown]
# The toy's one skill never changed; what changed is what it could *read*. A written step is
# context that later steps copy. A language model has the same and only channel: its own tokens
# in the window. Whether a real model's written steps are right is another matter — measured
# below.
#
# ## The real model

# %%
model, tok, model_name = load_pretrained()
counter = CountingModel(model)
ENDS = stop_ids(tok)

QUESTION = "Tom has 3 apples and buys 4 more. How many apples does he have?"
ANSWER = "7"                                         # the bare answer, to count its tokens
PROMPTS = {"direct": QUESTION + " Reply with only the number.",
           "step by step": QUESTION + " Let's think step by step."}
LIMITS = {"direct": 32, "step by step": 72}          # enough for both replies to end by themselves
knob_range("LIMITS", list(LIMITS.values()), 1, 256)

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
    limit = min(LIMITS[name], model.config.n_ctx - len(prompt))      # within the model's window
    steps = list(generate(counter, prompt, max_new_tokens=limit, temperature=0,
                          stop_ids=ENDS, tokenizer=tok, logprobs=True))
    runs[name] = dict(prompt=prompt, steps=steps, calls=counter.calls, limit=limit)
    print(f"── {name}: prompt {len(prompt)} tokens → reply {len(steps)} tokens, "
          f"{counter.calls} forward passes")
    print("   " + repr("".join(s.text for s in steps)))
direct, stepwise = runs["direct"], runs["step by step"]
claim(len(stepwise["steps"]) > len(direct["steps"]), "the step-by-step reply is longer",
      "not for these PROMPTS and LIMITS")
for run in runs.values():   # one forward per token; the end-of-turn token is generated too, not shown
    assert run["calls"] in (len(run["steps"]), len(run["steps"]) + 1), "one forward pass per token"
if not ENDS:
    print(f"({model_name} has no chat format and no end-of-turn token: its replies run to the "
          f"limit. The end-of-turn demonstration below needs SmolLM2: python -m minillm download smollm2)")

# %% [markdown]
# The step-by-step reply, token by token, with the probability the model gave each token when it
# chose it. "Steps" such as "1." and the arithmetic are drawn from the same distribution as any
# other word — and, for a 135 M-parameter model, are not necessarily correct: writing a
# derivation does not make it one.

# %%
steps = runs["step by step"]["steps"]
for k, s in enumerate(steps[:24]):
    print(f"{k:2d} {render_token(tok.token_bytes(s.id))!r:14} p = {np.exp(s.logprob):.3f}")
print("…" if len(steps) > 24 else "")

# %% [markdown]
# ## The reply ends when the end-of-turn token wins
#
# A single training-style forward pass over prompt + reply (notebook 04) gives, at every position
# of the reply, the probability that the turn ends *there* (red: the last position). The model
# stops writing exactly when the end-of-turn token becomes the most likely one (checked) — "it has
# not ended its output yet" is the whole story. Right: the probabilities of the tokens it chose,
# reasoning or direct answer alike.

# %%
fig, axes = plt.subplots(1, len(runs) + 1, figsize=(15, 3.8))
for ax, (name, run) in zip(axes, runs.items()):
    ids = run["prompt"] + [s.id for s in run["steps"]]
    probs = softmax(model(np.array(ids)))[len(run["prompt"]) - 1:]   # [reply + 1, V]: before each reply token
    if ENDS:
        p_end = probs[:, list(ENDS)].sum(axis=-1)
        ax.bar(range(len(p_end)), p_end, color=["C3" if k == len(p_end) - 1 else "C0" for k in range(len(p_end))])
        ax.set_ylim(0, 1)
        print(f"{name:12s}: p(end of turn) at the last position {p_end[-1]:.3f}; "
              f"largest before it {p_end[:-1].max():.3f}")
        if len(run["steps"]) < run["limit"]:                     # it ended by itself: check the claim
            assert int(np.argmax(probs[-1])) in ENDS, "the reply should end where end-of-turn wins"
            early = [k for k, row in enumerate(probs[:-1]) if int(np.argmax(row)) in ENDS]
            assert not early, f"{name}: greedy decoding would have stopped at reply position(s) {early}, "\
                f"before the last; the reply and this forward disagree (re-run the generation cell)"
    ax.set_xlabel("position in the reply (tokens)")
    ax.set_ylabel("p(end-of-turn token)")
    ax.set_title(f"{name}: p(the reply ends here)" if ENDS else f"{name}: (no end-of-turn token)",
                 fontsize=10)
for name, run in runs.items():
    axes[-1].hist(np.exp([s.logprob for s in run["steps"]]), bins=10, range=(0, 1), density=True,
                  histtype="step", lw=2, label=f"{name} ({len(run['steps'])} tokens)")
axes[-1].set_xlabel("p(chosen token)")
axes[-1].set_ylabel("share of the reply's tokens (density)")
axes[-1].set_title("reasoning or answer: the same kind of draws", fontsize=10)
axes[-1].legend(fontsize=8)
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
answer_tokens = len(tok.encode(ANSWER))
for name, run in runs.items():
    reply = [s.id for s in run["steps"]]
    b = context_budget(model.config.n_ctx, {"prompt (chat template included)": run["prompt"],
                                            "reply": reply})
    print(f"{name:12s}: {b.counts} → {b.used} used of {b.window}, {b.left} left; "
          f"{len(reply) / answer_tokens:.0f}× the {answer_tokens} token(s) of the bare answer {ANSWER!r}, "
          f"{b.used / answer_tokens:.0f}× counting the prompt")

fig, ax = plt.subplots(figsize=(9, 2.6))
for row, (name, run) in enumerate(runs.items()):
    P, R = len(run["prompt"]), len(run["steps"])
    ax.barh(row, P, color="C0", label="prompt" if row == 0 else None)
    ax.barh(row, R, left=P, color="C1", label="reply (reasoning included)" if row == 0 else None)
    ax.text(P + R + 1, row, f"{P} + {R} = {P + R} tokens", va="center")
ax.set_yticks(range(len(runs)), list(runs))
ax.set_xlim(0, max(len(r["prompt"]) + len(r["steps"]) for r in runs.values()) * 1.35)
ax.set_xlabel("tokens in the context window (one forward pass per reply token)")
ax.set_title("The window fills with every generated token, reasoning or not")
ax.legend(loc="lower right", fontsize=8)
plt.show()

# %% [markdown]
# **What this shows.** The step-by-step reply is longer — more forward passes, more of the window,
# more billed output tokens — and it is produced by exactly the same loop as the direct answer.
# Written steps *can* help, as in the toy, because each becomes context that later predictions
# attend to; they are not a separate process, and they can be wrong. And the "direct" prompt does
# not get a bare number from this model: its reply above writes the sum out too ("3 + 4 = 7").
# The two prompts differ in how much they write, not in whether they write steps (the average
# tokens of each are printed below). Whether the longer derivations help this model is a question
# for more than one problem:
#
# ## Direct or step by step: 20 problems, measured
#
# `N_PROBLEMS` small word problems (sums, differences, products of numbers below 20), each asked
# both ways with the prompts above, greedy. A reply counts as right when the last number it
# writes is the answer. Both prompts of all problems run together through `serve` (continuous
# batching, notebook 12: a finished reply leaves the batch, so the short direct answers do not
# wait for the long derivations; greedy, the same tokens as one by one), with room for
# `MEASURE_LIMIT` tokens per reply (1 to 512), room for most replies to end by themselves but not
# all: how many of each way the cap cut is printed (with the end of one), and a cut reply is right
# only if its last number is. The two ways are compared on the same problems with an exact
# two-sided sign test on the problems where they disagree (McNemar's test): the chance, if neither
# way were better, of a split at least that uneven.

# %%
N_PROBLEMS, MEASURE_LIMIT = 20, 320
knob_range("N_PROBLEMS", N_PROBLEMS, 1, 20)
knob_range("MEASURE_LIMIT", MEASURE_LIMIT, 1, 512)
NAMES = ["Tom", "Ana", "Li", "Sam", "Maya"]
THINGS = ["apples", "books", "coins", "stamps", "shells"]
problem_rng = np.random.default_rng(1)
problems = []
for k in range(N_PROBLEMS):
    name, things = NAMES[k % 5], THINGS[(k // 5) % 5]
    x, y = (int(n) for n in problem_rng.integers(2, 20, 2))
    kind = k % 3
    if kind == 0:
        problems.append((f"{name} has {x} {things} and gets {y} more. How many {things} does {name} have?", x + y))
    elif kind == 1:
        x, y = max(x, y) + 1, min(x, y)
        problems.append((f"{name} has {x} {things} and gives away {y}. How many {things} are left?", x - y))
    else:
        x, y = x % 9 + 2, y % 9 + 2
        problems.append((f"There are {x} boxes with {y} {things} in each. How many {things} are there?", x * y))
suffix = {name: text[len(QUESTION):] for name, text in PROMPTS.items()}   # the instruction each adds
batch = [chat_prompt(tok, question + suffix[name]) for name in PROMPTS for question, _ in problems]
limit = min(MEASURE_LIMIT, model.config.n_ctx - max(map(len, batch)))    # within the model's window
all_replies = serve(model, batch, limit, batch_size=len(batch), capacity=max(map(len, batch)) + limit,
                    temperature=0, stop_ids=ENDS)                       # every row at once, none waits
measured = {}
for k, name in enumerate(PROMPTS):
    replies = all_replies[k * N_PROBLEMS:(k + 1) * N_PROBLEMS]
    texts = [tok.decode(r) for r in replies]
    last = [(re.findall(r"-?\d+", t) or [None])[-1] for t in texts]
    measured[name] = dict(right=[n is not None and int(n) == truth for n, (_, truth) in zip(last, problems)],
                          tokens=[len(r) for r in replies], ended=[len(r) < limit for r in replies],
                          texts=texts)
print(f"{'':12s} {'right':>9s} {'mean tokens':>12s} {'cut by the cap':>15s} {'right of those that ended':>26s}")
for name, m in measured.items():
    ended_right = sum(ok for ok, e in zip(m["right"], m["ended"]) if e)
    print(f"{name:12s} {sum(m['right']):3d} of {N_PROBLEMS:<3d} {np.mean(m['tokens']):12.1f} "
          f"{N_PROBLEMS - sum(m['ended']):15d} {ended_right:>18d} of {sum(m['ended'])}")
helped = sum(s and not d for s, d in zip(measured["step by step"]["right"], measured["direct"]["right"]))
hurt = sum(d and not s for s, d in zip(measured["step by step"]["right"], measured["direct"]["right"]))
print(f"step by step turned {helped} wrong direct answer(s) right and {hurt} right one(s) wrong")
wrong_steps = [t for t, ok in zip(measured["step by step"]["texts"], measured["step by step"]["right"]) if not ok]
if wrong_steps:
    print("a wrong step-by-step reply:", repr(wrong_steps[0][:200]))
ratio = np.mean(measured["step by step"]["tokens"]) / max(np.mean(measured["direct"]["tokens"]), 1)
direct_steps = sum(bool(re.search(r"\d+\s*[-+×*x]\s*\d+", t)) for t in measured["direct"]["texts"])
print(f"average reply: direct {np.mean(measured['direct']['tokens']):.1f} tokens, step by step "
      f"{np.mean(measured['step by step']['tokens']):.1f}; {direct_steps} of {N_PROBLEMS} direct replies "
      f"write a calculation (such as '3 + 4') rather than only the number")


def sign_test_p(a, b):
    """Exact two-sided sign test (McNemar's, exact): the chance, if each of the a + b disagreements
    went either way with probability 1/2, of a split at least as uneven as a : b.
    Example: sign_test_p(1, 4) = 2 · (1 + 5) / 32 = 0.375."""
    n = a + b
    tail = sum(math.comb(n, k) for k in range(min(a, b) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


sign_p = sign_test_p(helped, hurt)                        # only the problems where the two ways disagree
print(f"exact two-sided sign test on the {helped + hurt} problem(s) where they disagree ({helped} for step "
      f"by step, {hurt} for direct): p = {sign_p:.2f}")
better = sum(measured["step by step"]["right"]) > sum(measured["direct"]["right"])
verdict = (("helps" if better else "does worse") if sign_p < 0.05 else
           "shows no difference this sample can tell from chance")
capped = N_PROBLEMS - sum(measured["step by step"]["ended"])
print(f"on these problems, for {model_name}, writing steps {verdict} (p = {sign_p:.2f}), "
      f"at {ratio:.1f}× the tokens"
      + (f" — with {capped} step-by-step replies cut by the {limit}-token cap before they ended" if capped
         else "; every step-by-step reply ended by itself"))
cut_texts = [t for t, e in zip(measured["step by step"]["texts"], measured["step by step"]["ended"]) if not e]
if cut_texts:
    print(f"how a cut reply ends (its last 120 characters): {cut_texts[0][-120:]!r}")
if model_name != "SmolLM2-135M-Instruct":
    print(f"({model_name} writes Shakespeare, not arithmetic: its counts are 0 either way. The "
          f"measurement needs SmolLM2: python -m minillm download smollm2)")

fig, (m1, m2) = plt.subplots(1, 2, figsize=(10, 3.2))
m1.bar(list(measured), [sum(m["right"]) / N_PROBLEMS for m in measured.values()], color=["C0", "C1"])
m1.set_ylim(0, 1)
m1.set_ylabel("share right")
m1.set_title(f"{N_PROBLEMS} problems, {model_name}")
m2.bar(list(measured), [np.mean(m["tokens"]) for m in measured.values()], color=["C0", "C1"])
m2.set_ylabel("reply tokens (mean)")
m2.set_title("what each way costs")
plt.tight_layout()
plt.show()

# %% [markdown]
# Whatever the counts above say, the cost side is certain: every written step is a forward pass
# and a billed output token. A small model's steps can go wrong and then be copied as faithfully
# as right ones (the toy copies only right carries because its one skill is exact). Products that
# hide the chain of thought still generate those tokens and still pay for them: hiding is a
# display decision, not a different computation.

# %% [markdown]
# ## Why it looks like thinking
#
# > "模型在思考"是一种错觉 — *"the model is thinking" is an illusion.*
#
# Worked solutions — "First, … Then, … So the answer is …" — are everywhere in the text a model is
# trained on, and instruction-tuned models are trained further on exactly such replies. So after
# "Let's think step by step." the most likely continuations *are* the openings of a derivation:
# the look of reasoning is what the next-token distribution holds at that point. The first token
# of each reply, and what else the model considered there:

# %%
OPENERS = ["Let", "To", "Step", "First", "1"]                     # how derivations start
opener_mass = {}
for name, run in runs.items():
    first = softmax(model(np.array(run["prompt"]), last_only=True)[-1])   # [V] the reply's first token
    top = np.argsort(-first)[:6]
    print(f"{name:12s}: " + ", ".join(f"{render_token(tok.token_bytes(int(i)))!r} {first[i]:.2f}" for i in top))
    opener_mass[name] = sum(first[tok.encode(w)[0]] for w in OPENERS if len(tok.encode(w)) == 1)
print("probability of a derivation opener", OPENERS, {k: round(float(v), 2) for k, v in opener_mass.items()})
if model_name == "SmolLM2-135M-Instruct":
    claim(opener_mass["step by step"] > 2 * opener_mass["direct"], "after the step-by-step prompt, a "
          "derivation opener is more than twice as likely as after the direct one", "not for these PROMPTS")

# %% [markdown]
# The written steps also *do* something, and that is why they can help: each step becomes context
# that the following predictions attend to (notebook 03), so a result written down in step 2 is
# there to be copied in step 3. No other channel exists — the model has no scratch memory besides
# the tokens in its window.
#
# ## Why products hide it
#
# > 原因不是"怕你看不懂"，而是：推理文本不稳定；容易误导用户对正确性的判断；会泄露训练分布和系统策略。
# > 隐藏 CoT 是产品与安全决策，不是模型能力变化。
# >
# > *Not "because you would not understand it", but: the reasoning text is unstable; it misleads
# > users about how correct the answer is; it leaks the training distribution and the system's
# > policies. Hiding the chain of thought is a product and safety decision, not a change in what
# > the model can do.*
#
# Reasoning models (DeepSeek-R1 and its successors, OpenAI's o-series) write their reasoning
# between markers such as `<think>` … `</think>` and then the answer. Applications usually show only
# the answer (or a summary): the reasoning is long, often repetitive or wrong along the way (it is
# a draft, as above), it can reveal the hidden system prompt, and a provider may not want it
# copied to train other models. Hiding it is a filter on the *text shown* — the tokens were still
# generated, still fill the window, and are still billed as output. With this notebook's
# step-by-step reply as the "thinking":

# %%
thinking = "".join(s.text for s in runs["step by step"]["steps"])
answer = "".join(s.text for s in runs["direct"]["steps"])
full_reply = f"<think>{thinking}</think>{answer}"
shown = re.sub(r"<think>.*?</think>", "", full_reply, flags=re.S)
generated, displayed = len(tok.encode(full_reply)), len(tok.encode(shown))
print(f"what the user sees: {shown!r}")
print(f"tokens generated (and billed, and in the window): {generated}; tokens shown: {displayed}")
assert displayed < generated and shown == answer, \
    f"hiding <think>…</think> should leave exactly the answer {answer!r}, in fewer tokens than "\
    f"{generated}; got {shown!r} ({displayed} tokens)"

# %% [markdown]
# ## What the hidden reasoning costs: tokens, time, money
#
# > 一段简短回答可能因隐含的 prompt 或推理过程消耗数十倍于表面字数的 Token。
# >
# > *A short answer can consume tens of times more tokens than its visible words, because of the
# > hidden prompt or the reasoning.*
#
# Take this notebook's step-by-step reply as the hidden reasoning and the direct reply as the
# visible answer, counted with the model's own tokenizer. **Time** comes from this machine: the
# model's prefill speed (reading the prompt) and decode speed (one token per forward pass, with
# the KV cache), measured below — the fastest of `REPEATS` runs, the one least disturbed by other
# work on the machine. **Money** uses example prices, `PRICE_IN` and `PRICE_OUT` per
# million tokens (in any currency): example figures, not any provider's quote.
#
# **Try this:** change the example prices (0 to 1,000 per million tokens), `TRACE_LENGTHS` (1 to a
# million tokens each) or `REPEATS` (1 to 10), and re-run the cells of this section.

# %%
import math
import time

from minillm.decoding.budget import estimate_cost

PRICE_IN, PRICE_OUT = 2.0, 8.0                 # example prices per million tokens (as in notebook 08), not a quote
REPEATS, TIMED_TOKENS = 2, 12
knob_range("PRICE_IN and PRICE_OUT", [PRICE_IN, PRICE_OUT], 0, 1000)
knob_range("REPEATS", REPEATS, 1, 10)


def price(n_in, n_out):
    """The example price of n_in input and n_out output tokens."""
    return estimate_cost(n_in, n_out, PRICE_IN, PRICE_OUT)


def timed_generation(prompt, n):
    """(seconds to the first token, seconds per later token) of one greedy run of n tokens."""
    start = time.perf_counter()
    stamps = [time.perf_counter() - start
              for _ in generate(model, prompt, max_new_tokens=n, temperature=0, stop_at_eos=False)]
    return stamps[0], (stamps[-1] - stamps[0]) / (len(stamps) - 1)


prompt = runs["step by step"]["prompt"]
runs_timed = [timed_generation(prompt, TIMED_TOKENS) for _ in range(REPEATS)]
first_token_s = min(t for t, _ in runs_timed)                 # prefill: the prompt + 1 token
per_token_s = min(t for _, t in runs_timed)                   # decode: one forward pass each
print(f"{model_name} on this machine: prompt of {len(prompt)} tokens read in {first_token_s:.2f} s; "
      f"then {per_token_s * 1000:.0f} ms per generated token = {1 / per_token_s:.1f} tokens/s "
      f"(fastest of {REPEATS} runs)")
assert 0 < per_token_s and 0 < first_token_s, "times must be positive"

# %%
thinking_ids = [s.id for s in runs["step by step"]["steps"]]       # the hidden part
answer_ids = [s.id for s in runs["direct"]["steps"]]                # the visible part
n_prompt, n_think, n_answer = len(prompt), len(thinking_ids), len(answer_ids)
print(f"{'':20s} {'tokens':>7s} {'time here':>10s} {'example price per 1M such requests':>35s}")
for label, n, seconds, cost in (
        ("prompt (read once)", n_prompt, first_token_s, price(n_prompt, 0)),   # time: to the 1st token
        ("thinking (hidden)", n_think, n_think * per_token_s, price(0, n_think)),
        ("answer (shown)", n_answer, n_answer * per_token_s, price(0, n_answer))):
    print(f"{label:20s} {n:7d} {seconds:9.2f}s {cost * 1e6:35,.2f}")
with_thinking, without = price(n_prompt, n_think + n_answer), price(n_prompt, n_answer)
print(f"the hidden part is {n_think / max(n_answer, 1):.1f}× the visible answer's tokens: the first "
      f"visible token comes {n_think * per_token_s:.1f} s later, and the request costs "
      + (f"{with_thinking / without:.1f}× what it would without the thinking" if without > 0
         else "nothing either way at these prices"))
last_number = {name: (re.findall(r"\d+", tok.decode(ids)) or ["none"])[-1]
               for name, ids in (("thinking", thinking_ids), ("answer", answer_ids))}
print(f"what was paid for: the last number in the hidden reasoning is {last_number['thinking']}, "
      f"in the direct answer {last_number['answer']} — nothing checks a step of the reasoning")

# %% [markdown]
# This trace is a few dozen tokens; reasoning models write hundreds to tens of thousands before
# answering. The same arithmetic at this machine's decode speed and the example prices (trace
# lengths chosen for illustration; a large model on a GPU is faster per token, and its price is
# what a provider charges):

# %%
TRACE_LENGTHS = [100, 1_000, 10_000]
knob_range("TRACE_LENGTHS", TRACE_LENGTHS, 1, 1_000_000)
REQUESTS = 1_000_000
print(f"{'hidden tokens':>13s} {'× answer':>9s} {'wait here':>10s} {'per request':>12s} "
      f"{f'per {REQUESTS:,} requests':>22s}")
for n in TRACE_LENGTHS:
    cost = price(0, n)
    print(f"{n:13,d} {n / max(n_answer, 1):8.0f}× {n * per_token_s:8,.0f} s {cost:12.4f} "
          f"{cost * REQUESTS:22,.0f}")
assert math.isclose(price(0, 1_000_000), PRICE_OUT), \
    "a million output tokens cost the per-million output price"

# %% [markdown]
# ## Why products hide it, beside the numbers
#
# The reasons the explainer articles give, and the ones providers give, next to what was
# computed above:
#
# - **The text is unstable and can be wrong along the way** (the articles: 推理文本不稳定). It is
#   sampled like any other text (the probabilities listed above) — a draft, not a proof, and
#   nothing checks a step before the next one builds on it.
# - **It misleads about correctness** (容易误导用户对正确性的判断). A long, confident derivation
#   looks like evidence; the numbers above show it is just many more tokens from the same loop.
# - **It leaks the training distribution and the system's policies** (会泄露训练分布和系统策略). A
#   visible trace is ready-made training data for another model (distillation: a smaller model
#   trained on a larger one's reasoning), and it may repeat the hidden system prompt.
# - **Raw thoughts are not the product.** The answer is trained and filtered to be safe to show;
#   the raw reasoning is not, and may contain what the answer must not. OpenAI, introducing o1
#   ("Learning to reason with LLMs", September 2024), said it leaves the chain of thought
#   unfiltered so that it can be monitored, does not show it (also for competitive advantage —
#   distillation again), and shows a model-written summary instead.
# - **Cost and waiting do not go away.** Hiding is a display filter: the hidden tokens were
#   generated — one forward pass each — and are billed as output. The table shows what that means:
#   the hidden part, not the answer, sets both the wait and the bill.
#
# Hiding the chain of thought is a product and safety decision, not a change in what the model
# computes.

# %% [markdown]
# ## Exercises
#
# Write the function, run the cell: `check` prints the first case it gets wrong, or how many it
# passed. Solutions: `solutions/11_thinking_is_tokens.py`.
#
# **1. Hide the thinking.** Return the reply without any `<think>…</think>` block (there may be
# several, or none); keep everything else exactly.

# %%
from exercises import check

def hide_thinking(reply):
    raise NotImplementedError    # your code here

check("hide_thinking", hide_thinking)

# %% [markdown]
# **2. Room for the answer.** A window of `n_ctx` tokens holds the prompt and the thinking: how
# many tokens are left for the answer (never fewer than 0)?

# %%
def answer_room(n_ctx, prompt_tokens, thinking_tokens):
    raise NotImplementedError    # your code here

check("answer_room", answer_room)

# %% [markdown]
# **3. Write the work down.** The toy at the top of this notebook, written by you: return the
# written work of `a + b` (two whole numbers ≥ 0), right to left — one `(digit, carry out)` per
# column, each column adding the carry written in the column before it; a carry out of the last
# column is one more column, `(carry, 0)`. The answer is the digits read back in reverse.

# %%
def column_work(a, b):
    raise NotImplementedError    # your code here

check("column_work", column_work)
