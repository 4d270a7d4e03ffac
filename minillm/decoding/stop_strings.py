"""Stop strings: end generation when the text contains one, without ever showing any of it.

A stop string ("\\n\\n", "User:") is text, not a token: it can be spelled by several tokens, start
in the middle of one, or be split across two ("Us" + "er:"). So the check runs on the decoded
text, and the text is released to the reader in two parts:

    released  everything that can no longer be the start of a stop string
    held      the longest tail that is a proper prefix of some stop string ("Us" for "User:")

Each new piece is appended to the held tail; if a stop string now occurs, the text before the
occurrence that is complete first (the earliest end; the earliest start among those ending
there) is released and the rest is dropped. Otherwise the new tail is held and everything before
it released.

subtle: "complete first", not "start first": with stops ("a", "baa"), the text "ba" already holds
"a", and generation ends there, before "baa" could ever be complete; so the text released is "b"
whether "baa" arrives in one piece or as "ba" + "a" (by earliest start, one piece gave "").

Why only the held tail must be searched: every character before it was checked when it was
released — a stop string starting there would have made that suffix a prefix of it, and the
held tail is the *longest* such suffix. So the first occurrence always starts inside the tail.

Example, stops ("User:",): push("Hi U") -> "Hi " (holds "U"); push("ser: x") -> "" and stopped;
push("Hi U") then push("p") -> "Up" (the held "U" turned out not to start "User:").

``Stops`` is what ends a generation, as one object: ids, these strings, and the model's EOS ids.
"""
from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class Stops:
    """What ends a generation, checked. ``ids``: one token id or several (the stop token is not
    yielded); ``strings``: text that ends it, trimmed from what is shown (needs ``tokenizer=``);
    ``eos``: the model's own EOS ids (``config.eos_ids``) end it too, as in transformers'
    ``generate`` (False: llama.cpp's ``--ignore-eos``). Ids are checked against the vocabulary
    once the model is known (``generate_args.stop_set``).

    Example: ``generate(model, ids, 50, stops=Stops(ids=13, strings=["\\n\\n"]), tokenizer=tok)``.
    """
    ids: frozenset[int] = frozenset()
    strings: tuple[str, ...] = ()
    eos: bool = True

    def __post_init__(self) -> None:
        ids = self.ids
        if isinstance(ids, (int, np.integer)) or isinstance(ids, (str, bytes)):
            ids = (ids,)                          # one id is fine (a str is refused just below)
        ids = tuple(ids)
        if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in ids):
            raise TypeError(f"stop ids must be an integer token id or a collection of them, got {self.ids!r}")
        if not isinstance(self.eos, bool):
            raise TypeError(f"stop_at_eos must be True or False (Stops.eos), got {self.eos!r}")
        object.__setattr__(self, "ids", frozenset(int(i) for i in ids))
        if type(self.strings) is not tuple or self.strings:       # (the default () needs no check)
            object.__setattr__(self, "strings", StopText(self.strings).stops)   # non-empty strs


class StopText:
    """push(piece) -> text safe to show now; ``stopped`` once a stop string has appeared."""

    def __init__(self, stop_strings=()):
        if isinstance(stop_strings, str):
            stop_strings = (stop_strings,)        # subtle: a bare str would iterate its characters
        stops = tuple(stop_strings)
        for s in stops:
            if not isinstance(s, str) or not s:
                raise ValueError(f"stop strings must be non-empty strings, got {s!r}")
        self.stops = stops
        self.held = ""
        self.stopped = False

    def push(self, piece: str) -> str:
        """Append ``piece``; return what can be shown. After a stop string, returns "" forever."""
        if self.stopped:
            return ""
        text = self.held + piece
        found = [(i + len(s), i) for s in self.stops if (i := text.find(s)) >= 0]   # (end, start)
        if found:                                   # trim: the stop string and what follows it
            self.stopped, self.held = True, ""
            return text[:min(found)[1]]
        n = self._held_length(text)
        self.held = text[len(text) - n:]
        return text[:len(text) - n]

    def flush(self) -> str:
        """End of generation for another reason: the held tail was not a stop string after all."""
        text, self.held = self.held, ""
        return text

    def _held_length(self, text: str) -> int:
        """Length of the longest suffix of ``text`` that is a proper prefix of a stop string."""
        longest = max((len(s) for s in self.stops), default=1) - 1
        for n in range(min(len(text), longest), 0, -1):
            tail = text[len(text) - n:]
            if any(s.startswith(tail) for s in self.stops):
                return n
        return 0
