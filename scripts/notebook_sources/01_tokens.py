# %% [markdown]
# # 01 · Tokens are not characters, and not words
#
# The explainer articles (see notebooks/README.md) take one sentence of a DeepSeek answer to
# "why is the sea blue?" and say:
#
# > 这段回答经 DeepSeek-V4-Pro-Base 官方 Tokenizer 实际切分后为：海水 | 会 | 吸收 | 较多 | 红光 | ，| 蓝 | 光 | 更容易 | 被 | 散射 | 回来 | ，| 所以 | 大海 | 常 | 呈 | 蓝色 | 。
# >
# > *Cut by DeepSeek-V4-Pro-Base's official tokenizer, the answer becomes: 海水 | 会 | … | 。 — 19 tokens.*
#
# > 不同模型的 Tokenizer 规则各异，同一段文本在 GPT-4 与 DeepSeek 下可能产生显著不同的 Token 数量。
# >
# > *Tokenizers differ between models: the same text can give very different token counts under GPT-4 and DeepSeek.*
#
# This notebook first runs BPE by hand on a toy word, then reproduces the articles' 19 tokens and
# the id 海水 → 48572 with DeepSeek-V4's real tokenizer (a public `tokenizer.json`; get it once with
# `python -m minillm download deepseek-v4`), traces why 红光 is one token and 蓝光 two, and cuts
# the same sentence with GPT-2, GPT-4's `cl100k_base`, GPT-4o's `o200k_base`, SmolLM2's tokenizer
# and a BPE trained live on 宋词 (Song ci poetry).
#
# **Try this:** change `SENTENCE` (any text of 1 to 500 characters), the toy `TOY_WORD` (1 to 16
# bytes) and `TOY_RANKS` (merged tokens of 2 or more bytes → ranks 0 to 99), the phrases in
# `PHRASES` (1 to 4 non-empty strings) or `TRAIN_VOCAB` (the size of the 宋词 BPE: 257 to 2048,
# the 256 single bytes plus at least one merge) and re-run. A value outside its range is refused
# with a message before any work starts.
#
# **The course map.** The notebooks follow the pipeline from text to generated text; this one is
# its first step (the map is drawn by `scripts/make_course_map.py`):
#
# ![The course map: each step of the pipeline and the notebooks that teach it](course_map.svg)

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import time

import matplotlib.pyplot as plt
import numpy as np

from minillm.io.gguf.read import read_gguf
from minillm.tokenizer import Tokenizer
from minillm.tokenizer.bpe import NO_MERGE, merge_reference
from minillm.tokenizer.display import render_token
from nbhelpers import DEEPSEEK_V4_COMMAND, WEIGHTS, claim, find_smollm2, knob, load_deepseek_v4, shared_text

SENTENCE = "海水会吸收较多红光，蓝光更容易被散射回来，所以大海常呈蓝色。"
knob("SENTENCE", SENTENCE, lambda s: isinstance(s, str) and 1 <= len(s) <= 500, "a str of 1 to 500 characters")
# The articles' DeepSeek segmentation, as printed there (a quoted claim; measured below).
ARTICLE_PIECES = "海水|会|吸收|较多|红光|，|蓝|光|更容易|被|散射|回来|，|所以|大海|常|呈|蓝色|。".split("|")
ARTICLES = "".join(ARTICLE_PIECES) == SENTENCE          # False once you change SENTENCE
claim(ARTICLES, "SENTENCE is the articles' sentence", "the comparisons with the articles are skipped")
print(f"{len(SENTENCE)} characters, {len(SENTENCE.encode('utf-8'))} UTF-8 bytes; "
      f"the articles' DeepSeek cut has {len(ARTICLE_PIECES)} tokens")

# %% [markdown]
# ## BPE by hand, on a toy word
#
# Byte-level BPE encodes a word like this: start from its single bytes; look at every adjacent
# pair; merge the pair with the **lowest rank** (the merge learned earliest: training adds one
# merge at a time, each time for the pair most frequent in the text *as merged so far*, so a low
# rank means frequent early on, not most frequent overall — a merge of two whole characters can
# only come after the merges that built each character); repeat until no adjacent pair has a
# rank. Here is a made-up
# rank table small enough to follow with a pencil — `merge_reference` is minillm's textbook loop,
# and `trace=` collects every step:

# %%
TOY_WORD = b"banana"
TOY_RANKS = {b"an": 0, b"ban": 1, b"ana": 2, b"na": 3}     # merged token -> rank (lower = earlier)
knob("TOY_WORD", TOY_WORD, lambda w: isinstance(w, bytes) and 1 <= len(w) <= 16, "bytes, 1 to 16 of them (b\"...\")")
knob("TOY_RANKS", TOY_RANKS, lambda r: all(isinstance(t, bytes) and len(t) >= 2 and isinstance(k, int)
                                         and 0 <= k <= 99 for t, k in r.items()),
     "a dict from merged tokens (bytes, 2 or more) to whole-number ranks 0 to 99")

def show(parts):
    return " | ".join(render_token(p) for p in parts)

trace = []
toy_parts = merge_reference(TOY_WORD, lambda a, b: TOY_RANKS.get(a + b, NO_MERGE), trace=trace)
print(f"start       {show([TOY_WORD[i:i + 1] for i in range(len(TOY_WORD))])}")
for k, step in enumerate(trace, 1):
    print(f"step {k}: merge {render_token(step.pair[0])} + {render_token(step.pair[1])} "
          f"(rank {step.rank})  ->  {show(step.parts)}")
print("no adjacent pair has a rank any more: the tokens are", show(toy_parts))
_ = claim(toy_parts == [b"ban", b"ana"], "banana ends as ban | ana (the default TOY_WORD and TOY_RANKS)",
      f"with your TOY_WORD / TOY_RANKS it is {show(toy_parts)}")

# %% [markdown]
# Two things to notice: `an` (rank 0) merges first even though `ba` comes first in the word — the
# rank decides, not the position; and `na` (rank 3) never merges, because by the time it would,
# its `n` is already inside `an`. The order of the merges matters.
#
# ## The articles' 19 tokens, computed
#
# The same loop, on the real vocabulary the articles used: DeepSeek-V4's tokens (about 129K of
# them; the exact count is printed below when the file is here) and their merge ranks, read from
# its `tokenizer.json`.

# %%
deepseek, deepseek_name = load_deepseek_v4()
HAVE_DEEPSEEK = deepseek_name == "DeepSeek-V4"
ds_ids = deepseek.encode(SENTENCE)
ds_pieces = [render_token(deepseek.token_bytes(i)) for i in ds_ids]   # <e8 93>: part of a character
print(f"{deepseek_name}: a vocabulary of {deepseek.vocab_size:,} tokens; the sentence is {len(ds_ids)} tokens")
print(" | ".join(ds_pieces))
print("海水 →", deepseek.encode("海水"))
if HAVE_DEEPSEEK:
    claim(ds_pieces == ARTICLE_PIECES and len(ds_ids) == 19, "exactly the articles' 19 tokens",
          "SENTENCE is not the articles' sentence" if not ARTICLES else f"the split is {ds_pieces}")
    claim(deepseek.encode("海水") == [48572], "海水 is token 48572", f"it is {deepseek.encode('海水')}")
else:
    print(f"(The 19 tokens and 48572 need DeepSeek-V4's tokenizer: {DEEPSEEK_V4_COMMAND}. "
          f"The traces below use {deepseek_name} instead.)")

# %% [markdown]
# ## Why 红光 is one token and 蓝光 two
#
# The articles' key point: 较多红光 is 较多 + 红光, but 较多蓝光 is 较多 + 蓝 + 光. The trace shows
# why. Each Chinese character is 3 bytes; the first merges join bytes into characters, and the
# last step for 红光 joins two whole characters — a merge DeepSeek's training learned because
# 红光 was frequent in its text, and learned late (its rank, printed below, is far above those of
# the byte merges that build 红 and 光: ranks order merges by when they were learned, not by how
# frequent the pair is). For 蓝光 the loop stops at 蓝 | 光: there is **no merge rule**
# for that pair, so no amount of merging can join them.

# %%
PHRASES = ["红光", "蓝光"]
knob("PHRASES", PHRASES, lambda ps: 1 <= len(ps) <= 4 and all(isinstance(x, str) and x for x in ps),
     "a list of 1 to 4 non-empty strings")
for phrase in PHRASES:
    steps = deepseek.merge_trace(phrase)
    print(f"── {phrase} ({phrase.encode('utf-8').hex(' ')})")
    for k, step in enumerate(steps, 1):
        print(f"   step {k}: {render_token(step.pair[0]):>6s} + {render_token(step.pair[1]):<6s} "
              f"rank {step.rank:>7,}  ->  {show(step.parts)}")
    final = steps[-1].parts if steps else tuple(phrase.encode("utf-8")[i:i + 1] for i in range(len(phrase.encode("utf-8"))))
    print(f"   => {len(final)} token(s): {show(final)}   ids {deepseek.encode(phrase)}")
if HAVE_DEEPSEEK:
    blue, light = "蓝".encode(), "光".encode()
    claim(len(deepseek.merge_trace("红光")[-1].parts) == 1 and len(deepseek.merge_trace("蓝光")[-1].parts) == 2
          and deepseek.merges.get((blue, light)) is None,
          "红光 ends as one token; (蓝, 光) has no merge rule, so 蓝光 stays two",
          "this DeepSeek-V4 tokenizer.json is not the one the articles used")
    red = deepseek.merge_trace("红光")
    claim(red[-1].rank > 10 * max(step.rank for step in red[:-1]),
          "the merge 红 + 光 was learned long after the byte merges that build 红 and 光 (rank order = order learned)",
          f"ranks {[step.rank for step in red]}")

# %% [markdown]
# ## The tokenizers
#
# DeepSeek-V4's (when present, above), then GPT-2, cl100k and o200k, vendored in `weights/`
# (tiktoken rank files). SmolLM2's tokenizer
# is read from the metadata of its GGUF file (no weights are loaded for that). The last one is
# trained right here by `Tokenizer.train` on the start of the 宋词 corpus (in a clone without the
# development data: on the sample shipped in `weights/songci/`): byte-level BPE, which starts
# from the 256 bytes and learns merges of the most frequent adjacent pairs.

# %%
tokenizers = {"DeepSeek-V4": deepseek} if HAVE_DEEPSEEK else {}
tokenizers.update({name: Tokenizer.load(name) for name in ("gpt2", "cl100k", "o200k")})

smollm2_path = find_smollm2()
if smollm2_path is not None:
    tokenizers["SmolLM2"] = Tokenizer.from_gguf_metadata(read_gguf(str(smollm2_path)).metadata)
else:
    print("SmolLM2's GGUF file is absent (python -m minillm download smollm2): row skipped")

songci = shared_text("corpora/zh_songci.txt")
if songci is None:                                   # a user's clone: the shipped sample instead
    songci = (WEIGHTS / "songci" / "val_sample.txt").read_text(encoding="utf-8")
TRAIN_CHARS, TRAIN_VOCAB = 150_000, 1024
knob("TRAIN_VOCAB", TRAIN_VOCAB, lambda v: isinstance(v, int) and 257 <= v <= 2048, "a whole number from 257 to 2048")
train_text = songci[:TRAIN_CHARS]
start = time.perf_counter()
tokenizers["songci BPE"] = Tokenizer.train(train_text, vocab_size=TRAIN_VOCAB)
print(f"trained a {TRAIN_VOCAB}-token BPE on {len(train_text):,} characters of 宋词 "
      f"in {time.perf_counter() - start:.1f} s")
for name, tok in tokenizers.items():
    print(f"{name:10s} vocabulary {tok.vocab_size:>7,}")

# %% [markdown]
# ## The same sentence, cut five or six ways
#
# For each tokenizer: the pieces (a token's bytes shown as text when they are whole UTF-8
# characters, as `<e8 93>` hex when they are only part of one), the ids, and the count.
# `decode(encode(s)) == s` holds for every one of them: byte-level BPE loses nothing.

# %%
def pieces(tok, text):
    return [render_token(tok.token_bytes(i)) for i in tok.encode(text)]

counts = {}
for name, tok in tokenizers.items():
    ids = tok.encode(SENTENCE)
    counts[name] = len(ids)
    assert tok.decode(ids) == SENTENCE, f"{name}: decode(encode(s)) differs from s — a tokenizer bug"
    print(f"── {name}: {len(ids)} tokens, {len(SENTENCE) / len(ids):.2f} characters per token")
    print("   " + " | ".join(pieces(tok, SENTENCE)))
    print("   ids:", ids)

# %% [markdown]
# ## Tokens that hold part of a character
#
# A Chinese character is 3 bytes in UTF-8 (蓝 = `e8 93 9d`). A byte-level BPE only merges bytes
# that were frequent together in its training text; when a character was rare there, it stays
# split, and a token can hold one or two bytes of it — not a character at all. Such a token
# cannot be decoded alone (`decode(..., errors="strict")` fails), which is why streaming output
# has to hold bytes back until a character is complete.

# %%
def partial_tokens(tok, text):
    """(position, the token shown by render_token) of every token whose bytes are not valid UTF-8
    on their own: `<e8 93>` is part of a character."""
    out = []
    for k, i in enumerate(tok.encode(text)):
        try:
            tok.token_bytes(i).decode("utf-8", errors="strict")
        except UnicodeDecodeError:
            out.append((k, render_token(tok.token_bytes(i))))
    return out

for name, tok in tokenizers.items():
    part = partial_tokens(tok, SENTENCE)
    print(f"{name:10s} {len(part):2d} of {counts[name]:2d} tokens are part of a character",
          "" if not part else "  e.g. " + ", ".join(f"#{k}: {h}" for k, h in part[:4]))
print("蓝 in UTF-8:", "蓝".encode("utf-8").hex(" "), " 光:", "光".encode("utf-8").hex(" "))

# %% [markdown]
# ## 较多红光 vs 较多蓝光
#
# > 关键点在于：‘较多红光’被切为 2 个 Token（较多、红光），而‘较多蓝光’则被切为 3 个（较多、蓝、光）。
# >
# > *The key point: 较多红光 (more red light) is cut into 2 tokens, 较多蓝光 (more blue light) into 3.*
#
# The counts include 较多: one token for 较多, then one (红光) or two (蓝, 光) for the colour. That
# is DeepSeek's vocabulary (checked below when its tokenizer is present). Here is what every
# tokenizer here does with the two phrases:

# %%
for name, tok in tokenizers.items():
    red, blue = pieces(tok, "较多红光"), pieces(tok, "较多蓝光")
    print(f"{name:10s} 较多红光 → {len(red)}: {' | '.join(red):34s} 较多蓝光 → {len(blue)}: {' | '.join(blue)}")
if HAVE_DEEPSEEK:
    red, blue = pieces(deepseek, "较多红光"), pieces(deepseek, "较多蓝光")
    claim((red, blue) == (["较多", "红光"], ["较多", "蓝", "光"]),
          "DeepSeek-V4: 较多红光 is 2 tokens and 较多蓝光 3, as the articles say (较多 counted)",
          f"it cuts them as {red} and {blue}")

# %% [markdown]
# The articles also give an id: ‘海水’→48572. That id is a row number in DeepSeek's vocabulary
# (computed above) and means nothing elsewhere; in the other tokenizers here 海水 is another id,
# or not even a single token:

# %%
for name, tok in tokenizers.items():
    ids = tok.encode("海水")
    print(f"{name:10s} 海水 → {ids}  ({' | '.join(pieces(tok, '海水'))})")

# %% [markdown]
# Why does the 宋词 BPE keep some characters whole and split others? It merged the byte pairs
# that were most frequent in its training text. Count how often each character of the sentence
# occurs in the training text:

# %%
songci_bpe = tokenizers["songci BPE"]
whole = {ch: len(songci_bpe.encode(ch)) == 1 for ch in dict.fromkeys(SENTENCE)}
freq = {ch: train_text.count(ch) for ch in whole}
print("one token :", ", ".join(f"{ch} ({freq[ch]})" for ch in whole if whole[ch]))
print("split     :", ", ".join(f"{ch} ({freq[ch]})" for ch in whole if not whole[ch]))
def median_count(kept):
    """Median training-text count of the sentence's characters that are (kept=True) or are not one
    token; None when there are none (a small TRAIN_VOCAB may keep no character whole)."""
    counts_ = [freq[ch] for ch in whole if whole[ch] == kept]
    return float(np.median(counts_)) if counts_ else None

median_whole, median_split = median_count(True), median_count(False)
print(f"median count in the training text: whole {median_whole}, split {median_split}")

# %% [markdown]
# ## The count depends on the tokenizer
#
# Every bar is measured above (without DeepSeek-V4's tokenizer file, its 19 is drawn hatched as
# quoted by the articles).
# The English translation of the sentence is counted too: GPT-2's vocabulary was learned on
# English web text, so on Chinese it spends more tokens than characters (though fewer than
# bytes: some of its tokens hold two bytes of a character) and far fewer on English; the tokens
# per character and per byte are printed after the bars.

# %%
ENGLISH = "Seawater absorbs more red light, and blue light is more easily scattered back, so the sea often looks blue."
english_counts = {name: len(tok.encode(ENGLISH)) for name, tok in tokenizers.items()}
names = list(counts)
fig, ax = plt.subplots(figsize=(9, 4))
x = range(len(names))
ax.bar([i - 0.2 for i in x], [counts[n] for n in names], width=0.4, label="Chinese sentence (measured)")
ax.bar([i + 0.2 for i in x], [english_counts[n] for n in names], width=0.4, label="English translation (measured)")
ticks, labels = list(x), list(names)
if not HAVE_DEEPSEEK:
    ax.bar(len(names) - 0.2, len(ARTICLE_PIECES), width=0.4, hatch="//", fill=False,
           label="DeepSeek-V4, quoted from the articles")
    ticks, labels = ticks + [len(names)], labels + ["DeepSeek-V4\n(quoted)"]
ax.axhline(len(SENTENCE), color="grey", ls=":", label=f"{len(SENTENCE)} characters")
ax.set_xticks(ticks, labels)
ax.set_ylabel("tokens")
ax.set_title("Tokens for the same sentence under different tokenizers")
ax.legend(fontsize=8)
plt.show()
n_bytes = len(SENTENCE.encode("utf-8"))
for n in names:
    print(f"{n:10s} Chinese {counts[n]:3d} ({counts[n] / len(SENTENCE):.2f} a character, "
          f"{counts[n] / n_bytes:.2f} a byte)   English {english_counts[n]:3d}")

# %% [markdown]
# The claims of the next paragraph, checked on the numbers above (✓ or ✗: with your own SENTENCE
# some may not hold):

# %%
others = {n: c for n, c in counts.items() if n != "DeepSeek-V4"}
claim(counts["gpt2"] > 2 * len(SENTENCE), "GPT-2 spends more than 2 tokens per character",
      f"{counts['gpt2']} tokens on {len(SENTENCE)} characters")
claim(counts["gpt2"] < n_bytes, "but fewer than one per byte: some GPT-2 tokens hold two bytes of a character",
      f"{counts['gpt2']} tokens on {n_bytes} bytes")
claim(english_counts["gpt2"] < counts["gpt2"], "GPT-2 needs fewer tokens for the English",
      f"{english_counts['gpt2']} vs {counts['gpt2']}")
claim(english_counts["songci BPE"] > 2 * english_counts["gpt2"],
      "the 宋词 BPE needs more than twice GPT-2's tokens for the English", str(english_counts))
claim(None not in (median_whole, median_split) and median_whole > median_split,
      "characters that are whole tokens are the more frequent ones",
      f"medians: whole {median_whole}, split {median_split} (None: no character of that kind)")
claim(20 <= min(others.values()) and max(others.values()) < 100,
      "the other tokenizers need 20–100 tokens", str(others))
print(f"In numbers: GPT-2 {counts['gpt2'] / len(SENTENCE):.1f} tokens per character of SENTENCE; the "
      f"others {min(others.values())}–{max(others.values())} tokens; the 宋词 BPE "
      f"{english_counts['songci BPE'] / english_counts['gpt2']:.1f}× GPT-2's tokens for the English")

# %% [markdown]
# **What this shows.** A token is whatever unit a tokenizer's vocabulary happens to hold: a
# byte, part of a character, a character, a word (吸收, 回来) or a word with punctuation. The
# articles' sentence is 19 tokens for DeepSeek-V4 and, measured above, more for every other
# tokenizer here. GPT-2's vocabulary, learned on English text, spends
# more than two tokens on one Chinese character; the small 宋词 BPE keeps the characters frequent in
# Song ci whole and is hopeless on English. Token counts are what a context window holds and
# what an API bills (notebook 08).
#
# ## Exercises
#
# Write the function, run the cell: `check` tries it on hand-picked and random cases and prints
# the first one it gets wrong (or how many it passed). Solutions: `solutions/01_tokens.py`.
#
# **1. One merge step.** `parts` is a list of byte strings, `ranks` maps a merged token to its
# rank (like `TOY_RANKS`). Return the parts after merging the adjacent pair `(a, b)` whose `a + b`
# has the lowest rank (the leftmost if it occurs twice); if no pair is in `ranks`, return `parts`.

# %%
from exercises import check

def bpe_merge_step(parts, ranks):
    raise NotImplementedError    # your code here

check("bpe_merge_step", bpe_merge_step)

# %% [markdown]
# **2. The whole loop.** `word` is bytes: start from its single bytes and repeat the merge step
# until nothing merges. `bpe_merge(b"banana", TOY_RANKS)` must give `[b"ban", b"ana"]`.

# %%
def bpe_merge(word, ranks):
    raise NotImplementedError    # your code here

check("bpe_merge", bpe_merge)
