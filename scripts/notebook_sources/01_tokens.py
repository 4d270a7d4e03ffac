# %% [markdown]
# # 01 · Tokens are not characters, and not words
#
# The seed text takes one sentence of a DeepSeek answer to "why is the sea blue?" and says:
#
# > 这段回答经 DeepSeek-V4-Pro-Base 官方 Tokenizer 实际切分后为：海水 | 会 | 吸收 | 较多 | 红光 | ，| 蓝 | 光 | 更容易 | 被 | 散射 | 回来 | ，| 所以 | 大海 | 常 | 呈 | 蓝色 | 。
# >
# > *Cut by DeepSeek-V4-Pro-Base's official tokenizer, the answer becomes: 海水 | 会 | … | 。 — 19 tokens.*
#
# > 不同模型的 Tokenizer 规则各异，同一段文本在 GPT-4 与 DeepSeek 下可能产生显著不同的 Token 数量。
# >
# > *Tokenizers differ between models: the same text can give very different token counts under GPT-4 and DeepSeek.*
#
# **Said plainly:** the seed's 19 tokens come from DeepSeek's tokenizer, which is not available
# offline, so this notebook cannot reproduce that number. What it can do is cut the same sentence
# with the tokenizers that *are* here — GPT-2, GPT-4's `cl100k_base`, GPT-4o's `o200k_base`,
# SmolLM2's (when its model file is present) and a BPE trained live on 宋词 (Song ci poetry) —
# and show that the count, the pieces and even whether a token holds a whole character all depend
# on the tokenizer.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import time

import matplotlib.pyplot as plt
import numpy as np

from minillm.io.gguf import read_gguf
from minillm.tokenizer import Tokenizer
from minillm.tokenizer.display import render_token
from nbhelpers import WEIGHTS, find_smollm2, shared_text

SENTENCE = "海水会吸收较多红光，蓝光更容易被散射回来，所以大海常呈蓝色。"
# The seed's DeepSeek segmentation, copied from the seed (a quoted claim, not a measurement).
SEED_PIECES = "海水|会|吸收|较多|红光|，|蓝|光|更容易|被|散射|回来|，|所以|大海|常|呈|蓝色|。".split("|")
assert "".join(SEED_PIECES) == SENTENCE
print(f"{len(SENTENCE)} characters, {len(SENTENCE.encode('utf-8'))} UTF-8 bytes; "
      f"the seed's DeepSeek cut has {len(SEED_PIECES)} tokens")

# %% [markdown]
# ## The tokenizers
#
# GPT-2, cl100k and o200k are vendored in `weights/` (tiktoken rank files). SmolLM2's tokenizer
# is read from the metadata of its GGUF file (no weights are loaded for that). The last one is
# trained right here by `Tokenizer.train` on the start of the 宋词 corpus (in a clone without the
# development data: on the sample shipped in `weights/songci/`): byte-level BPE, which starts
# from the 256 bytes and learns merges of the most frequent adjacent pairs.

# %%
tokenizers = {name: Tokenizer.load(name) for name in ("gpt2", "cl100k", "o200k")}

smollm2_path = find_smollm2()
if smollm2_path is not None:
    tokenizers["SmolLM2"] = Tokenizer.from_gguf_metadata(read_gguf(str(smollm2_path)).metadata)
else:
    print("SmolLM2's GGUF file is absent (python -m minillm download smollm2): row skipped")

songci = shared_text("corpora/zh_songci.txt")
if songci is None:                                   # a user's clone: the shipped sample instead
    songci = (WEIGHTS / "songci" / "val_sample.txt").read_text(encoding="utf-8")
TRAIN_CHARS, TRAIN_VOCAB = 150_000, 1024
train_text = songci[:TRAIN_CHARS]
start = time.perf_counter()
tokenizers["songci BPE"] = Tokenizer.train(train_text, vocab_size=TRAIN_VOCAB)
print(f"trained a {TRAIN_VOCAB}-token BPE on {len(train_text):,} characters of 宋词 "
      f"in {time.perf_counter() - start:.1f} s")
for name, tok in tokenizers.items():
    print(f"{name:10s} vocabulary {tok.vocab_size:>7,}")

# %% [markdown]
# ## The same sentence, cut five ways
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
    assert tok.decode(ids) == SENTENCE
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
    """(position, hex bytes) of every token whose bytes are not valid UTF-8 on their own."""
    out = []
    for k, i in enumerate(tok.encode(text)):
        try:
            tok.token_bytes(i).decode("utf-8", errors="strict")
        except UnicodeDecodeError:
            out.append((k, tok.token_bytes(i).hex(" ")))
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
# (In the seed's own segmentation 较多 is a separate token, so the phrases are 较多 + 2 and
# 较多 + 3 pieces: 3 and 4 tokens in all; the seed counts only the colour part.) That is DeepSeek's
# vocabulary. Here is what the available tokenizers do with the two phrases:

# %%
for name, tok in tokenizers.items():
    red, blue = pieces(tok, "较多红光"), pieces(tok, "较多蓝光")
    print(f"{name:10s} 较多红光 → {len(red)}: {' | '.join(red):34s} 较多蓝光 → {len(blue)}: {' | '.join(blue)}")

# %% [markdown]
# The seed also gives an id: ‘海水’→48572. That id is a row number in DeepSeek's vocabulary and
# means nothing elsewhere; in the tokenizers here 海水 is not even a single token:

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
print(f"median count in the training text: whole {np.median([freq[c] for c in whole if whole[c]]):.0f}, "
      f"split {np.median([freq[c] for c in whole if not whole[c]]):.0f}")

# %% [markdown]
# ## The count depends on the tokenizer
#
# The seed's 19 is shown for reference (quoted, hatched); every other bar is measured above.
# The English translation of the sentence is counted too: GPT-2's vocabulary was learned on
# English web text, so it spends about one token per *byte* on Chinese but far fewer on English.

# %%
ENGLISH = "Seawater absorbs more red light, and blue light is more easily scattered back, so the sea often looks blue."
english_counts = {name: len(tok.encode(ENGLISH)) for name, tok in tokenizers.items()}
names = list(counts)
fig, ax = plt.subplots(figsize=(9, 4))
x = range(len(names))
ax.bar([i - 0.2 for i in x], [counts[n] for n in names], width=0.4, label="Chinese sentence (measured)")
ax.bar([i + 0.2 for i in x], [english_counts[n] for n in names], width=0.4, label="English translation (measured)")
ax.bar(len(names) - 0.2, len(SEED_PIECES), width=0.4, hatch="//", fill=False,
       label="DeepSeek, quoted from the seed")
ax.axhline(len(SENTENCE), color="grey", ls=":", label=f"{len(SENTENCE)} characters")
ax.set_xticks(list(x) + [len(names)], names + ["DeepSeek\n(seed)"])
ax.set_ylabel("tokens")
ax.set_title("Tokens for the same sentence under different tokenizers")
ax.legend(fontsize=8)
plt.show()
for n in names:
    print(f"{n:10s} Chinese {counts[n]:3d}   English {english_counts[n]:3d}")

# %% [markdown]
# **What this shows.** A token is whatever unit a tokenizer's vocabulary happens to hold: a
# byte, part of a character, a character, a word (容易, 回来) or a word with punctuation (，所以).
# The same 30-character sentence is 19 tokens for DeepSeek (quoted), and — measured here —
# anything from about two dozen to several dozen for the others. A vocabulary learned on
# English text spends several tokens on one Chinese character; the small 宋词 BPE keeps the
# characters frequent in Song ci whole and is hopeless on English. Token counts are what a
# context window holds and what an API bills (notebook 08).
