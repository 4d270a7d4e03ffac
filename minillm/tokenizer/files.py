"""The Tokenizer's files: reading it (`load`, `from_gguf_metadata`), learning it from text
(`train`) and writing it (`save`). `TokenizerFiles` is a mixin of tokenizer.Tokenizer (and so of
spm.SentencePieceBPE) that uses only their public attributes (`id_to_bytes`, `pre_tokenizer`, ...):

    >>> tok = Tokenizer.load("gpt2")                  # also "cl100k", "o200k", a path
    >>> tok.save("out/tokenizer.json")                # Hugging Face's format (+ a .vocab dump)

Which class a file needs (byte-level BPE: Tokenizer; SentencePiece-style: SentencePieceBPE) is
the file's to say: `minillm.load_tokenizer(path)` (formats/load.py) returns either. `cls.load`
builds `cls` and refuses, naming `load_tokenizer`, a vocabulary of the other kind.
"""
from __future__ import annotations

from types import MappingProxyType

from .formats.dispatch import read, write
from .formats.gguf.meta import read_gguf_metadata
from .formats.pattern_names import pre_tokenizer
from .train import train_tokenizer


def build(cls, kwargs: dict, factory: str = "minillm.load_tokenizer(path)", **options):
    """A reader's kwargs -> `cls(**kwargs, **options)`. A SentencePiece-style vocabulary (its
    kwargs name `pieces`, not an `encoder`) needs a class with `sentencepiece_style` (else a
    ValueError naming `factory`, which picks the class). A byte-level one gets a PreTokenizer that
    splits llama.cpp's named stages untimed (formats/pattern_names.py). `unreachable_tokens`
    ({id: bytes}, gguf/meta.py): ids no text gives, decoded as those bytes; `gguf_metadata`: kept
    as the tokenizer's attribute (TokenizerFiles.gguf_metadata)."""
    kwargs = dict(kwargs)
    carried = kwargs.pop("gguf_metadata", None)
    sentencepiece = "pieces" in kwargs
    if sentencepiece != cls.sentencepiece_style:
        kind = "a SentencePiece-style" if sentencepiece else "a byte-level BPE"
        raise ValueError(f"{cls.__name__} cannot read {kind} vocabulary: use {factory}, which "
                         f"returns the class the vocabulary needs")
    if sentencepiece:
        return with_metadata(cls(**kwargs, **options), carried)
    unreachable = kwargs.pop("unreachable_tokens", {})    # {id: bytes}: decoded, never encoded
    tok = cls(**{**kwargs, "pattern": pre_tokenizer(kwargs.get("pattern"))}, **options)
    table = tok.id_to_bytes
    table.extend([None] * (max(unreachable, default=-1) + 1 - len(table)))
    for i, data in unreachable.items():
        table[i] = data if table[i] is None else table[i]
    return with_metadata(tok, carried)


def with_metadata(tok, carried: dict | None):
    """`tok` with `gguf_metadata` set to its own copy of `carried` (when given)."""
    if carried:
        tok.gguf_metadata = dict(carried)
    return tok


class TokenizerFiles:
    """The Tokenizer's loading, saving and training (see the module docstring).

    `gguf_metadata`: what the source file says beyond the vocabulary (chat template, padding id,
    …) as GGUF keys, ``{key: (GGUF type, value)}``, written back by a GGUF export
    (io/gguf/carry.py); empty (read-only) unless the tokenizer was read from such a file."""

    gguf_metadata = MappingProxyType({})
    sentencepiece_style = False   # which vocabularies `load` builds this class from

    @classmethod
    def load(cls, path_or_name, pattern=None, *, fast: bool = True):
        """"gpt2" / "r50k" / "cl100k" / "o200k" (shipped), "smollm2" / "deepseek-v4" (downloaded),
        a model folder, or a file: .tiktoken(.gz), tokenizer.json(.gz) (Hugging Face or minillm's
        format), .gguf (see formats/locate.py). `pattern` overrides the pre-tokenisation pattern;
        `fast=False` encodes on the reading path alone (the same ids, slower). A file of the other
        kind of vocabulary is a ValueError: `minillm.load_tokenizer` reads either."""
        return build(cls, read(path_or_name, pattern), fast=fast)

    @classmethod
    def from_gguf_metadata(cls, meta: dict, pattern=None, *, fast: bool = True):
        """Build from GGUF `tokenizer.ggml.*` metadata already parsed into a dict. Read from a file
        (io.gguf.read_gguf), its other `tokenizer.*` keys are kept in `gguf_metadata`."""
        return build(cls, read_gguf_metadata(meta, pattern),
                     "minillm.tokenizer_from_gguf_metadata(meta)", fast=fast)

    @classmethod
    def train(cls, text: str, vocab_size: int, pattern=None, special_tokens=(),
              trainer: str = "fast"):
        """Learn merges on `text` (see train.py). `vocab_size` counts the 256 bytes, the merges
        and the special tokens (ids after the merges)."""
        return build(cls, train_tokenizer(text, vocab_size, pattern, special_tokens, trainer))

    def save(self, path, format: str | None = None, **options) -> None:
        """tokenizer.json -> Hugging Face's format (+ tokenizer_config.json), other names (e.g.
        tokenizer.minillm.json) -> minillm's readable one; and a dump, `path`.vocab
        (formats/dispatch.py)."""
        write(self, path, format, **options)
