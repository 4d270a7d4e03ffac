"""Byte-level BPE tokenization (GPT-2, cl100k, o200k, Hugging Face / GGUF byte-level BPE models).

The reading path, in order (≤ 340 lines in all): patterns (split text into pre-tokens) -> bpe
(merge the lowest-ranked adjacent pair until none is left: `merge_reference`, which can trace every
merge) -> special (special tokens) -> tokenizer (the class: encode, decode, and the conveniences
around them). No cache, cut table, batching or file format in them; their input checks are in
checks, and budget gives every regex a file brings one time budget per encode call.

Around it: files (a mixin of the Tokenizer: load, from_gguf_metadata, train, save), train
(learning merges), stream (decoding a stream of ids), display (showing tokens and merges), spm
(SentencePiece-style BPE: Llama 2, Mistral, TinyLlama, Phi-3, Gemma 4 vocabularies).

The file formats are in formats/: dispatch (which reader, which writer), load (`load_tokenizer`:
a Tokenizer or a SentencePieceBPE, as the file needs), locate (which name means which file),
tiktoken, minillm_format (minillm's own), byte_alphabet, rank_merges, pattern_names (llama.cpp's
regexes by name), validate (refusing what cannot be honoured); formats/gguf/ (meta, token_types,
spm: GGUF vocabularies) and formats/hf/ (tokenizer.json: read, features, normalizers,
pre_tokenizers, post_processors, onig, spm, write).

The speed-ups live in fast/ (split, stdlib_re, memo, pieces, merge, batch_bpe, segment, long;
what each buys is in fast/__init__.py) and plug in through one seam, `Tokenizer._encode_text`.
`Tokenizer(..., fast=False)` or `Tokenizer.load(..., fast=False)` runs the reading path alone and
gives the same ids (tests/tokenizer/test_fast_equals_reading.py).

    >>> from minillm.tokenizer import Tokenizer, load_tokenizer
    >>> tok = Tokenizer.load("gpt2")          # also "cl100k", "o200k", or a path
    >>> tok.encode("Hello world")
    [15496, 995]
    >>> load_tokenizer("gpt2")                # whichever class the file needs
    Tokenizer(vocab_size=50257, specials=1, rule=ranks)
"""
from .display import render_token, show_merge
from .formats.load import load_tokenizer, tokenizer_from_gguf_metadata
from .formats.pattern_names import NAMED_PATTERNS
from .patterns import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, PreTokenizer
from .spm import SentencePieceBPE
from .stream import StreamDecoder
from .tokenizer import Tokenizer

__all__ = ["Tokenizer", "SentencePieceBPE", "StreamDecoder", "PreTokenizer", "render_token",
           "show_merge", "load_tokenizer", "tokenizer_from_gguf_metadata",
           "GPT2_PATTERN", "CL100K_PATTERN", "O200K_PATTERN", "NAMED_PATTERNS"]
