# %% [markdown]
# # 17 · Structured output: a mask over the vocabulary from a pattern's automaton
#
# Ask a small model for JSON and it may answer with prose, half an object, or an object followed
# by a sentence. A prompt cannot forbid that (notebook 09 made the same point for quiz letters);
# a mask can. The model still proposes every token; at each step the tokens that would take the
# text out of a pattern are set to −inf before the sampler runs. Here: a tiny regular expression
# turned into an NFA and a DFA by minillm's own compiler, drawn and walked by hand; why the DFA
# must read bytes, not characters; the vocabulary index (for each state, the tokens it allows and
# where each leads) on a toy vocabulary, then on a real one during a generation; and SmolLM2
# asked for JSON on the same prompts with and without a `JsonSchema` constraint.
#
# **Try this:** change `PATTERN` (a regex of 1–24 characters whose DFA has at most 12 states) and
# `WALK` (a text of 0–24 characters walked through it), the toy vocabulary `TOY_VOCAB` (1–16
# tokens of bytes), `REAL_PATTERN` (the regex of the traced generation) and `N_PROMPTS` (1–4,
# the prompts asked for JSON), and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import json
import math
import time

import matplotlib.pyplot as plt
import numpy as np

from minillm import JsonSchema, Regex, generate
from minillm.chat.chatml import stop_ids
from minillm.decoding.constraints.automaton import build_dfa, build_nfa, closure
from minillm.decoding.constraints.byte_dfa import build_byte_dfa
from minillm.decoding.constraints.guide import Guide
from minillm.decoding.constraints.index import fast_index, token_bytes_of, walk_index
from minillm.decoding.constraints.regex import parse
from minillm.tokenizer import Tokenizer
from nbhelpers import chat_prompt, claim, find_smollm2, knob, load_pretrained

# %% [markdown]
# ## 1. A tiny pattern: its NFA and its DFA
#
# `(ab|c)*d`: any number of "ab" or "c", then one "d". `parse` turns the text into a tree,
# `build_nfa` into a Thompson NFA (each piece a small fragment joined by ε-edges that read
# nothing), `build_dfa` into a DFA by subset construction: a DFA state is the set of NFA states
# the text so far could be in, so one state and one character give exactly one next state.

# %%
PATTERN, WALK = "(ab|c)*d", "cabd"
knob("PATTERN", PATTERN, lambda p: isinstance(p, str) and 1 <= len(p) <= 24
     and len(build_dfa(build_nfa(parse(p))).edges) <= 12, "a regex of 1 to 24 characters whose DFA has at most 12 states")
knob("WALK", WALK, lambda w: isinstance(w, str) and len(w) <= 24, "a text of 0 to 24 characters")
tree = parse(PATTERN)
nfa = build_nfa(tree)
dfa = build_dfa(nfa)
n_eps = sum(len(e) for e in nfa.epsilon)
print(f"tree: {tree}")
print(f"NFA: {len(nfa.epsilon)} states, {n_eps} ε-edges, {sum(len(e) for e in nfa.edges)} character edges")
print(f"DFA: {len(dfa.edges)} states, start {dfa.start}, accepting {sorted(dfa.accepting)}")


def label(lo, hi):
    """An interval of code points as a short label: 'a', 'a-z', or U+ codes."""
    show = lambda c: chr(c) if 33 <= c < 127 else f"U+{c:04X}"
    return show(lo) if lo == hi else f"{show(lo)}-{show(hi)}"


for state, edges in enumerate(dfa.edges):
    mark = " (accepting)" if state in dfa.accepting else ""
    print(f"  state {state}{mark}: " + (", ".join(f"{label(lo, hi)} -> {t}" for lo, hi, t in edges) or "no edge"))

# %% [markdown]
# Drawn: states on a circle (gold the start, a ring where the text may stop), one arrow per
# edge with what it reads — ε for the NFA's edges that read nothing. The NFA is the pattern
# written as a machine, piece by piece; the DFA is what the subset construction made of it.

# %%
def byte_label(lo, hi):
    """An interval of bytes: printable ASCII as itself, other bytes in hex ('E6', '80-BF')."""
    show = lambda b: chr(b) if 33 <= b < 127 else f"{b:02X}"
    return show(lo) if lo == hi else f"{show(lo)}-{show(hi)}"


def dfa_arrows(edges, name=label):
    """A DFA's [(lo, hi, target)] per state -> [(label, target)], one arrow per target."""
    arrows = []
    for out in edges:
        by_target = {}
        for lo, hi, t in out:
            by_target.setdefault(t, []).append(name(lo, hi))
        arrows.append([(",".join(names), t) for t, names in by_target.items()])
    return arrows


def nfa_arrows(nfa):
    """The NFA's character edges and ε-edges -> [(label, target)] per state."""
    return [[(",".join(label(lo, hi) for lo, hi in ranges), t) for ranges, t in nfa.edges[s]]
            + [("ε", t) for t in nfa.epsilon[s]] for s in range(len(nfa.epsilon))]


def draw_automaton(arrows, accepting, start, title, ax):
    n = len(arrows)
    pos = [(math.cos(2 * math.pi * i / n), math.sin(2 * math.pi * i / n)) for i in range(n)]
    for s, out in enumerate(arrows):
        for text, t in out:
            (x0, y0), (x1, y1) = pos[s], pos[t]
            if s == t:                                      # a self-loop: a small circle outside
                ax.add_patch(plt.Circle((1.2 * x0, 1.2 * y0), 0.1, fill=False, color="grey"))
                ax.text(1.42 * x0, 1.42 * y0, text, ha="center", va="center", fontsize=9)
                continue
            ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                        arrowprops=dict(arrowstyle="->", color="grey", shrinkA=12, shrinkB=12,
                                        connectionstyle="arc3,rad=0.15"))
            ax.text((x0 + x1) / 2 + 0.1 * (y1 - y0), (y0 + y1) / 2 - 0.1 * (x1 - x0), text,
                    ha="center", va="center", fontsize=9, color="grey" if text == "ε" else "darkblue")
    for s, (x, y) in enumerate(pos):
        ax.add_patch(plt.Circle((x, y), 0.08, color="gold" if s == start else "lightblue"))
        if s in accepting:
            ax.add_patch(plt.Circle((x, y), 0.11, fill=False, color="black"))
        ax.text(x, y, str(s), ha="center", va="center", fontsize=8)
    ax.set_xlim(-1.6, 1.6)
    ax.set_ylim(-1.6, 1.6)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title)


fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 5.5))
draw_automaton(nfa_arrows(nfa), {nfa.accept}, nfa.start, f"Thompson NFA of {PATTERN}: {len(nfa.epsilon)} states", a1)
draw_automaton(dfa_arrows(dfa.edges), dfa.accepting, dfa.start, f"its DFA: {len(dfa.edges)} states", a2)
plt.tight_layout()
plt.show()

# %% [markdown]
# The subset construction by hand, on `WALK`: start from the ε-closure of the NFA's start (every
# state reachable reading nothing); for each character keep the states an edge reading it leads
# to, and close again. The text matches when the last set holds the NFA's accepting state. Each
# set is one DFA state: the DFA has computed these sets once, ahead of time.

# %%
states = closure(nfa, {nfa.start})
print(f"start: NFA states {sorted(states)}")
for ch in WALK:
    states = closure(nfa, {t for s in states for ranges, t in nfa.edges[s]
                           if any(lo <= ord(ch) <= hi for lo, hi in ranges)})
    print(f"  {ch!r} -> NFA states {sorted(states) if states else 'none: the text left the pattern'}")
    if not states:
        break
print(f"the NFA's accepting state {nfa.accept} is {'in' if nfa.accept in states else 'not in'} the last set")
assert (nfa.accept in states) == dfa.fullmatch(WALK), "the sets walked by hand must agree with the DFA"

# %% [markdown]
# Walked by hand: one character, one lookup. The text matches when the walk never falls off the
# automaton and ends in an accepting state; a *prefix* of a match is any text whose walk has not
# fallen off — the property the mask needs.

# %%
state = dfa.start
for ch in WALK:
    nxt = dfa.step(state, ch)
    print(f"  {state} --{ch!r}--> {nxt if nxt is not None else 'no edge: the text left the pattern'}")
    if nxt is None:
        break
    state = nxt
matched = dfa.fullmatch(WALK)
print(f"{WALK!r}: {'a full match' if matched else 'not a full match'}")
assert matched == bool(__import__("re").fullmatch(PATTERN, WALK)), \
    "the DFA must agree with Python's re on a full match (a pattern outside the subset is refused by parse)"
_ = claim(matched, f"{WALK!r} matches {PATTERN!r}")

# %% [markdown]
# ## 2. Why bytes: a token may end inside a character
#
# A tokenizer's pieces are bytes, and a byte-level BPE (GPT-2's, below) can cut a CJK
# character, three bytes in UTF-8, between two tokens. A DFA over characters cannot say whether
# such a token is allowed: half a character is not a character. So minillm rewrites the DFA over
# bytes (`build_byte_dfa`: each character range becomes the byte sequences that encode it), keeps
# only the states from which a match can still be reached, and minimises it.

# %%
gpt2 = Tokenizer.load("gpt2")
zh = "海水"
ids = gpt2.encode(zh)
pieces = [token_bytes_of(gpt2)[i] for i in ids]                                  # each token's bytes
print(f"{zh!r} = {zh.encode('utf-8').hex(' ')} (UTF-8), GPT-2 tokens {ids}:")
for i, b in zip(ids, pieces):
    print(f"  id {i:5}: bytes {b.hex(' '):9} -> {b.decode('utf-8', errors='replace')!r}")
splits = sum(1 for b in pieces if b.decode("utf-8", errors="replace") != b.decode("utf-8", errors="ignore"))
claim(splits > 0, f"{splits} of GPT-2's {len(ids)} tokens for {zh} end or start inside a character")
zh_dfa = build_byte_dfa(build_dfa(build_nfa(parse("海+水"))))
walk = zh_dfa.start
for i, b in zip(ids, pieces):
    walk = zh_dfa.walk(walk, b)
    print(f"  after id {i}: byte-DFA state {walk} ({'dead' if walk < 0 else 'live'})")
assert walk >= 0 and zh_dfa.accepting[walk], "the byte DFA of 海+水 must accept the bytes of 海水, token by token"
print(f"the byte DFA of '海+水' has {zh_dfa.n_states} states; its character DFA "
      f"{len(build_dfa(build_nfa(parse('海+水'))).edges)}")

# %% [markdown]
# The byte DFA of section 1's pattern, minimised: states that behave alike merge (here the
# states before "ab" or after "c" or "ab" are one), so it can have fewer states than the
# character DFA — or more, as 海+水 above shows: each multi-byte character adds the states
# between its bytes.

# %%
bdfa = build_byte_dfa(dfa)
byte_edges = []
for s in range(bdfa.n_states):
    row, out = bdfa.table[s], []
    for b in range(256):                             # runs of equal targets as intervals
        t = int(row[b])
        if t >= 0 and out and out[-1][2] == t and out[-1][1] == b - 1:
            out[-1] = (out[-1][0], b, t)
        elif t >= 0:
            out.append((b, b, t))
    byte_edges.append(out)
print(f"character DFA {len(dfa.edges)} states -> byte DFA {bdfa.n_states} states")
fig, ax = plt.subplots(figsize=(5, 5))
draw_automaton(dfa_arrows(byte_edges, byte_label), {s for s in range(bdfa.n_states) if bdfa.accepting[s]}, bdfa.start,
               f"the byte DFA of {PATTERN}, minimised", ax)
plt.show()
assert bdfa.fullmatch(WALK.encode("utf-8")) == matched, "the byte DFA must accept what the character DFA accepts"

# %% [markdown]
# ## 3. The vocabulary index on a toy vocabulary
#
# For each state s of the byte DFA and each token t: walk t's bytes from s. If the walk never
# dies, t is allowed in s and leads to the state where it ends (Willard & Louf, 2023). That is
# `walk_index`, the definition; `fast_index` does the same walk for all tokens at once, one byte
# column at a time, and must agree. The end-of-text token (here the last id, with no bytes) is
# added only in accepting states.

# %%
TOY_VOCAB = [b"a", b"b", b"ab", b"c", b"cab", b"d", b"bd", b"x"]
knob("TOY_VOCAB", TOY_VOCAB, lambda v: 1 <= len(v) <= 16 and all(isinstance(b, bytes) and b for b in v),
     "a list of 1 to 16 non-empty bytes")
slow = walk_index(bdfa, TOY_VOCAB)
fast = fast_index(bdfa, TOY_VOCAB)
assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(slow, fast)), \
    "walk_index and fast_index must give the same index"
EOS = len(TOY_VOCAB)
toy_guide = Guide.build(PATTERN, TOY_VOCAB + [b""], eos_ids=[EOS])
for s, (allowed_ids, nexts) in enumerate(slow):
    moves = ", ".join(f"{TOY_VOCAB[i].decode(errors='replace')!r} -> {n}" for i, n in zip(allowed_ids, nexts))
    eos = " + end-of-text" if toy_guide.allowed(s)[EOS] else ""
    print(f"state {s}: {len(allowed_ids)} of {len(TOY_VOCAB)} tokens allowed: {moves or 'none'}{eos}")

# %% [markdown]
# Token by token, the same rule: a token is allowed when the text so far plus the token is still
# a prefix of some match. The byte DFA keeps only live states (section 2), so a token whose bytes
# all walk without falling off is exactly such a prefix. From the start state, every token walked:

# %%
brute = [i for i, b in enumerate(TOY_VOCAB) if bdfa.walk(bdfa.start, b) >= 0]
print("allowed from the start, by brute force:", brute, "— by the index:", slow[bdfa.start][0].tolist())
assert brute == slow[bdfa.start][0].tolist(), "the index must equal the brute-force set"

# %% [markdown]
# ## 4. The index on a real vocabulary, during a generation
#
# The model (SmolLM2, or the small shipped model without it) answers a question under
# `REAL_PATTERN`. At each step: the DFA state, how many of the V tokens the mask lets through,
# a few of them, and the token greedy decoding drew among them.

# %%
REAL_PATTERN = r"(Yes|No), because [a-z ,]{8,40}\."
knob("REAL_PATTERN", REAL_PATTERN, lambda p: isinstance(p, str) and 1 <= len(p) <= 80, "a regex of 1 to 80 characters")
model, tok, model_name = load_pretrained()
V = model.config.vocab_size
stops = stop_ids(tok) if "<|im_end|>" in tok.special_tokens else []
start = time.perf_counter()
guide = Regex(REAL_PATTERN).guide(tok, eos_ids=stops) if stops else Regex(REAL_PATTERN).guide(tok)
build_s = time.perf_counter() - start
print(f"{guide.dfa.n_states} byte-DFA states, index built in {build_s:.2f} s, {guide.nbytes() / 1e6:.1f} MB")
vocab = token_bytes_of(tok)
prompt = chat_prompt(tok, "Is the sea blue? Answer yes or no and say why in one sentence.")
state, text = guide.start, ""
for n, step in enumerate(generate(model, prompt, 40, temperature=0, tokenizer=tok, constraint=Regex(REAL_PATTERN),
                                  stop_ids=stops)):
    mask = guide.allowed(state)                                        # [V] bool
    few = [vocab[i].decode("utf-8", errors="replace") for i in np.flatnonzero(mask)[:5]]
    if n < 12 or guide.is_accepting(state):
        print(f"step {n:2}: state {state:3}, {int(mask.sum()):6} of {V} allowed (e.g. {few}), drew {step.text!r}")
    assert mask[step.id], "generate drew a token the guide does not allow"
    state = guide.advance(state, step.id)
    text += step.text
print(f"reply: {text!r}")
_ = claim(bool(__import__("re").fullmatch(REAL_PATTERN, text)), f"the reply fully matches {REAL_PATTERN!r}",
      "40 new tokens were not enough to finish it")

# %% [markdown]
# ## 5. SmolLM2 asked for JSON, with and without the constraint
#
# The same prompts, greedy, at most 40 new tokens each, once free and once under a `JsonSchema`
# (an object with a string `name` of at most 20 characters and an integer `age`, both required). A reply counts as
# *parsing* when `json.loads` accepts the whole reply and as *valid* when it is an object with
# exactly those keys and types. This needs SmolLM2, a model trained to follow instructions; the
# shipped Shakespeare model was not. A match guarantees the form, not the truth of the content.

# %%
N_PROMPTS = 4
knob("N_PROMPTS", N_PROMPTS, lambda n: type(n) is int and 1 <= n <= 4, "a whole number from 1 to 4")
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}, "age": {"type": "integer"}},
          "required": ["name", "age"], "additionalProperties": False}
PROMPTS = ["Reply with a JSON object with keys name and age for a person called Ada who is 36.",
           "Give me the name and age of a made-up sailor, as JSON.",
           "Who is older, a cat of 3 or a dog of 5? Answer with name and age in JSON.",
           "Describe a fictional teacher: name and age only, JSON please."][:N_PROMPTS]


def valid(reply):
    """-> (parses, valid): json.loads accepts the whole reply; it is {name: str, age: int}."""
    try:
        value = json.loads(reply)
    except ValueError:
        return False, False
    ok = (isinstance(value, dict) and set(value) == {"name", "age"} and isinstance(value["name"], str)
          and isinstance(value["age"], int) and not isinstance(value["age"], bool))
    return True, ok


if find_smollm2() is None:
    print("skipped: this comparison needs SmolLM2 (python -m minillm download smollm2)")
else:
    counts = {"free": [0, 0], "JsonSchema": [0, 0]}
    for p in PROMPTS:
        for how, constraint in [("free", None), ("JsonSchema", JsonSchema(SCHEMA))]:
            steps = generate(model, chat_prompt(tok, p), 40, temperature=0, tokenizer=tok,
                             constraint=constraint, stop_ids=stops)
            reply = "".join(s.text for s in steps)
            parses, ok = valid(reply)
            counts[how][0] += parses
            counts[how][1] += ok
            print(f"{how:10} {'parses' if parses else 'no JSON':7} {'valid' if ok else '':5} {reply!r:.110}")
    for how, (parses, ok) in counts.items():
        print(f"{how:10}: {parses} of {len(PROMPTS)} parse, {ok} of {len(PROMPTS)} valid")
    assert counts["JsonSchema"][1] == counts["JsonSchema"][0], "a constrained reply that parses must also validate"
    claim(counts["JsonSchema"][1] == len(PROMPTS), "every constrained reply parses and validates",
          "40 new tokens were not enough to close an object")
    claim(counts["JsonSchema"][1] >= counts["free"][1], "the constraint never makes fewer replies valid")

# %% [markdown]
# ## Exercises
#
# Write one step of the byte DFA's walk (a table [S, 256], −1 where the text dies) and the set of
# tokens allowed in a state, found by brute force. Each check runs hand-picked cases (a walk that
# dies half-way, a token with no bytes) and random ones, and names the usual mistakes. Solutions:
# `solutions/17_structured_output.py`.

# %%
from exercises import check


def dfa_walk(table, state, data):
    raise NotImplementedError    # your code here


check("dfa_walk", dfa_walk)

# %%
def allowed_tokens(table, state, token_bytes):
    raise NotImplementedError    # your code here


check("allowed_tokens", allowed_tokens)
