"""Decoding a stream of ids (as a model generates them) into text pieces, never a broken character.
Where it runs — shared (every streamed generation's text, the engine and --reference alike): StreamDecoder.feed.

A token may hold part of a UTF-8 character: GPT-2 writes "海" (e6 b5 b7) as two tokens `<e6 b5>`
and `<b7>`. Decoding each token alone would print two U+FFFD. A stream decoder keeps the bytes of
an incomplete character until the bytes that complete it arrive::

    dec = StreamDecoder(tok)
    dec.feed(38184)     -> ""      (holds e6 b5: a 3-byte character has begun)
    dec.feed(115)       -> "海"
    dec.flush()         -> ""      (at the end, held bytes become U+FFFD)

The rule: a UTF-8 lead byte says how many bytes its character has (110xxxxx: 2, 1110xxxx: 3,
11110xxx: 4); text is emitted up to the last character that is complete, and bytes that can never
be part of a valid character are replaced at once. Python's incremental UTF-8 decoder implements
exactly this rule, with the same replacements as `bytes.decode(errors="replace")`, so the
concatenated pieces always equal `tok.decode(ids)` (a property test checks it).
"""
from __future__ import annotations

import codecs


class StreamDecoder:
    """feed(id) -> the text that is complete so far; flush() -> what is left."""

    def __init__(self, tokenizer, errors: str = "replace"):
        self._token_bytes = tokenizer.token_bytes
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors=errors)

    def feed(self, token_id: int) -> str:
        return self._utf8.decode(self._token_bytes(token_id))

    def flush(self) -> str:
        """End of stream: held bytes of an unfinished character become U+FFFD. Resets the state."""
        text = self._utf8.decode(b"", final=True)
        self._utf8.reset()
        return text
