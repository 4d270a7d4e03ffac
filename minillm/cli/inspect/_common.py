"""What the inspecting commands share: reading the text to score, naming its flag in errors."""
from __future__ import annotations

from minillm.cli._input import TEXT_LIMIT, read_text


def read_input(name: str, flag: str) -> str:
    """The UTF-8 text of file ``name`` ("-": standard input), refused when empty."""
    text = read_text(name, TEXT_LIMIT, flag)
    if not text.strip():
        raise ValueError(f"{flag} {name}: the text is empty; give a file with text in it")
    return text


def check_range(flag: str, value: int | None, low: int, high: int | None = None,
                why: str = "") -> None:
    """``--flag`` within [low, high] or a ValueError naming it and what is allowed."""
    if value is None:
        return
    if value < low or (high is not None and value > high):
        allowed = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{flag} must be {allowed}{why}, got {value}")
