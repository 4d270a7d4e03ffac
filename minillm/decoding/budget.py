"""Context budget: how much of the window is left for the answer, and what it costs.

A model reads at most ``window`` tokens at once, and everything shares them: the system prompt,
the conversation so far, tool definitions, retrieved (RAG) text, the new input — and the output,
which is generated into the same window. So

    left for output = window - Σ parts.

The explainer articles' example: a 32K window (32 × 1024 = 32768 tokens) with 24K (24576) used leaves 8K (8192)
for the new input and the answer. This is also why long chats "forget": the oldest turns no longer
fit and must be dropped.

Which parts do not fit: the parts are placed in the order given (put the ones you must keep first),
each taking its tokens if they fit in what is left of ``window - reserve_output``; a part that does
not fit is named in ``not_fitting`` and takes nothing, so a later, smaller part may still fit.

Cost: API prices are quoted per million tokens (input and output priced separately), so
    cost = input_tokens / 10⁶ · price_in + output_tokens / 10⁶ · price_out.
Example: 24 576 in, 1 000 out at 2 and 8 per million -> 0.049152 + 0.008 = 0.057152.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence


def count_tokens(part, tokenizer=None) -> int:
    """Token count of a part: an int (already counted), a token-id list, or a str (encoded with
    ``tokenizer.encode_ordinary(str) -> list[int]``, e.g. minillm's or tiktoken's)."""
    if isinstance(part, bool):
        raise TypeError("a token count must be an int, not a bool")
    if isinstance(part, int):
        if part < 0:
            raise ValueError(f"a token count must be >= 0, got {part}")
        return part
    if isinstance(part, str):
        if tokenizer is None or not hasattr(tokenizer, "encode_ordinary"):
            raise TypeError("counting a str needs a tokenizer with .encode_ordinary(str) -> "
                            "list[int]; pass tokenizer=... or give the count as an int")
        return len(tokenizer.encode_ordinary(part))
    if isinstance(part, Sequence) and not isinstance(part, (bytes, bytearray)):
        return len(part)                # subtle: bytes are a Sequence too, of bytes, not tokens
    raise TypeError(f"a part must be an int count, a str or a list of token ids, "
                    f"got {type(part).__name__}")


@dataclasses.dataclass(frozen=True)
class Budget:
    """The window's accounts: ``counts`` per part (in order), ``used``, ``left`` (may be < 0)."""
    window: int
    counts: dict[str, int]
    reserve_output: int
    not_fitting: tuple[str, ...]

    @property
    def used(self) -> int:
        return sum(self.counts.values())

    @property
    def left(self) -> int:
        """Tokens left for the output: window - used (negative when the parts overflow)."""
        return self.window - self.used

    @property
    def left_after_dropping(self) -> int:
        """Tokens left for the output once the ``not_fitting`` parts are left out."""
        return self.left + sum(self.counts[name] for name in self.not_fitting)

    @property
    def fits(self) -> bool:
        return not self.not_fitting


def context_budget(window: int, parts: Mapping[str, object], tokenizer=None,
                   reserve_output: int = 0) -> Budget:
    """Account for ``parts`` (name -> int count, str or id list) in a ``window``-token context.

    Example: ``context_budget(32768, {"system": 2000, "history": 22576}).left`` -> 8192.
    """
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        raise ValueError(f"window must be a positive int (tokens), got {window!r}")
    if isinstance(reserve_output, bool) or not isinstance(reserve_output, int) \
            or not 0 <= reserve_output <= window:
        raise ValueError(f"reserve_output must be an int in [0, window={window}], "
                         f"got {reserve_output!r}")
    counts = {name: count_tokens(part, tokenizer) for name, part in parts.items()}
    room, not_fitting = window - reserve_output, []
    for name, n in counts.items():
        if n <= room:
            room -= n
        else:
            not_fitting.append(name)
    return Budget(window, counts, reserve_output, tuple(not_fitting))


def estimate_cost(input_tokens, output_tokens, input_per_m: float, output_per_m: float,
                  tokenizer=None) -> float:
    """in / 10⁶ · price_in + out / 10⁶ · price_out, in the prices' currency (prices per million tokens).

    The token arguments take what ``count_tokens`` takes: an int, an id list, or a str with a
    tokenizer. Example: ``estimate_cost(2_000_000, 500_000, 0.5, 1.5)`` -> 1.0 + 0.75 = 1.75.
    """
    n_in = count_tokens(input_tokens, tokenizer)
    n_out = count_tokens(output_tokens, tokenizer)
    for name, price in (("input_per_m", input_per_m), ("output_per_m", output_per_m)):
        if isinstance(price, bool) or not isinstance(price, (int, float)) \
                or not math.isfinite(price) or price < 0:
            raise ValueError(f"{name} must be a finite price >= 0, got {price!r}")
    return n_in / 1e6 * input_per_m + n_out / 1e6 * output_per_m
