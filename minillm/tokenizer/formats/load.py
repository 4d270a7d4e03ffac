"""Loading whichever tokenizer a file holds, as Hugging Face's AutoTokenizer does: a byte-level
BPE vocabulary gives a Tokenizer, a SentencePiece-style one (Llama 2, Mistral, Gemma 4: GGUF
"llama" / "gemma4", a tokenizer.json BPE with byte_fallback) a SentencePieceBPE.

    >>> load_tokenizer("gpt2")
    Tokenizer(vocab_size=50257, specials=1, rule=ranks)

`Tokenizer.load(path)` reads byte-level vocabularies only (and `SentencePieceBPE.load(path)`
SentencePiece-style ones): the class is chosen by the caller there, by the file here.
"""
from __future__ import annotations

from ..files import build
from ..spm import SentencePieceBPE
from ..tokenizer import Tokenizer
from .dispatch import read
from .gguf.meta import read_gguf_metadata


def _class_for(kwargs: dict) -> type:
    """The class a reader's kwargs build: SentencePiece-style ones name `pieces`."""
    return SentencePieceBPE if "pieces" in kwargs else Tokenizer


def load_tokenizer(path_or_name, pattern=None, *, fast: bool = True):
    """A name, folder or file (as `Tokenizer.load` takes them) -> the Tokenizer or
    SentencePieceBPE its vocabulary needs. `pattern` overrides the pre-tokenisation pattern;
    `fast=False` encodes on the reading path alone."""
    kwargs = read(path_or_name, pattern)
    return build(_class_for(kwargs), kwargs, fast=fast)


def tokenizer_from_gguf_metadata(meta: dict, pattern=None, *, fast: bool = True):
    """GGUF `tokenizer.ggml.*` metadata (a dict, e.g. io.gguf.read_gguf(path).metadata) -> the
    Tokenizer or SentencePieceBPE it describes."""
    kwargs = read_gguf_metadata(meta, pattern)
    return build(_class_for(kwargs), kwargs, "minillm.tokenizer_from_gguf_metadata(meta)",
                 fast=fast)
