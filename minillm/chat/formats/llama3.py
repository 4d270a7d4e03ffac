"""Llama 3 headers: every message is a header, two newlines, the content trimmed, ``<|eot_id|>``.

    <|begin_of_text|><|start_header_id|>user<|end_header_id|>\\n\\nHi<|eot_id|>
    <|start_header_id|>assistant<|end_header_id|>\\n\\n          <- the generation prompt

    llama3     (Llama 3) ``<|begin_of_text|>`` before the first message only (none for an empty
               conversation); every content stripped of surrounding whitespace (Jinja's trim)
    llama3.1   (Llama 3.1 and 3.3) a system header ALWAYS opens, with a preamble, then the
               system message's content (trimmed; empty when there is none):
                   Cutting Knowledge Date: December 2023\\nToday Date: 26 Jul 2024\\n\\n
               option ``date_string`` (default "26 Jul 2024", the template's own default)
    llama3.2   (Llama 3.2) the same, but the template dates it TODAY when not told otherwise:
               ``date_string`` defaults to today's date ("03 Dec 2026", ``%d %b %Y``), as
               transformers renders it; pass a fixed one for reproducible prompts.
               subtle: a chat running past midnight changes its first line: the cache keeps
               only what still matches.

Tools (``Environment: ipython``, tool calls) are not rendered: messages are system, user and
assistant text. A system message that is not the first is an ordinary header (as the template).
"""
from __future__ import annotations

import time

from minillm.chat.formats.base import ChatFormat, Marker, split_system

BOS, START, END, EOT = (Marker("<|begin_of_text|>"), Marker("<|start_header_id|>"),
                        Marker("<|end_header_id|>"), Marker("<|eot_id|>"))
LLAMA31_DATE = "26 Jul 2024"


def header(role: str, content: str) -> list[str]:
    return [START, role, END, "\n\n" + content, EOT]


def prompt(add_generation_prompt: bool) -> list[str]:
    return [START, "assistant", END, "\n\n"] if add_generation_prompt else []


def llama3(messages, add_generation_prompt) -> list[str]:
    out = [BOS] if messages else []
    for m in messages:
        out += header(m["role"], m["content"].strip())
    return out + prompt(add_generation_prompt)


def llama31(messages, add_generation_prompt, date_string: str | None = LLAMA31_DATE) -> list[str]:
    """Llama 3.1 / 3.2 / 3.3: the system header with its preamble, then every message."""
    if date_string is None:                     # Llama 3.2's template: today's date
        date_string = time.strftime("%d %b %Y")
    if not isinstance(date_string, str):
        raise TypeError(f"date_string must be a str (e.g. '26 Jul 2024'), got {date_string!r}")
    system, rest = split_system(messages)
    preamble = f"Cutting Knowledge Date: December 2023\nToday Date: {date_string}\n\n"
    out = [BOS] + header("system", preamble + (system or "").strip())
    for m in rest:
        out += header(m["role"], m["content"].strip())
    return out + prompt(add_generation_prompt)


STOPS = ("<|eot_id|>", "<|eom_id|>", "<|end_of_text|>")
FORMATS = (
    ChatFormat("llama3", "Llama 3", llama3, STOPS, START),
    ChatFormat("llama3.1", "Llama 3.1 / 3.3", llama31, STOPS, START,
               options={"date_string": LLAMA31_DATE}),
    ChatFormat("llama3.2", "Llama 3.2", llama31, STOPS, START, options={"date_string": None}),
)
