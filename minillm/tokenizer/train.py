"""Learning BPE merges from text: a naive trainer to read and a fast one that gives the same merges.

Both start from the corpus cut into pre-tokens (so merges never cross a piece boundary) and
counted: `{b"hello": 3, b" world": 2, ...}`. Every id 0..255 is a byte. Then, `n_merges` times:

1. count every adjacent pair of ids in every word, weighted by the word's count
   (overlapping pairs count: `aaa` holds the pair `(a, a)` twice);
2. take the most frequent pair (ties: below);
3. give it the next id (256, 257, ...) and replace its occurrences in every word, left to right.

Tie rule: among pairs with the highest count, the pair with the smallest `(left id, right id)`
wins. It depends only on the counts and ids, so training is reproducible. (Alternatives: minbpe
takes the pair first seen in the text; Hugging Face's BpeTrainer compares the pairs' strings.)

Training stops early when no word has two parts left (a tiny corpus cannot fill a large
vocabulary); the caller sees how many merges were learned.

Textbook case ("aaabdaaabac", 3 merges): (a, a) -> 256 (count 4), (a, b) -> 257 (count 2, ties with
(256, a) and wins on smaller ids), (256, 257) -> 258: the text becomes [258, d, 258, a, c].
"""
from __future__ import annotations

import heapq
from collections import Counter

import regex

from .checks import without_lone_surrogates
from .fast.split import FastSplit
from .formats.pattern_names import KNOWN_STAGES, pre_tokenizer
from .special import SpecialTokens
from .formats.validate import check_patterns

Pair = tuple[int, int]


def merge_word(word: tuple[int, ...], pair: Pair, new_id: int) -> tuple[int, ...]:
    """Replace every occurrence of `pair` in `word`, left to right, by `new_id`."""
    return tuple(merge_and_diff(word, pair, new_id)[0])


def merge_and_diff(word, pair: Pair, new_id: int) -> tuple[list[int], list[Pair], list[Pair]]:
    """`merge_word`, plus the pairs the merge takes away and the pairs it makes.

    A pair away from every merge survives unchanged, so only pairs touching a merge change:
    `x a b y` -> `x N y` loses (x, a), (a, b), (b, y) and gains (x, N), (N, y).
    subtle: back-to-back merges share a boundary, counted once: `a b a b` -> `N N` loses
    (a, b), (b, a), (a, b) and gains (N, N) once. `new_id` is fresh, so `out[-1] == new_id`
    means "the previous position was merged".
    """
    out: list[int] = []
    lost: list[Pair] = []
    gained: list[Pair] = []
    i = 0
    while i < len(word):
        merge = i + 1 < len(word) and word[i] == pair[0] and word[i + 1] == pair[1]
        e = new_id if merge else word[i]
        if out and (merge or out[-1] == new_id):  # the boundary before position i touches a merge
            lost.append((word[i - 1], word[i]))
            gained.append((out[-1], e))
        if merge:
            lost.append(pair)
        out.append(e)
        i += 2 if merge else 1
    return out, lost, gained


def word_counts(pieces) -> dict[tuple[int, ...], int]:
    """Pre-token strings -> {tuple of byte ids: count}."""
    return {tuple(piece.encode("utf-8")): c for piece, c in Counter(pieces).items()}


def train_naive(words: dict[tuple[int, ...], int], n_merges: int) -> list[Pair]:
    """The reference trainer: recount every pair of every word before each merge."""
    merges: list[Pair] = []
    for new_id in range(256, 256 + n_merges):
        counts: Counter = Counter()
        for word, c in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] += c
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))  # highest count, then smallest ids
        merges.append(best)
        words = _sum_counts((merge_word(w, best, new_id), c) for w, c in words.items())
    return merges


def _sum_counts(items) -> dict[tuple[int, ...], int]:
    out: dict[tuple[int, ...], int] = {}
    for w, c in items:
        out[w] = out.get(w, 0) + c
    return out


def train_fast(words: dict[tuple[int, ...], int], n_merges: int) -> list[Pair]:
    """Same merges as `train_naive`, without recounting the corpus for each merge.

    Keeps `counts[pair]` and `where[pair]` (the words that have held the pair). A merge only
    touches the words in `where[best]`, and in each only the pairs next to a merge
    (`merge_and_diff`), so only the pairs whose counts change are touched. A heap of
    `(-count, pair)` finds the best pair; entries whose count has changed since they were pushed
    are skipped when popped (every changed pair is pushed again with its new count).
    """
    word_list = [list(w) for w in words]
    freq = list(words.values())
    counts: dict[Pair, int] = {}
    where: dict[Pair, set[int]] = {}
    for k, w in enumerate(word_list):
        for pair in zip(w, w[1:]):
            counts[pair] = counts.get(pair, 0) + freq[k]
            where.setdefault(pair, set()).add(k)
    heap = [(-c, p) for p, c in counts.items()]
    heapq.heapify(heap)
    merges: list[Pair] = []
    for new_id in range(256, 256 + n_merges):
        best = None
        while heap:
            neg, pair = heapq.heappop(heap)
            if counts.get(pair, 0) == -neg and -neg > 0:
                best = pair
                break
        if best is None:
            break
        merges.append(best)
        delta: dict[Pair, int] = {}  # pair -> change of its count
        for k in sorted(where.pop(best)):
            word_list[k], lost, gained = merge_and_diff(word_list[k], best, new_id)
            for pair in lost:
                delta[pair] = delta.get(pair, 0) - freq[k]
            for pair in gained:
                delta[pair] = delta.get(pair, 0) + freq[k]
                where.setdefault(pair, set()).add(k)
        for pair, d in delta.items():
            if d == 0:  # unchanged: its heap entry is still valid
                continue
            counts[pair] = counts.get(pair, 0) + d
            if counts[pair] > 0:
                heapq.heappush(heap, (-counts[pair], pair))
            else:
                del counts[pair]
                where.pop(pair, None)
    return merges


def check_trainable(stages, source: str = "Tokenizer.train") -> None:
    """Pre-tokenisation stages a trained tokenizer may keep: those Tokenizer.load accepts (its
    check, formats/validate.check_patterns: training never makes a tokenizer minillm cannot read back),
    and none that matches the empty string (its pieces would be empty: text between matches is
    not split). `source` names the stages in the message ("--pattern" for the CLI's flag)."""
    check_patterns([s for s in stages if s not in KNOWN_STAGES], source)
    for stage in stages:
        if regex.fullmatch(stage, "") is not None:
            raise ValueError(f"{source}: pattern {stage!r} matches the empty string: a "
                             f"pre-tokenisation pattern must match at least one character (e.g. "
                             f"'\\w+' rather than '\\w*')")


def train_tokenizer(text: str, vocab_size: int, pattern=None, special_tokens=(),
                    trainer: str = "fast") -> dict:
    """Text -> the keyword arguments of `Tokenizer(...)`: id b = byte b, id 256 + k = merge k,
    then the special tokens."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    if trainer not in ("fast", "naive"):
        raise ValueError(f'trainer must be "fast" or "naive", got {trainer!r}')
    special_tokens = list(special_tokens)
    if not isinstance(vocab_size, int) or vocab_size < 256 + len(special_tokens):
        raise ValueError(f"vocab_size must be an int >= 256 (the bytes) + {len(special_tokens)} "
                         f"(the special tokens), got {vocab_size!r}")
    pre = pre_tokenizer(pattern)     # (a name: tiktoken's or llama.cpp's)
    check_trainable(pre.stages)
    texts = [without_lone_surrogates(text)]  # (U+FFFD, as encode sees them)
    if special_tokens:  # special tokens are never learned from: cut them out of the text
        splitter = SpecialTokens({s: 0 for s in special_tokens})
        texts = [seg for seg, sid in splitter.split(texts[0], frozenset(special_tokens))
                 if sid is None]
    split = FastSplit(pre)                       # the same pieces as pre.split, sooner (fast/)
    words = word_counts(p for t in texts for p in split(t))
    n_merges = vocab_size - 256 - len(special_tokens)
    pairs = (train_fast if trainer == "fast" else train_naive)(words, n_merges)
    table = [bytes([b]) for b in range(256)]
    for a, b in pairs:
        table.append(table[a] + table[b])
    encoder: dict[bytes, int] = {}
    for i, t in enumerate(table):
        encoder.setdefault(t, i)  # subtle: two merges can spell the same bytes; keep the first id
    merges: dict[tuple[bytes, bytes], int] = {}
    for rank, (a, b) in enumerate(pairs):
        merges.setdefault((table[a], table[b]), rank)
    specials = {s: len(table) + k for k, s in enumerate(special_tokens)}
    return dict(encoder=encoder, merges=merges, pattern=pre.stages, special_tokens=specials)
