# %% [markdown]
# # 09 · Choosing among options: one forward pass instead of generating an answer
#
# > 在选择题任务中，模型需生成‘答案是 B’等冗余文本才能表达选项，而非直接输出‘B’。……完成一个
# > 30 Token 的答案需 30 次前向计算……更严重的是，因词表包含数万个 Token，模型可能生成不存在的选项
# > （如‘E’），提示词‘只输出 A/B/C/D’仅是软约束，无法根除错误输出。
# >
# > *On a multiple-choice question the model has to generate filler like 答案是 B ("the answer is
# > B") rather than just "B" … a 30-token answer takes 30 forward passes … worse, with tens of
# > thousands of tokens in the vocabulary the model can generate an option that does not exist
# > (such as "E"); "only answer A/B/C/D" in the prompt is a soft constraint that cannot rule it out.*
#
# The explainer articles then credit "decision models" (JEV, Drex) with a 3× speed-up; those are
# not available here and that figure is not checked. What *can* be measured with minillm:
# answering by generation vs scoring the options with `minillm.decoding.options.score_options`, which reads
# the probability of every option from the model directly — forward passes counted, where the
# probability mass outside the options goes, and the hard constraint a prompt cannot give: a
# sampler that may only draw the option letters (`allowed_ids`).
#
# One pass is the cost, not the quality. Measured in section 5 on SmolLM2, single-pass letter
# scoring follows the letter's position, not the content; the one method there that beats chance
# is scoring the option *words* after the bare question, with no letters at all (the "cloze"
# form benchmarks use for small models, two forward passes per question).
#
# It starts with a toy whose logits are set by hand, then runs SmolLM2 (or, without it, the small
# shipped model) on one question, and ends by measuring: 20 easy questions, each asked with its
# options in all four orders, answered four ways — where scoring the option words beats chance
# and scoring the letters is a preference for A.
#
# **Try this:** change `QUESTION`, its options (`LETTERS`, `FULL`) and the right one (`ANSWER`, one
# of `LETTERS`), the `PRESET` used for sampling (a name in `minillm.sampling.PRESETS`), the toy's
# `POSITION_BIAS` (four numbers from −5 to 5), or `N_QUESTIONS` measured at the end (1 to 20), and
# re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import dataclasses
import math

import matplotlib.pyplot as plt
import numpy as np

from minillm.chat.chatml import stop_ids
from minillm.functional import log_softmax, softmax
from minillm import generate
from minillm.decoding.options import score_options
from minillm.sampling import PRESETS, Sampler, categorical
from minillm.kv_cache import KVCache
from minillm.tokenizer.display import render_token
from nbhelpers import CountingModel, chat_prompt, claim, knob_range, load_pretrained

# %% [markdown]
# ## 0. A toy first: four options, logits set by hand
#
# A "model" with an eight-token vocabulary gives logits for the first token of its reply. Each
# option letter's logit is the sum of two parts set by hand: what the model "knows" about the
# option's content (Paris is the capital: +0.9, the others 0) and a **position bias** — a
# preference for a letter whatever stands behind it (here A is favoured). Other tokens ("The",
# "E", a line break) get logits too: generation can start with any of them.

# %%
TOY_VOCAB = ["A", "B", "C", "D", "E", "The", " Paris", "\n"]
TOY_CONTENT = {"London": 0.0, "Paris": 0.9, "Berlin": 0.0, "Madrid": 0.0}   # what the toy "knows"
POSITION_BIAS = [1.0, 0.2, 0.0, 0.3]                                       # a preference for A
knob_range("POSITION_BIAS", POSITION_BIAS, -5, 5)
if len(POSITION_BIAS) != 4:
    raise ValueError(f"POSITION_BIAS needs 4 numbers (one per letter A–D), got {POSITION_BIAS!r}")


def toy_logits(order):
    """[8] logits of the reply's first token when the options are listed in ``order``."""
    letters = [POSITION_BIAS[k] + TOY_CONTENT[city] for k, city in enumerate(order)]   # A–D
    return np.array(letters + [-1.0, 1.8, 0.5, 0.2], dtype=np.float32)             # E, The, Paris, \n


toy_order = ["London", "Paris", "Berlin", "Madrid"]
p_all = softmax(toy_logits(toy_order))                                      # [8] the whole vocabulary
p_letters = softmax(toy_logits(toy_order)[:4])                              # [4] only A–D allowed
toy_pick = "ABCD"[int(np.argmax(p_letters))]
print("whole vocabulary:", {t: round(float(q), 3) for t, q in zip(TOY_VOCAB, p_all)})
print(f"greedy generation starts with {TOY_VOCAB[int(np.argmax(p_all))]!r}; mass on A–D "
      f"{p_all[:4].sum():.2f}, elsewhere {1 - p_all[:4].sum():.2f}")
print(f"only A–D allowed: { {L: round(float(q), 3) for L, q in zip('ABCD', p_letters)} } → {toy_pick} "
      f"= {toy_order['ABCD'.index(toy_pick)]} (right: B = Paris)")

# %% [markdown]
# The constraint makes the answer a letter; whether it is the *right* letter depends on the
# logits. Ask the same toy question with the options in all four orders (rotations), the right
# answer moving from B to A, D and C: a model that only knew the content would follow it; the
# position bias pulls the answer towards A.

# %%
toy_rows = []
for r in range(4):
    order = toy_order[r:] + toy_order[:r]                                   # rotate the options
    pick = int(np.argmax(toy_logits(order)[:4]))
    toy_rows.append((order, "ABCD"[pick], order[pick] == "Paris"))
    print(f"rotation {r}: {' '.join(f'{L}.{c}' for L, c in zip('ABCD', order))} → {'ABCD'[pick]} "
          f"= {order[pick]} {'right' if order[pick] == 'Paris' else 'wrong'}")
toy_right = sum(ok for _, _, ok in toy_rows)
print(f"right in {toy_right} of 4 orders" + (": the position bias wins where Paris stands at a letter "
      "the toy dislikes — with one order only, bias and knowledge cannot be told apart" if toy_right < 4
      else ": the content outweighs the position bias in every order"))

# %% [markdown]
# ## The real model, one question

# %%
model, tok, model_name = load_pretrained()
counter = CountingModel(model)

QUESTION = ("What is the capital of France?\nA. London\nB. Paris\nC. Berlin\nD. Madrid\n"
            "Answer with A, B, C or D.")
LETTERS = ["A", "B", "C", "D"]
FULL = ["A. London", "B. Paris", "C. Berlin", "D. Madrid"]
ANSWER = "B"                                                         # the right letter
if ANSWER not in LETTERS or len(FULL) != len(LETTERS):
    raise ValueError(f"ANSWER must be one of LETTERS {LETTERS} and FULL needs one option per letter; "
                     f"got ANSWER = {ANSWER!r}, {len(FULL)} options for {len(LETTERS)} letters")
RIGHT = FULL[LETTERS.index(ANSWER)]
prompt = chat_prompt(tok, QUESTION)
print(f"prompt: {len(prompt)} tokens")
if model_name != "SmolLM2-135M-Instruct":
    print("(Answering the quiz needs SmolLM2: python -m minillm download smollm2. The small fallback "
          "model knows no geography and has no chat format; the counts of forward passes and the "
          "allowed_ids constraint below hold for any model.)")

# %% [markdown]
# ## 1. Answer by generating text
#
# The usual way: let the model write its reply, greedily, one forward pass per token, and read
# the letter out of the text afterwards.

# %%
REPLY_CAP = 12                                                       # tokens the reply may have
counter.reset()
steps = list(generate(counter, prompt, max_new_tokens=REPLY_CAP, temperature=0, stop_ids=stop_ids(tok),
                      tokenizer=tok))
reply = "".join(s.text for s in steps)
gen_calls = counter.calls
capped = len(steps) == REPLY_CAP                                     # stopped by the cap, not by itself
print(f"reply: {reply!r}")
print(f"{gen_calls} forward passes: 1 over the {len(prompt)}-token prompt (which gives the first "
      f"token), then 1 per further token — " + (f"stopped by the {REPLY_CAP}-token cap, the reply "
      f"unfinished" if capped else "until the end-of-turn token"))
first_token, first_line = (steps[0].text if steps else ""), reply.split("\n")[0]
right_words = RIGHT.split(". ", 1)[-1]                                # "Paris"
print(f"section 5 scores a generated reply by its first token only: here {first_token!r}, "
      + ("the right letter" if first_token.strip() == ANSWER else f"not the right letter {ANSWER!r}")
      + (f"; that misses the words after it: the first line {first_line!r} names the right option, "
         f"{right_words!r}, under a letter of the reply's own — the model relabelled the list"
         if right_words in first_line and first_token.strip() != ANSWER else ""))

# %% [markdown]
# ## 2. Score the options: one forward pass
#
# `score_options` runs the prompt once and reads log p(option | prompt) for every option;
# normalised over the options they sum to 1, and the answer is by construction one of them.
# Single-letter options need exactly one forward pass (the prompt's last position scores all four
# letters at once); multi-token options need one more, batched over the options.
# That makes letter scoring the cheapest answer, not a good one: with a model this small its
# letters mostly follow their position (section 5), and what beats chance there is scoring the
# option words after the bare question (two passes, the cloze form).

# %%
counter.reset()
letters = score_options(counter, tok, prompt, LETTERS)
print(f"letters   : {dict(zip(LETTERS, np.round(letters.probs, 3).tolist()))} → {letters.best!r}; "
      f"{letters.forward_passes} forward pass (counted: {counter.calls})")
counter.reset()
full = score_options(counter, tok, prompt, FULL)
print(f"full text : {dict(zip(FULL, np.round(full.probs, 3).tolist()))} → {full.best!r}; "
      f"{full.forward_passes} forward passes (counted: {counter.calls}); generating the longest "
      f"option would take {full.generation_passes}")
for name, scores, options in (("letters", letters, LETTERS), ("full text", full, FULL)):
    expected = 1 if all(len(tok.encode(o)) == 1 for o in options) else 2   # one-token options: 1 pass
    assert scores.forward_passes == expected, \
        f"{name}: expected {expected} forward pass(es) for {options}, counted {scores.forward_passes}"
    assert scores.best in options, f"{name}: the answer {scores.best!r} should be one of {options}"

# %%
for name, scores in (("letters", letters), ("full text", full)):
    picked = FULL[list(scores.options).index(scores.best)]
    print(f"{name:9s} picks {picked!r}: {'right' if picked == RIGHT else f'wrong (right: {RIGHT!r})'}")

# %% [markdown]
# The letter scores and the full-text scores (which let the model judge the option's words, not
# only its letter) can pick differently — both printed above, each marked right or wrong. One
# question shows the mechanism: one or two forward passes, and an answer that is always one of
# A–D. Whether the answers are *right*, and how much the letter's position decides, needs many
# questions: section 5.
#
# ## 3. Where generation can go: the whole vocabulary
#
# The first token of the generated reply is drawn from a distribution over the *entire*
# vocabulary. How much of its mass lies on the four letters, and how much elsewhere?

# %%
first = softmax(model(np.array(prompt), last_only=True)[-1])         # [V] the reply's first token
letter_ids = {L: tok.encode(L) for L in LETTERS}
assert all(len(v) == 1 for v in letter_ids.values()), \
    f"this section reads each letter's probability at one position, so every letter must be one token; "\
    f"got {letter_ids}: choose LETTERS that are single tokens"
on_letters = sum(first[v[0]] for v in letter_ids.values())
top = np.argsort(-first)[:10]
print(f"mass on {'/'.join(LETTERS)}: {on_letters:.4f}; on the other {len(first) - len(LETTERS):,} tokens: "
      f"{1 - on_letters:.4f}")
print(f"p('E') = {first[tok.encode('E')[0]]:.2e}   (nonzero: it can be generated)")
assert on_letters < 1 and first[tok.encode("E")[0]] > 0, \
    f"a softmax gives every token some probability: expected mass on the letters < 1 and p('E') > 0, "\
    f"got {on_letters} and {first[tok.encode('E')[0]]}"
print("ten most likely first tokens:", [(render_token(tok.token_bytes(int(i))), round(float(first[i]), 4)) for i in top])

# %% [markdown]
# Sampling with the 'chat' preset at that position, 10,000 times: how often is the first token
# not one of the letters? (With greedy decoding it is whatever the argmax is — here printed as
# the reply above.)

# %%
PRESET = "chat"                                                      # a name in PRESETS
chat = PRESETS[PRESET]
probs = chat.probs(model(np.array(prompt), last_only=True)[-1])      # [V] after T, top-k, top-p
pool = np.flatnonzero(probs)                                         # the few tokens left to draw
draws = pool[categorical(np.tile(probs[pool], (10_000, 1)), np.random.default_rng(0))]
letter_set = {v[0] for v in letter_ids.values()}
outside = np.mean([d not in letter_set for d in draws])
print(f"'{PRESET}' preset: {outside:.1%} of 10,000 first tokens are not {'/'.join(LETTERS)}; "
      f"distinct first tokens drawn: {len(set(draws.tolist()))}")
if model_name == "SmolLM2-135M-Instruct":
    claim(outside > 0.01, "SmolLM2 starts some sampled replies (over 1 %) with something other than a letter",
          "not for this QUESTION and PRESET")

fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 3.8))
a1.bar(np.arange(len(LETTERS)) - 0.2, letters.probs, width=0.4, label="letters")
a1.bar(np.arange(len(LETTERS)) + 0.2, full.probs, width=0.4, label="full option text")
a1.set_xticks(range(len(LETTERS)), LETTERS)
a1.set_ylabel(f"P(option), normalised over the {len(LETTERS)} options")
a1.set_title(f"score_options: {letters.forward_passes} / {full.forward_passes} forward pass(es)")
a1.legend()
colors = ["C2" if i in letter_set else "C3" for i in top]
a2.bar(range(10), first[top], color=colors)
a2.set_xticks(range(10), [repr(render_token(tok.token_bytes(int(i)))) for i in top], rotation=60, fontsize=8)
a2.set_ylabel("probability")
a2.set_title("generation: first token over the whole vocabulary\n(green = an option letter, red = anything else)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 4. The hard constraint: `allowed_ids`
#
# "Only answer A/B/C/D" in the prompt changes the probabilities; it cannot make the other tokens
# impossible. A sampler can: `Sampler(allowed_ids=...)` sets every other token's logit to −∞
# before anything else (`minillm/sampling/bias.py`, vLLM's `allowed_token_ids`), so whatever the
# temperature or seed, the first token is a letter. The same 'chat' preset, constrained:

# %%
letter_list = sorted(letter_set)
constrained = dataclasses.replace(chat, allowed_ids=tuple(letter_list))
last_logits = model(np.array(prompt), last_only=True)[-1]             # [V]
c_probs = constrained.probs(last_logits)                              # [V] zero off the letters
c_pool = np.flatnonzero(c_probs)
c_draws = c_pool[categorical(np.tile(c_probs[c_pool], (10_000, 1)), np.random.default_rng(0))]
c_outside = np.mean([d not in letter_set for d in c_draws])
print(f"constrained '{PRESET}' preset: {c_outside:.1%} of 10,000 first tokens are not {'/'.join(LETTERS)}")
reply_ids = [s.id for s in generate(model, prompt, 1, sampler=dataclasses.replace(constrained, temperature=0))]
forced = tok.decode(reply_ids)
forced_option = FULL[LETTERS.index(forced)] if forced in LETTERS else None
print(f"greedy under the constraint answers: {forced} = {forced_option!r} — "
      + ("right" if forced_option == RIGHT else f"a letter, but the wrong one (right: {RIGHT!r})"))
assert c_outside == 0 and set(np.flatnonzero(c_probs)) <= letter_set, \
    f"allowed_ids should leave probability only on the letters {sorted(letter_set)}; "\
    f"{c_outside:.1%} of draws and ids {sorted(set(np.flatnonzero(c_probs)) - letter_set)} are outside"

# With T = 1 and no other filter, the constrained distribution IS score_options' letter scores:
plain = Sampler(allowed_ids=tuple(letter_list)).probs(last_logits)    # [V]
by_letter = np.array([plain[letter_ids[L][0]] for L in LETTERS])
print("allowed_ids at T = 1:", np.round(by_letter, 4), "  score_options:", np.round(letters.probs, 4))
assert np.allclose(by_letter, letters.probs, atol=1e-5), \
    f"allowed_ids at T = 1 should equal score_options' letter probabilities (±1e-5): {by_letter} vs "\
    f"{letters.probs}; re-run the scoring cell above if you changed LETTERS or QUESTION since"

# %% [markdown]
# So the constraint and the scoring are the same computation seen from two sides: the
# probabilities of the allowed continuations, renormalised among themselves. **The constraint
# guarantees the form, not the truth**: the answer is always a letter, and it is the letter the
# model already preferred — right or wrong, as printed above.
#
# ## The count
#
# | | forward passes | answer always an option? |
# |---|---|---|
# | generate the reply | one per generated token (printed above) | no — any of the vocabulary's tokens can come out |
# | `score_options`, letters | 1 | yes, by construction |
# | `score_options`, full option text | 2 (prompt, then all options batched) | yes |
#
# The articles' "30 forward passes for a 30-token answer" is exactly the generation row: one pass
# per token. Scoring replaces that with one pass (two for multi-token options), whatever the
# answer length, and restricts the output space to the options — which is what the articles'
# "decision models" do with a dedicated output head. Here no new model is needed: any language
# model can be asked for the probabilities of a fixed set of continuations. How many passes
# generation takes is the length of the reply — which the model decides, or the cap cuts:

# %%
print(f"generation: {gen_calls} forward passes for a reply of {len(steps)} tokens"
      + (f" — cut by the {REPLY_CAP}-token cap, so the ratio below is set by the cap, not by the "
         f"model: an unfinished reply takes more" if capped else
         ", ended by the model (its last pass gives the end-of-turn token, which is not part of the reply)") + "; "
      f"scoring: {letters.forward_passes} (letters), {full.forward_passes} (full text) → "
      f"{gen_calls / letters.forward_passes:.0f}× {'at least ' if capped else ''}the passes of letter scoring")

# %% [markdown]
# ## 5. Measured: 20 questions, every order of the options
#
# One question is an anecdote. Below, `N_QUESTIONS` easy questions — facts a child knows, sums
# below 20, common sense — each asked four times with its options rotated (the right answer at
# A, B, C and D in turn), answered four ways:
# - **letters**: the most probable of the four letters at the reply's first position — also what
#   greedy decoding under `allowed_ids` answers (section 4);
# - **full text**: the most probable option text ("B. Paris"), summed over its tokens, after the
#   same prompt;
# - **option words**: no letters and no list at all — the question alone as plain text
#   ("Question: … Answer:"), and the most probable continuation among the four option words
#   (" Paris"), Σ log p over their tokens. This is how benchmarks score small models (the "cloze"
#   form): it asks what the model knows about the content, with no letter to map it to, and it
#   cannot depend on the order (one answer per question, the same in all four orders);
# - **generation**: the first token greedy decoding writes — right only if it is the right letter
#   (a reply that opens with "The" answers nothing yet). It reads nothing after that token: a reply
#   that rewrites the list under its own letters, as the one in section 1 does, is scored by its
#   first letter alone, whatever option words follow it.
#
# Cost: the four orders of a question have the same token count, so they run as one batch of 4
# rows; their option texts run as one batch of 16 rows on copies of that cache; the plain
# question and its four option words take two passes more — four forward passes per question.

# %%
N_QUESTIONS = 20
knob_range("N_QUESTIONS", N_QUESTIONS, 1, 20)
QUIZ = [("What is the capital of France?", "Paris", ["London", "Berlin", "Madrid"]),
        ("What is the capital of Japan?", "Tokyo", ["Beijing", "Seoul", "Bangkok"]),
        ("How many legs does a spider have?", "Eight", ["Six", "Four", "Ten"]),
        ("What do bees make?", "Honey", ["Milk", "Silk", "Wax paper"]),
        ("What is frozen water called?", "Ice", ["Steam", "Sand", "Glass"]),
        ("How many days are in a week?", "Seven", ["Five", "Ten", "Twelve"]),
        ("What colour is the sky on a clear day?", "Blue", ["Green", "Red", "Purple"]),
        ("What is 2 + 2?", "4", ["3", "5", "22"]),
        ("What is 3 + 5?", "8", ["6", "7", "9"]),
        ("What is 10 - 4?", "6", ["14", "4", "5"]),
        ("What is the opposite of hot?", "Cold", ["Warm", "Loud", "Tall"]),
        ("Which animal barks?", "Dog", ["Cat", "Fish", "Cow"]),
        ("What do we use to see?", "Eyes", ["Ears", "Feet", "Hands"]),
        ("Which season comes after winter?", "Spring", ["Autumn", "Summer", "Night"]),
        ("What is the opposite of up?", "Down", ["Left", "Fast", "Big"]),
        ("Which is a fruit?", "Apple", ["Chair", "Car", "Shoe"]),
        ("What do cows drink?", "Water", ["Milk", "Oil", "Juice"]),
        ("Who wrote Romeo and Juliet?", "William Shakespeare", ["Charles Dickens", "Mark Twain", "Jane Austen"]),
        ("What is the largest planet in the Solar System?", "Jupiter", ["Mercury", "Mars", "Venus"]),
        ("What is 5 × 2?", "10", ["7", "3", "25"])]


def ask(question, options):
    """The quiz prompt with ``options`` (4 texts) lettered A–D, and the four option lines."""
    lines = [f"{L}. {o}" for L, o in zip("ABCD", options)]
    return question + "\n" + "\n".join(lines) + "\nAnswer with A, B, C or D.", lines


quiz_letter_ids = [tok.encode(L)[0] for L in "ABCD"]


def answer_three_ways(prompts, option_rows):
    """For prompts of one length (a batch) and each prompt's n option texts (token lists) ->
    per prompt: (letter logits [4], Σ log p of each text [n], the first generated token). 2 passes."""
    B, P = len(prompts), len(prompts[0])
    n = len(option_rows[0])                                                 # option texts per prompt
    rows = [row for rows_b in option_rows for row in rows_b]                # B·n option texts
    longest = max(map(len, rows))
    cache = KVCache(model.config, batch_size=B, capacity=P)
    first = model(np.array(prompts), cache=cache, last_only=True)[:, -1]   # [B, V]
    options = KVCache(model.config, batch_size=n * B, capacity=P + longest)
    options.k[:, :, :, :P] = np.repeat(cache.k, n, axis=1)                # [L, nB, K, P, D] copies
    options.v[:, :, :, :P] = np.repeat(cache.v, n, axis=1)
    options.advance(P)
    feed = np.zeros((n * B, longest), dtype=np.int64)                      # [nB, Lmax] right-padded
    for i, row in enumerate(rows):
        feed[i, :len(row)] = row
    follow = log_softmax(model(feed, cache=options))                       # [nB, Lmax, V]
    logp_first = log_softmax(first)                                        # [B, V]
    out = []
    for b in range(B):
        full_logp = [float(logp_first[b, row[0]] + sum(follow[n * b + k, t, row[t + 1]]
                                                       for t in range(len(row) - 1)))
                     for k, row in enumerate(rows[n * b:n * b + n])]        # Σ log p of each text
        out.append((first[b, quiz_letter_ids], full_logp, render_token(tok.token_bytes(int(np.argmax(first[b]))))))
    return out


records, passes = [], 0                        # one record per (question, order)
for question, right, wrong in QUIZ[:N_QUESTIONS]:
    base = [wrong[0], right, wrong[1], wrong[2]]                        # order 0: right at B
    orders = [base[r:] + base[:r] for r in range(4)]                    # right at B, A, D, C
    asked = [ask(question, o) for o in orders]
    prompts = [chat_prompt(tok, text) for text, _ in asked]
    option_rows = [[tok.encode(line) for line in lines] for _, lines in asked]   # "B. Paris" …
    if len({len(p) for p in prompts}) == 1:                             # one batch of 4
        answers = answer_three_ways(prompts, option_rows)
        passes += 2
    else:                                                               # lengths differ: one by one
        answers = [answer_three_ways([p], [o])[0] for p, o in zip(prompts, option_rows)]
        passes += 8
    plain_question = tok.encode(f"Question: {question}\nAnswer:")      # no list, no letters
    _, word_logp, _ = answer_three_ways([plain_question], [[tok.encode(" " + o) for o in base]])[0]
    passes += 2
    word_pick = base[int(np.argmax(word_logp))]                         # the same in every order
    for r, (letter_logits, full_logp, generated) in enumerate(answers):
        records.append(dict(question=question, rotation=r, truth="ABCD"[orders[r].index(right)],
                            letters="ABCD"[int(np.argmax(letter_logits))],
                            full="ABCD"[int(np.argmax(full_logp))],
                            words="ABCD"[orders[r].index(word_pick)],
                            generation=generated if generated in ("A", "B", "C", "D") else "other"))
print(f"{len(records)} answers per method ({N_QUESTIONS} questions × 4 orders), "
      f"{passes} forward passes in all")

# %%
METHODS = ("letters", "full text", "option words", "generation")
key = {"letters": "letters", "full text": "full", "option words": "words", "generation": "generation"}
accuracy = {m: np.mean([r[key[m]] == r["truth"] for r in records]) for m in METHODS}
pick_share = {m: [np.mean([r[key[m]] == L for r in records]) for L in "ABCD"] for m in METHODS}
by_question = {}
for r in records:
    by_question.setdefault(r["question"], []).append(r)
print(f"{'':12s} {'right':>6s}   picks A / B / C / D (each right 25 % of the time)   not a letter")
for m in METHODS:
    shares = " / ".join(f"{x:4.0%}" for x in pick_share[m])
    print(f"{m:12s} {accuracy[m]:6.0%}   {shares:>41s}   {1 - sum(pick_share[m]):12.0%}")
stable = {m: np.mean([len({qs[i][key[m]] == qs[i]['truth'] for i in range(4)}) == 1
                      for qs in by_question.values()]) for m in METHODS}
print("questions answered alike (all right or all wrong) in all 4 orders:",
      {m: f"{stable[m]:.0%}" for m in METHODS})


def chance_p_value(right, n, p=0.25):
    """One-sided binomial p-value: the chance of at least ``right`` of ``n`` by guessing."""
    return sum(math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(right, n + 1))


words_right = sum(qs[0]["words"] == qs[0]["truth"] for qs in by_question.values())   # one per question
words_p = chance_p_value(words_right, len(by_question))
share_A = pick_share["letters"][0]
print(f"option words, one answer per question: {words_right} of {len(by_question)} right "
      f"(guessing: {len(by_question) / 4:g} expected; at least {words_right} by chance: p = {words_p:.2g})")
print(f"letter scoring answers A in {share_A:.0%} of the {len(records)} answers; A is right in 25 %")
if model_name == "SmolLM2-135M-Instruct" and N_QUESTIONS == 20:   # the paragraph below, checked
    claim(words_p < 0.01, f"scoring the option words beats chance: {words_right} of {len(by_question)} "
          f"(p = {words_p:.2g} < 0.01, one-sided binomial)", "not on this QUIZ")
    claim(share_A > 0.5 and accuracy["letters"] < 0.4,
          f"letter scoring is a position bias: it answers A in {share_A:.0%} of the answers, and is right in "
          f"{accuracy['letters']:.0%} — near the 25 % that always answering A would get",
          "not on this QUIZ")
claim(accuracy["letters"] < 1 and sum(pick_share["letters"]) == 1,
      f"under the constraint every answer is a letter and {1 - accuracy['letters']:.0%} are wrong: "
      f"the form is guaranteed, not the truth", "every constrained answer was right here")

fig, (b1, b2) = plt.subplots(1, 2, figsize=(12, 3.8))
for i, m in enumerate(METHODS):
    b1.bar(np.arange(4) + 0.2 * (i - 1.5), pick_share[m], width=0.2, label=m)
b1.axhline(0.25, color="grey", ls=":", label="each position's share of right answers")
b1.set_xticks(range(4), list("ABCD"))
b1.set_ylabel("share of the answers")
b1.set_title(f"Which letter is picked ({len(records)} answers)")
b1.legend(fontsize=8)
b2.bar(METHODS, [accuracy[m] for m in METHODS], color=["C0", "C1", "C2", "C3"])
b2.axhline(0.25, color="grey", ls=":", label="chance")
b2.set_ylim(0, 1)
b2.set_ylabel("share right")
b2.set_title(f"Right answers, {model_name}")
b2.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# **Reading the measurement** (with SmolLM2; the two claims above check it). The model knows
# many of these answers: asked for the option words after the bare question, it picks the right
# one far more often than guessing would (the count and its chance probability are printed). But
# asked to answer with a *letter*, it does not map what it knows to the letters: letter scoring
# answers A in the share of the answers printed above (in the committed run, all of them:
# 100 % of 80) whatever stands behind it, so it is right about as often as always
# saying A — a quarter of the time, by construction of the rotations. That is what the position
# bias is: letter A's share of the answers, far above the 25 % a model following the content
# would give it. Rotating the options is what exposes it: on one order, bias and knowledge look
# alike (the toy). Full-text scoring begins each option with its letter and reads the option
# after the same listed prompt, so the same preference carries over; the first generated token is
# letter scoring over the whole vocabulary and also loses whenever the reply opens with a word
# (and it is read alone: a reply that relabels the list, like section 1's, counts by its letter).
# And the constraint (`allowed_ids`, the letters column) makes every answer a letter without
# making one more of them right: **the constraint guarantees the form, not the truth.** For a
# model this small, ask for the content, not the letter.

# %% [markdown]
# ## Exercises
#
# Write the function, run the cell: `check` prints the first case it gets wrong, or how many it
# passed. Solutions: `solutions/09_options.py`.
#
# **1. The allowed set.** Return the logits with every id not in `allowed` set to -inf (the
# others unchanged).

# %%
from exercises import check

def allow_only(logits, allowed):
    raise NotImplementedError    # your code here

check("allow_only", allow_only)

# %% [markdown]
# **2. Option probabilities.** The probability of each option id when only the options are
# allowed — they must sum to 1.

# %%
def option_probs(logits, option_ids):
    raise NotImplementedError    # your code here

check("option_probs", option_probs)

# %% [markdown]
# **3. Score whole options.** `next_logprobs(ids)` is a model: it returns the [V] log-probabilities
# of the next token after `ids`. Each option is a list of token ids, possibly several: its score
# is Σ_k log p(option[k] | prompt + option[:k]) — each token predicted from the prompt *and* the
# option's tokens before it. Return the options' probabilities, normalised over the options
# (what `score_options` computes, here one token at a time).

# %%
def score_full_options(next_logprobs, prompt, options):
    raise NotImplementedError    # your code here

check("score_full_options", score_full_options)
