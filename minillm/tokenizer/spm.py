"""SentencePiece-style BPE (Llama 2, Mistral, TinyLlama, Phi-3, Baichuan, Gemma 4): the Tokenizer
with three steps changed. Tokens are text, not bytes: a space is written "▁" (U+2581), and a
character that is no token falls back to its UTF-8 bytes, one `<0xNN>` token each.

    encode:  text -> " " + text (the space prefix, if the file asks for it) -> spaces as "▁"
             -> characters -> merge the adjacent pair that makes the best token, until none does
             -> ids; a part that is no token -> its bytes as <0xNN> tokens
    decode:  "▁" -> " ", <0xNN> -> the byte; the first token's leading space (the prefix) dropped

"Best" is the highest score (GGUF `tokenizer.ggml.scores`, llama.cpp's llm_tokenizer_spm), or the
lowest merge rank where the file lists merges (tokenizer.json's BPE with byte_fallback, GGUF
"gemma4"); ties go to the leftmost pair. Example with Llama 2's vocabulary::

    "Hello world" -> "▁Hello▁world" -> [▁, H, e, l, l, o, ▁, w, o, r, l, d] -> ... ->
    [▁Hello, ▁world] -> [15043, 3186]

Text segments between special or user-defined tokens each get the prefix (llama.cpp adds it to
every text fragment, all of which start the text or follow a token). A tokenizer.json (formats/hf/spm.py)
may instead name Metaspace's `prepend_scheme`: "always" (every segment that does not already start
with a space), "first" (only a segment at the very start of the text) or "never"; and decodes as
`tokenizers` does: its Strip decoder drops one leading space, and a run of <0xNN> tokens that is
not UTF-8 becomes one U+FFFD per byte (ByteFallback). The merge loop below is the
plain one (every step ranks every pair: O(n²)); `fast=True` runs fast/merge.merge_heap, the same
parts in O(n log n) (tests/tokenizer/test_spm.py checks them equal).
"""
from __future__ import annotations

import itertools
from types import MappingProxyType

import regex

from .bpe import NO_MERGE
from .formats.gguf.token_types import SPACE  # "▁", SentencePiece's visible space
from .tokenizer import Tokenizer


def merge_parts(parts: list[bytes], rank) -> list[bytes]:
    """BPE from given parts (characters, not bytes): merge the best-ranked adjacent pair,
    the leftmost of equal ranks, until no pair has a rank.

    >>> merge_parts([b"a", b"b", b"c"], lambda a, b: 0 if a + b == b"bc" else NO_MERGE)
    [b'a', b'bc']
    """
    parts = list(parts)
    while len(parts) > 1:
        ranks = [rank(a, b) for a, b in zip(parts, parts[1:])]
        best = min(ranks)
        if best == NO_MERGE:
            break
        i = ranks.index(best)
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return parts


def _run_text(data: bytes, is_byte_run: bool) -> str:
    """A run of tokens' bytes as text; an invalid run of byte tokens: U+FFFD for each byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "\ufffd" * len(data) if is_byte_run else data.decode("utf-8", errors="replace")


class SentencePieceBPE(Tokenizer):
    """A Tokenizer over SentencePiece-style tokens (see the module docstring).

    `pieces`: {token text: id} for every token (special ones too: llama.cpp looks them all up);
    `scores` ({id: score}) or `merges` ({(left text, right text): rank}) choose the merges;
    `byte_ids` ({byte: id}) are the <0xNN> tokens; `kinds` ({id: "text" | "byte" | "special" |
    "none"}) say how an id decodes; `pattern`: regex stages splitting the text first (Gemma 4
    splits at newlines; None: the whole text is one piece). `prepend_scheme` (None: llama.cpp's
    rule, `add_space_prefix` on every segment), `strip_space` (decode drops the first token's
    space; None: as `add_space_prefix`) and `byte_runs_replaced`: the tokenizer.json forms."""

    sentencepiece_style = True   # (the vocabularies `load` builds it from: files.py)

    def __init__(self, pieces: dict[str, int], *, scores: dict[int, float] | None = None,
                 merges: dict[tuple[str, str], int] | None = None, byte_ids: dict[int, int],
                 kinds: dict[int, str], special_tokens: dict[str, int], user_defined=(),
                 add_space_prefix: bool = True, pattern=None, newline_runs_whole: bool = False,
                 bos_id=None, eos_id=None, unk_id=None, prepend_scheme: str | None = None,
                 strip_space: bool | None = None, byte_runs_replaced: bool = False,
                 post_processor=None, fast: bool = True):
        if prepend_scheme not in (None, "always", "first", "never"):
            raise ValueError(f"prepend_scheme must be None, 'always', 'first' or 'never', got "
                             f"{prepend_scheme!r}")
        ordinary = {t.encode("utf-8"): i for t, i in pieces.items() if t not in special_tokens}
        super().__init__(ordinary, None, pattern or r"(?s:.+)", special_tokens, bos_id=bos_id,
                         eos_id=eos_id, unk_id=unk_id, user_defined=user_defined,
                         post_processor=post_processor, fast=False)
        self.scores, self.add_space_prefix = scores, add_space_prefix
        self.prepend_scheme, self.byte_runs_replaced = prepend_scheme, byte_runs_replaced
        self.strip_space = add_space_prefix if strip_space is None else strip_space
        self._kinds = kinds
        self.merges = merges
        self._pieces = {t.encode("utf-8"): i for t, i in pieces.items()}   # text bytes -> id
        self._byte_ids, self._newline_runs_whole, self._use_heap = byte_ids, newline_runs_whole, fast
        if merges is not None:
            pairs = {(a.encode("utf-8"), b.encode("utf-8")): r for (a, b), r in merges.items()}
            self._rank = lambda a, b: pairs.get((a, b), NO_MERGE)
        else:
            # a higher score merges first: rank = -score (floats; NO_MERGE is larger than all)
            negated = {t: -scores.get(i, 0.0) for t, i in self._pieces.items()}
            self._rank = lambda a, b: negated.get(a + b, NO_MERGE)
        self._split = None if pattern is None else regex.compile("|".join(self.pattern))
        for i, kind in kinds.items():              # how each id decodes (llama.cpp's rules)
            text = self.id_to_bytes[i]
            if kind == "text":
                self.id_to_bytes[i] = text.replace(SPACE.encode(), b" ")
            elif kind == "byte":
                self.id_to_bytes[i] = bytes([int(text[3:5], 16)])
            elif kind == "none":
                self.id_to_bytes[i] = b""

    @property
    def kinds(self) -> MappingProxyType:
        """How each id decodes, read-only: {id: "text" | "byte" | "special" | "none"} (the
        ``kinds`` it was built with; an id it does not list decodes as "none"). With Llama 2's
        vocabulary ``kinds[13]`` is "byte" (<0x0A>, a newline) and ``kinds[15043]`` "text" (▁Hello)."""
        return MappingProxyType(self._kinds)

    def _encode_text(self, text: str) -> list[int]:
        """One text segment -> ids (the seam of tokenizer.py, overridden)."""
        if not text:
            return []
        text = self._prefixed(text).replace(" ", SPACE)
        ids: list[int] = []
        for piece in (self._split.findall(text) if self._split else [text]):
            data = piece.encode("utf-8", errors="surrogateescape")
            if self._newline_runs_whole and not piece.strip("\n") and data in self._pieces:
                ids.append(self._pieces[data])        # (Gemma 4: a run of newlines, whole)
                continue
            chars = [c.encode("utf-8", errors="surrogateescape") for c in piece]
            ids.extend(self._ids(self._merge(chars)))
        return ids

    def _prefixed(self, text: str) -> str:
        """The segment with its space prefix ("first": added by encode, which sees the whole text)."""
        if self.prepend_scheme is None:
            return " " + text if self.add_space_prefix else text
        if self.prepend_scheme == "always" and not text.startswith((" ", SPACE)):
            return " " + text
        return text

    def _space_first(self, text: str, allowed) -> str:
        """Metaspace's "first": a space before the text if it starts with a text segment (not a
        special token) that does not start with a space; the segments themselves get none."""
        starts_with_text = text and self._specials.split(text, allowed)[0][1] is None
        return " " + text if starts_with_text and not text.startswith((" ", SPACE)) else text

    def encode(self, text: str, *, allowed_special=frozenset(), disallowed_special="all",
               add_special_tokens: bool = False) -> list[int]:
        """Tokenizer.encode (special tokens, post-processor); with prepend_scheme "first", the
        prefix is decided here, on the whole text."""
        if self.prepend_scheme == "first" and isinstance(text, str):
            allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
            self._specials.guard(text, disallowed - allowed)    # (its positions: in `text`)
            text = self._space_first(text, allowed)
        return super().encode(text, allowed_special=allowed_special,
                              disallowed_special=disallowed_special,
                              add_special_tokens=add_special_tokens)

    def encode_bytes(self, data: bytes) -> list[int]:
        if self.prepend_scheme == "first" and isinstance(data, (bytes, bytearray)):
            text = self._space_first(bytes(data).decode("utf-8", errors="surrogateescape"),
                                     self._specials.user_defined)
            data = text.encode("utf-8", errors="surrogateescape")
        return super().encode_bytes(data)

    def _merge(self, chars: list[bytes]) -> list[bytes]:
        if self._use_heap:
            from .fast.merge import merge_heap_parts
            return merge_heap_parts(chars, self._rank)
        return merge_parts(chars, self._rank)

    def _ids(self, parts: list[bytes]) -> list[int]:
        """Parts -> ids; a part that is no token -> its bytes' <0xNN> tokens (else unk)."""
        ids: list[int] = []
        for part in parts:
            if part in self._pieces:
                ids.append(self._pieces[part])
                continue
            for b in part:
                i = self._byte_ids.get(b, self.unk_id)
                if i is None:
                    raise ValueError(f"byte {b:02x} has no <0x{b:02X}> token and the vocabulary "
                                     f"no unknown token")
                ids.append(i)
        return ids

    def decode_bytes(self, ids) -> bytes:
        """ids -> bytes; the first token's leading space is dropped when encode adds the prefix
        (llama.cpp's detokenize: only the first token's, and only one space; `tokenizers`'
        Strip(" ", 1, 0) decoder: the same, as every token there has text)."""
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        data = super().decode_bytes(ids)
        if self.strip_space and ids and self.id_to_bytes[ids[0]].startswith(b" "):
            return data[1:]
        return data

    def decode(self, ids, errors: str = "replace") -> str:
        """ids -> text; with `byte_runs_replaced` (a tokenizer.json's ByteFallback decoder) a run
        of <0xNN> tokens that is not valid UTF-8 becomes one U+FFFD per byte, as in `tokenizers`:
        [<0xE4>, <0xB8>] -> "\ufffd\ufffd" (Python's "replace" would give one)."""
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        data = self.decode_bytes(ids)                           # (checks the ids, strips)
        if not self.byte_runs_replaced or errors != "replace":
            return data.decode("utf-8", errors=errors)
        text = "".join(_run_text(Tokenizer.decode_bytes(self, list(run)), is_byte)
                       for is_byte, run in itertools.groupby(
                           ids, lambda i: self._kinds.get(i) == "byte"))
        return text[1:] if len(data) < len(Tokenizer.decode_bytes(self, ids)) else text

    def token_bytes(self, token_id: int) -> bytes:
        """One token's bytes, its leading space kept (for streaming: stream.py)."""
        return Tokenizer.decode_bytes(self, [token_id])

    def merge_trace(self, piece: str) -> list:
        raise NotImplementedError("merge_trace shows byte-level BPE; a SentencePiece-style "
                                  "vocabulary merges characters (see spm.merge_parts)")

    def save(self, path, format=None, **options) -> None:
        raise ValueError("saving a SentencePiece-style vocabulary is not supported (minillm's "
                         "and the byte-level tokenizer.json writers would change its ids)")

    def __repr__(self) -> str:
        return (f"SentencePieceBPE(vocab_size={self.vocab_size}, specials="
                f"{len(self.special_tokens)}, rule={'scores' if self.merges is None else 'pairs'})")
