"""ChatML and its variants: SmolLM2, Qwen2.5, Qwen3 (and any plain ChatML model).

Every message is ``<|im_start|>`` role ``\\n`` content ``<|im_end|>`` ``\\n``; the generation prompt
is ``<|im_start|>assistant\\n``. The variants differ only in the system message and in thinking:

    chatml    the messages as they are (no default system message)
    smollm2   SmolLM2's default system message ("You are a helpful AI assistant named SmolLM, ...")
              goes first when the conversation does not start with one (../chatml.py)
    qwen2.5   a system message always opens: the first message's, else "You are Qwen, created by
              Alibaba Cloud. You are a helpful assistant."
    qwen3     no default system message; thinking, as Qwen3's template does it:
              * an assistant message written as ``<think>\\nR\\n</think>\\n\\nA`` keeps its
                reasoning R only after the last user query (the turn being answered); earlier
                turns keep A only;
              * the LAST assistant message after that query always gets a think block, an empty
                one (``<think>\\n\\n</think>\\n\\n``) if it had none;
              * option ``enable_thinking=False`` appends the empty think block to the generation
                prompt, so the model answers without reasoning (default True: it reasons first).
              subtle: so rendering a prefix of a conversation is not always a prefix of the
              whole (an earlier turn loses its reasoning); the chat's cache keeps what matches.
    (a user message wrapped in ``<tool_response>...</tool_response>`` is a tool's answer, not a
    query: Qwen3 skips it when it looks for the last query.)

``<think>`` and ``</think>`` are markers: Qwen3's tokenizer holds them as added tokens.
"""
from __future__ import annotations

from minillm.chat.chatml import DEFAULT_SYSTEM, IM_END, IM_START, with_default_system
from minillm.chat.formats.base import ChatFormat, Marker, split_system

QWEN25_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
START, END, THINK, UNTHINK = Marker(IM_START), Marker(IM_END), Marker("<think>"), Marker("</think>")


def turn(role: str, content: str) -> list[str]:
    return [START, f"{role}\n{content}", END, "\n"]


def prompt(add_generation_prompt: bool) -> list[str]:
    return [START, "assistant\n"] if add_generation_prompt else []


def chatml(messages, add_generation_prompt) -> list[str]:
    rendered = [p for m in messages for p in turn(m["role"], m["content"])]
    return rendered + prompt(add_generation_prompt)


def smollm2(messages, add_generation_prompt) -> list[str]:
    return chatml(with_default_system(messages, DEFAULT_SYSTEM), add_generation_prompt)


def qwen25(messages, add_generation_prompt) -> list[str]:
    system, rest = split_system(messages)
    return chatml([{"role": "system", "content": QWEN25_SYSTEM if system is None else system}]
                  + rest, add_generation_prompt)


def last_query(messages) -> int:
    """Index of the last user message that is not a tool's answer (else the last index)."""
    for i in range(len(messages) - 1, -1, -1):
        content = messages[i]["content"]
        if messages[i]["role"] == "user" and not (content.startswith("<tool_response>")
                                                  and content.endswith("</tool_response>")):
            return i
    return len(messages) - 1


def split_thinking(content: str) -> tuple[str, str]:
    """``"<think>\\nR\\n</think>\\n\\nA"`` -> (R, A), as Qwen3's template splits it; no ``</think>``:
    ("", content)."""
    if "</think>" not in content:
        return "", content
    before, answer = content.split("</think>")[0], content.split("</think>")[-1]
    return before.rstrip("\n").split("<think>")[-1].lstrip("\n"), answer.lstrip("\n")


def qwen3(messages, add_generation_prompt, enable_thinking: bool = True) -> list[str]:
    if not isinstance(enable_thinking, bool):
        raise TypeError(f"enable_thinking must be a bool, got {enable_thinking!r}")
    query = last_query(messages)
    out: list[str] = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant":                 # system (first or not) and user: plain
            out += turn(m["role"], m["content"])
            continue
        reasoning, answer = split_thinking(m["content"])
        if i > query and (i == len(messages) - 1 or reasoning):
            out += [START, "assistant\n", THINK, "\n" + reasoning.strip("\n") + "\n", UNTHINK,
                    "\n\n" + answer.lstrip("\n"), END, "\n"]
        else:
            out += turn("assistant", answer)
    out += prompt(add_generation_prompt)
    if add_generation_prompt and not enable_thinking:
        out += [THINK, "\n\n", UNTHINK, "\n\n"]
    return out


STOPS = (IM_END, "<|endoftext|>")
FORMATS = (
    ChatFormat("chatml", "ChatML", chatml, STOPS, IM_START),
    ChatFormat("smollm2", "SmolLM2", smollm2, STOPS, IM_START, DEFAULT_SYSTEM),
    ChatFormat("qwen2.5", "Qwen2.5", qwen25, STOPS, IM_START, QWEN25_SYSTEM),
    ChatFormat("qwen3", "Qwen3", qwen3, STOPS, IM_START, options={"enable_thinking": True}),
)
