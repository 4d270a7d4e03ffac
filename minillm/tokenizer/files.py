"""What the Tokenizer offers around the idea: reading it from files (`load`, `from_gguf_metadata`),
learning it from text (`train`), writing it (`save`), and small conveniences (`encode_bytes`,
`encode_batch`, `merge_trace`, `token_bytes`, `vocab_size`, the repr).

`TokenizerFiles` is the base class of tokenizer.Tokenizer, which keeps only the reading path
(encode, decode); everything here is called on a Tokenizer as usual:

    >>> tok = Tokenizer.load("gpt2")                  # also "cl100k", "o200k", a path
    >>> tok.save("out/tokenizer.json")                # Hugging Face's format (+ a .vocab dump)
"""
from __future__ import annotations

from types import MappingProxyType

from . import bpe, formats, gguf_meta


_sentencepiece_class = None   # spm.SentencePieceBPE, handed over by the package (below)


def use_sentencepiece(cls) -> None:
    """Name the class a SentencePiece-style vocabulary builds (spm.SentencePieceBPE). Called once,
    by minillm/tokenizer/__init__.py: this module cannot import spm.py, which builds on
    tokenizer.py, which builds on this module (tests/test_import_graph.py forbids the cycle)."""
    global _sentencepiece_class
    _sentencepiece_class = cls


def build(cls, kwargs: dict, **options):
    """A reader's kwargs -> `cls(**kwargs)`, or a SentencePieceBPE (spm.py) for a
    SentencePiece-style vocabulary (its kwargs name `pieces`, not an `encoder`).
    `unreachable_tokens` ({id: bytes}, gguf_meta.py): ids no text gives, decoded as those bytes;
    `gguf_metadata`: kept as the tokenizer's attribute (TokenizerFiles.gguf_metadata)."""
    kwargs = dict(kwargs)
    carried = kwargs.pop("gguf_metadata", None)
    if "pieces" in kwargs:
        return with_metadata(_sentencepiece_class(**kwargs, **options), carried)
    unreachable = kwargs.pop("unreachable_tokens", {})    # {id: bytes}: decoded, never encoded
    tok = cls(**kwargs, **options)
    table = tok._id_to_bytes
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
    """The Tokenizer's loading, saving, training and conveniences (see the module docstring).

    `gguf_metadata`: what the source file says beyond the vocabulary (chat template, padding id,
    …) as GGUF keys, ``{key: (GGUF type, value)}``, written back by a GGUF export
    (io/gguf/carry.py); empty (read-only) unless the tokenizer was read from such a file."""

    gguf_metadata = MappingProxyType({})

    @classmethod
    def load(cls, path_or_name, pattern=None, *, fast: bool = True):
        """"gpt2" / "r50k" / "cl100k" / "o200k" (shipped), "smollm2" / "deepseek-v4" (downloaded),
        a model folder, or a file: .tiktoken(.gz), tokenizer.json(.gz) (Hugging Face or minillm's
        format), .gguf (see locate.py). `pattern` overrides the pre-tokenisation pattern;
        `fast=False` encodes on the reading path alone (the same ids, slower)."""
        return build(cls, formats.read(path_or_name, pattern), fast=fast)

    @classmethod
    def from_gguf_metadata(cls, meta: dict, pattern=None):
        """Build from GGUF `tokenizer.ggml.*` metadata already parsed into a dict. Read from a file
        (io.gguf.read_gguf), its other `tokenizer.*` keys are kept in `gguf_metadata`."""
        return build(cls, gguf_meta.read_gguf_metadata(meta, pattern))

    @classmethod
    def train(cls, text: str, vocab_size: int, pattern=None, special_tokens=(),
              trainer: str = "fast"):
        """Learn merges on `text` (see train.py). `vocab_size` counts the 256 bytes, the merges
        and the special tokens (ids after the merges)."""
        from .train import train_tokenizer
        return cls(**train_tokenizer(text, vocab_size, pattern, special_tokens, trainer))

    def save(self, path, format: str | None = None, **options) -> None:
        """tokenizer.json -> Hugging Face's format (+ tokenizer_config.json), other names (e.g.
        tokenizer.minillm.json) -> minillm's readable one; and a dump, `path`.vocab (formats.py)."""
        formats.write(self, path, format, **options)

    def encode_bytes(self, data: bytes) -> list[int]:
        """Arbitrary bytes -> ids, so that `decode_bytes(encode_bytes(b)) == b` for any bytes.

        Valid UTF-8 gives exactly `encode_ordinary(data.decode())`. Invalid bytes are carried
        through pre-tokenisation as lone surrogates (`surrogateescape`) and turned back into
        those bytes before BPE.
        """
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"encode_bytes expects bytes, got {type(data).__name__}")
        if self.normalizer:
            raise ValueError("encode_bytes is not defined for a tokenizer that normalises text")
        text = bytes(data).decode("utf-8", errors="surrogateescape")
        return [i for segment, token_id in self._specials.split(text, self._specials.user_defined)
                for i in (self._encode_text(segment) if token_id is None else [token_id])]

    def encode_batch(self, texts, **kwargs) -> list[list[int]]:
        """[text, ...] -> [ids, ...]; one thread, sharing the pre-token cache (fast/)."""
        if isinstance(texts, str):
            raise TypeError("encode_batch expects a list of str; use encode for one text")
        return [self.encode(t, **kwargs) for t in texts]

    def merge_trace(self, piece: str) -> list:
        """Every BPE merge of ONE pre-token, in order, as ``MergeStep(pair, rank, parts)``
        (display.py): ``for step in tok.merge_trace("红光"): print(step)``. No whole-piece
        look-up here: the trace is bpe.merge_reference's, step by step."""
        if not isinstance(piece, str):
            raise TypeError(f"merge_trace expects a str, got {type(piece).__name__}")
        steps: list = []
        bpe.merge_reference(piece.encode("utf-8", errors="surrogateescape"), self._rank,
                            trace=steps)
        return steps

    @property
    def user_defined(self) -> frozenset:
        """The special tokens that are vocabulary (GGUF user-defined, HF added tokens with
        special=false): every encode splits them out of the text (special.py)."""
        return self._specials.user_defined

    @property
    def vocab_size(self) -> int:
        """1 + the largest id (ids without a token, if any, are counted too)."""
        return len(self._id_to_bytes)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token: `token_bytes(995) == b" world"` (GPT-2)."""
        return self.decode_bytes([token_id])

    def __repr__(self) -> str:
        return (f"Tokenizer(vocab_size={self.vocab_size}, specials={len(self.special_tokens)}, "
                f"rule={'ranks' if self.merges is None else 'pairs'})")
