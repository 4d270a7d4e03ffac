"""The tokenizer's speed-ups, kept apart from the reading path (patterns, bpe, special, tokenizer).

They plug in through ONE seam: `Tokenizer._encode_text` (text without special tokens -> ids)
calls `FastEncoder.encode(text)` unless the tokenizer was made with `fast=False`, which runs the
plain loop over `bpe.merge_reference`. Every speed-up gives exactly the reading path's ids: each
is tested equal to its reading form, and tests/tokenizer/test_fast_equals_reading.py checks the
whole encode on random vocabularies and on gpt2, cl100k, o200k, SmolLM2 and DeepSeek-V4.

What each one buys, measured as CPU-time ratios on a shared 2-core VM (GPT-2 vocabulary, 1 MB of
English / 0.3 MB of Chinese; medians of 3; benchmarks/bench_tokenizer.py compares with tiktoken).
All together: ~4x faster than the reading path on a new text of either.

* split.py, stdlib_re.py - the pre-tokenising pattern through `findall` and, on text without
  characters above U+FFFF, through the stdlib `re` (each property spelled out as a class):
  pre-tokenising 4.2x / 3.7x faster than `regex` with `finditer`.
* memo.py, pieces.py - the ids of every pre-token are cached and read from C over the whole
  list: a word's second occurrence costs a dict look-up; text seen before encodes 1.5x / 4.8x
  faster than the first time.
* merge.py - BPE re-ranking only the pairs a merge changed (`merge_list`) and a heap for long
  pieces (`merge_heap`, O(n log n) instead of the reading loop's O(n^2)): the distinct
  pre-tokens merge 1.4x / 2.1x faster.
* bulk.py - a long text's new pre-tokens given their ids before the text is read through the
  cache: whole tokens by one look-up each, non-ASCII ones through wide.py, the rest batch_bpe.py.
* batch_bpe.py - the new pre-tokens of a long text merged all at once in NumPy: a new English
  text 2.1x faster (Chinese 1.1x); its pairs' ranks are learnt as they are met, so a fresh
  tokenizer's first long text uses it too (kept in a sorted array: a round's
  look-ups are one `np.searchsorted`).
* pieces.py also pauses the cyclic garbage collector while a long text is encoded: the new
  pieces' tuples set it off ~20 times a megabyte, each pass walking the 260,000 pieces; a fresh
  tokenizer's first megabyte ~20% faster.
* segment.py - a long non-ASCII pre-token (a clause of Chinese) cut where no merge can cross,
  so its segments hit the cache: new Chinese text 2.1x faster.
* wide.py - the many new non-ASCII pieces of a long text that segment.py cuts before every
  character (most of a Chinese text's): found and given their characters' ids all at once, in
  NumPy over code points, instead of one piece at a time.
* long.py - one very long pre-token in linear memory: 10 MB of letters without a space in 12 s
  and 15 bytes per character (peak RSS growth) instead of 69 s and 177; 10 MB of Han in 26
  bytes per character instead of 129 (2.8 s instead of 2.3 s).
"""
from .pieces import FastEncoder

__all__ = ["FastEncoder"]
