"""One request body's fields, each read with its type and range checked: a 400 naming the field.

JSON gives the server ``int``, ``float``, ``bool``, ``str``, ``list``, ``dict`` or ``None``; a
field is read by the kind it must be, and anything else is refused with the field's name, what
was given and what is allowed. subtle: ``True`` is an ``int`` in Python, so a bool is refused
where a number is asked; Python's ``json`` reads ``NaN`` and ``Infinity`` (not JSON, but some
clients send them), so every number is also checked finite.

    temperature = number(body, "temperature", 1.0, low=0.0)
    n_top = integer(body, "top_logprobs", 0, low=0, high=20)

A field that is absent or ``null`` takes its default (OpenAI's clients send ``null`` for "not
given").
"""
from __future__ import annotations

import math

from minillm.server.errors import bad


def _given(body: dict, name: str):
    return body.get(name)


def number(body: dict, name: str, default, *, low=None, high=None, low_open=False):
    """A finite int or float in [low, high] (``low_open``: (low, high]), else a 400."""
    value = _given(body, name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad(name, f"{name} must be a number, got {_kind(value)}")
    if not math.isfinite(value):
        raise bad(name, f"{name} must be a finite number, got {value}")
    if (low is not None and (value < low or (low_open and value == low))) or \
            (high is not None and value > high):
        raise bad(name, f"{name} must be in {'(' if low_open else '['}{low}, "
                        f"{'∞)' if high is None else f'{high}]'}, got {value}")
    return float(value)


def integer(body: dict, name: str, default, *, low=None, high=None):
    """An int in [low, high] (a float with no fraction, e.g. 16.0, is refused: say 16)."""
    value = _given(body, name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad(name, f"{name} must be an integer, got {_kind(value)}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise bad(name, f"{name} must be an integer in [{low}, {'∞' if high is None else high}], "
                        f"got {value}")
    return value


def boolean(body: dict, name: str, default: bool) -> bool:
    value = _given(body, name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise bad(name, f"{name} must be true or false, got {_kind(value)}")
    return value


def string(body: dict, name: str, default=None):
    value = _given(body, name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise bad(name, f"{name} must be a string, got {_kind(value)}")
    return value


def mapping(body: dict, name: str):
    """A JSON object, or None when absent."""
    value = _given(body, name)
    if value is not None and not isinstance(value, dict):
        raise bad(name, f"{name} must be a JSON object, got {_kind(value)}")
    return value


def stop_strings(body: dict, limit: int = 16) -> tuple[str, ...]:
    """``stop``: a string or a list of at most ``limit`` non-empty strings (OpenAI allows 4;
    llama-server more)."""
    value = _given(body, "stop")
    if value is None:
        return ()
    stops = [value] if isinstance(value, str) else value
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise bad("stop", f"stop must be a non-empty string or a list of them, got {_kind(value)}")
    if len(stops) > limit:
        raise bad("stop", f"stop takes at most {limit} strings, got {len(stops)}")
    return tuple(dict.fromkeys(stops))


def logit_bias(body: dict, vocab_size: int):
    """``logit_bias``: {"token id": bias in [-100, 100]} (OpenAI's form: the ids are strings)."""
    value = mapping(body, "logit_bias")
    if not value:
        return None
    out = {}
    for key, bias in value.items():
        if not (isinstance(key, str) and key.isdigit() and int(key) < vocab_size):
            raise bad("logit_bias", f"logit_bias keys must be token ids in [0, {vocab_size}), "
                                    f"got {key!r}")
        if isinstance(bias, bool) or not isinstance(bias, (int, float)) or \
                not -100 <= bias <= 100:                  # (NaN fails the range too)
            raise bad("logit_bias", f"logit_bias[{key!r}] must be a number in [-100, 100], "
                                    f"got {_kind(bias)}")
        out[int(key)] = float(bias)
    return out


def _kind(value) -> str:
    """What a JSON value is, for messages: ``'abc' (a string)``; long values shortened."""
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "an array", dict: "an object", type(None): "null"}
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f"{shown} ({names.get(type(value), type(value).__name__)})"
