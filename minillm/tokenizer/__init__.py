"""Byte-level BPE tokenization (GPT-2, cl100k, o200k, Hugging Face / GGUF byte-level BPE models).

The reading path, in order (≤ 300 lines in all): patterns (split text into pre-tokens) -> bpe
(merge the lowest-ranked adjacent pair until none is left: `merge_reference`, which can trace every
merge) -> special (special tokens) -> tokenizer (the class: encode, decode). No cache, cut table,
batching or file format in them.

Around it: files (the Tokenizer's base class: load, from_gguf_metadata, train, save, encode_bytes,
encode_batch, merge_trace), pattern_names (the regexes of real tokenizers, the time limit for the
others), train (learning merges), stream (decoding a stream of ids), formats / byte_alphabet / hf /
gguf_meta / minillm_format (reading files), hf_features (which tokenizer.json settings are
honoured, which refused) with hf_normalize (normalisers), hf_post (post-processors:
`encode(..., add_special_tokens=True)`) and onig (Oniguruma regexes), hf_write (writing Hugging
Face's), locate (which name means which file), validate (refusing what cannot be honoured),
display (showing tokens and merges), spm / spm_meta / hf_spm (SentencePiece-style BPE: Llama 2,
Mistral, TinyLlama, Phi-3, Gemma 4 vocabularies; their GGUF reader; their tokenizer.json reader, a
BPE model with byte_fallback).

The speed-ups live in fast/ (split, stdlib_re, memo, pieces, merge, batch_bpe, segment, long;
what each buys is in fast/__init__.py) and plug in through one seam, `Tokenizer._encode_text`.
`Tokenizer(..., fast=False)` or `Tokenizer.load(..., fast=False)` runs the reading path alone and
gives the same ids (tests/tokenizer/test_fast_equals_reading.py).

    >>> from minillm.tokenizer import Tokenizer
    >>> tok = Tokenizer.load("gpt2")          # also "cl100k", "o200k", or a path
    >>> tok.encode("Hello world")
    [15496, 995]
"""
from .display import render_token
from .formats.pattern_names import CL100K_PATTERN, GPT2_PATTERN, NAMED_PATTERNS, O200K_PATTERN
from .patterns import PreTokenizer
from .stream import StreamDecoder
from .tokenizer import Tokenizer
from . import files as _files
from .spm import SentencePieceBPE

_files.use_sentencepiece(SentencePieceBPE)   # the loader's SentencePiece class (files.py says why)

__all__ = ["Tokenizer", "SentencePieceBPE", "StreamDecoder", "PreTokenizer", "render_token",
           "GPT2_PATTERN", "CL100K_PATTERN", "O200K_PATTERN", "NAMED_PATTERNS"]
