"""Gemma turns: ``<start_of_turn>`` role ``\\n`` content (trimmed) ``<end_of_turn>\\n``.

    <bos><start_of_turn>user\\nYou are terse.\\n\\nHi<end_of_turn>\\n
    <start_of_turn>model\\n                 <- the generation prompt: the assistant is "model"

Gemma has no system role. The roles must alternate user, model, user, ... (a ValueError
otherwise, as the templates' ``raise_exception``).

    gemma2   (Gemma 1 and 2) a system message is refused: "System role not supported"
    gemma3   (Gemma 3) a first system message is folded into the first user turn: its content
             (NOT trimmed) and a blank line go before the user's (trimmed) content
"""
from __future__ import annotations

from minillm.chat.formats.base import ChatFormat, Marker, alternating, split_system

BOS, START, END = Marker("<bos>"), Marker("<start_of_turn>"), Marker("<end_of_turn>")


def turns(messages: list[dict], first_user_prefix: str, add_generation_prompt: bool) -> list[str]:
    alternating(messages)
    out = [BOS]
    for i, m in enumerate(messages):
        role = "model" if m["role"] == "assistant" else m["role"]
        prefix = first_user_prefix if i == 0 else ""
        out += [START, f"{role}\n{prefix}{m['content'].strip()}", END, "\n"]
    return out + ([START, "model\n"] if add_generation_prompt else [])


def gemma2(messages, add_generation_prompt) -> list[str]:
    if messages and messages[0]["role"] == "system":
        raise ValueError("System role not supported: Gemma 2's template refuses a system "
                         "message (Gemma 3's folds it into the first user turn)")
    return turns(messages, "", add_generation_prompt)


def gemma3(messages, add_generation_prompt) -> list[str]:
    system, rest = split_system(messages)
    return turns(rest, "" if system is None else system + "\n\n", add_generation_prompt)


STOPS = ("<end_of_turn>", "<eos>")
FORMATS = (
    ChatFormat("gemma2", "Gemma 1 / 2", gemma2, STOPS, START),
    ChatFormat("gemma3", "Gemma 3", gemma3, STOPS, START),
)
