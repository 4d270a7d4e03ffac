"""Mistral ``[INST]``: user turns between ``[INST]`` and ``[/INST]``, replies closed by ``</s>``.

    <s>[INST] Hi[/INST] Hello!</s>[INST] You are terse.\\n\\nAnd now?[/INST]

The generation prompt is implicit: a conversation ending with a user turn ends with ``[/INST]``,
where the reply starts (``add_generation_prompt`` changes nothing). Roles alternate user,
assistant, ... after an optional system message (a ValueError otherwise). The system message has
no turn of its own: it goes before the LAST user message's content, with a blank line, and only
when that message ends the conversation (a conversation ending with a reply has no system text).
subtle: so each new turn moves it: a rendering is not a prefix of the next turn's.

Spacing, the one difference between Mistral's template versions:

    mistral          (v3: Mistral 7B Instruct v0.3, Mixtral, Mistral Large 2407) ``[INST] `` with a
                     space after it; a reply is a space + its content trimmed + ``</s>``
    mistral-tekken   (v3-tekken: Mistral Nemo) no spaces: ``[INST]content[/INST]content</s>``

v1 (Mistral 7B v0.1/v0.2: ``' [INST] '``, the system message in the FIRST user turn) and v7
(``[SYSTEM_PROMPT]``) are not rendered: pick one of the two above with ``--chat-format``.
"""
from __future__ import annotations

from minillm.chat.formats.base import ChatFormat, Marker, alternating, split_system

BOS, EOS, INST, END_INST = Marker("<s>"), Marker("</s>"), Marker("[INST]"), Marker("[/INST]")


def mistral(messages, add_generation_prompt, space: str = " ") -> list[str]:
    system, rest = split_system(messages)
    alternating(rest)
    out = [BOS]
    for i, m in enumerate(rest):
        if m["role"] == "user":
            last = i == len(rest) - 1 and system is not None
            out += [INST, space + (system + "\n\n" if last else "") + m["content"], END_INST]
        else:
            reply = m["content"].strip() if space else m["content"]
            out += [space + reply, EOS]
    return out


def mistral_tekken(messages, add_generation_prompt) -> list[str]:
    return mistral(messages, add_generation_prompt, space="")


FORMATS = (
    ChatFormat("mistral", "Mistral (v3)", mistral, ("</s>",), "</s>"),
    ChatFormat("mistral-tekken", "Mistral Nemo (v3-tekken)", mistral_tekken, ("</s>",), "</s>"),
)
