"""Byte-level BPE tokenization (GPT-2, cl100k, o200k, Hugging Face / GGUF byte-level BPE models).

Read in this order: patterns (pre-tokenisation) -> bpe (the merge loop) -> special (special
tokens) -> tokenizer (the class) -> train (learning merges) -> stream (decoding a stream of ids)
-> formats / hf (files) -> display (showing tokens). Speed-ups: memo (the caches), segment (long
pre-tokens), stdlib_re (the pre-tokenising regex on Python's built-in `re`).

    >>> from minillm.tokenizer import Tokenizer
    >>> tok = Tokenizer.load("gpt2")          # also "cl100k", "o200k", or a path
    >>> tok.encode("Hello world")
    [15496, 995]
"""
from .display import render_token
from .pattern_names import CL100K_PATTERN, GPT2_PATTERN, NAMED_PATTERNS, O200K_PATTERN
from .patterns import PreTokenizer
from .stream import StreamDecoder
from .tokenizer import Tokenizer

__all__ = ["Tokenizer", "StreamDecoder", "PreTokenizer", "render_token", "GPT2_PATTERN",
           "CL100K_PATTERN", "O200K_PATTERN", "NAMED_PATTERNS"]
