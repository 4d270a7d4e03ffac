"""Phi-3 tags: ``<|role|>\\n`` content ``<|end|>\\n``, contents as they are (not trimmed).

    <|system|>\\nYou are terse.<|end|>\\n<|user|>\\nHi<|end|>\\n
    <|assistant|>\\n                        <- the generation prompt

    phi3     (Phi-3 mini / small / medium, the updated templates) every system message is kept
    phi3.5   (Phi-3.5 mini) a system message with EMPTY content is left out

subtle: without the generation prompt the templates end the text with the EOS token
``<|endoftext|>`` (a finished conversation, as in training data), so a rendering without the
prompt is not a prefix of the next turn's.
"""
from __future__ import annotations

from minillm.chat.formats.base import ChatFormat, Marker

END, EOS = Marker("<|end|>"), Marker("<|endoftext|>")
TAGS = {role: Marker(f"<|{role}|>") for role in ("system", "user", "assistant")}


def phi3(messages, add_generation_prompt, skip_empty_system: bool = False) -> list[str]:
    out: list[str] = []
    for m in messages:
        if m["role"] == "system" and skip_empty_system and not m["content"]:
            continue
        out += [TAGS[m["role"]], "\n" + m["content"], END, "\n"]
    return out + ([TAGS["assistant"], "\n"] if add_generation_prompt else [EOS])


def phi35(messages, add_generation_prompt) -> list[str]:
    return phi3(messages, add_generation_prompt, skip_empty_system=True)


STOPS = ("<|end|>", "<|endoftext|>")
FORMATS = (
    ChatFormat("phi3", "Phi-3", phi3, STOPS, "<|user|>"),
    ChatFormat("phi3.5", "Phi-3.5", phi35, STOPS, "<|user|>"),
)
