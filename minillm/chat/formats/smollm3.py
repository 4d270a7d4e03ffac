"""SmolLM3: ChatML turns after a system block of metadata, with a reasoning mode.

    <|im_start|>system\\n## Metadata\\n\\nKnowledge Cutoff Date: June 2025\\n
    Today Date: 03 December 2026\\nReasoning Mode: /no_think\\n\\n
    ## Custom Instructions\\n\\nYou are terse.\\n\\n                 <- (no <|im_end|>: see below)
    <|im_start|>user\\nHi<|im_end|>\\n
    <|im_start|>assistant\\n<think>\\n\\n</think>\\nHello!<|im_end|>\\n
    <|im_start|>assistant\\n<think>\\n\\n</think>\\n       <- the generation prompt, /no_think

The reasoning mode is ``/think`` (option ``enable_thinking``, default True, as the template) unless
the first message is a system message containing ``/no_think`` or ``/think`` (that wins, and the
words are removed from it; its trailing whitespace too). The system block always comes first:
the system message's content as "custom instructions", else a default text (a long one asking
for a ``<think>`` section in ``/think`` mode, a short one in ``/no_think``). The system message
is not repeated as a turn (nor any later one: the template leaves system messages out of its
loop). In ``/no_think`` mode every reply and the generation prompt start with an empty think
block; in ``/think`` mode a reply is written as given (its leading newlines stripped).

Two versions of the template:

    smollm3          Hugging Face's (HuggingFaceTB/SmolLM3-3B). It dates the block TODAY
                     (``strftime_now("%d %B %Y")``); minillm never reads the clock here: option
                     ``date_string`` ("03 December 2026") is required, and ``Chat`` /
                     ``chat --model`` pass today's date explicitly and say so
                     (detect.choose_format). subtle: without tools the template never closes
                     the system block: no ``<|im_end|>\\n`` before the first user turn. A
                     system message containing ``/system_override`` replaces the whole block
                     by its text (that one is closed).
    smollm3-unsloth  the edited copy GGUF files carry (llama.cpp's models/templates,
                     "Edits made by Unsloth"): no date line, no override, the block closed.

Tools (``xml_tools``, ``python_tools``, the ``tool`` role) are not rendered.
"""
from __future__ import annotations

from minillm.chat.chatml import IM_END, IM_START
from minillm.chat.formats.base import ChatFormat, Marker, split_system

START, END, THINK, UNTHINK = Marker(IM_START), Marker(IM_END), Marker("<think>"), Marker("</think>")
NO_THINK_SYSTEM = ["You are a helpful AI assistant named SmolLM, trained by Hugging Face.\n\n"]
THINK_SYSTEM = [  # (the <think> and </think> it mentions are the markers, as the tokenizer sees)
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face. Your role as an "
    "assistant involves thoroughly exploring questions through a systematic thinking process "
    "before providing the final precise and accurate solutions. This requires engaging in a "
    "comprehensive cycle of analysis, summarizing, exploration, reassessment, reflection, "
    "backtracking, and iteration to develop well-considered thinking process. Please structure "
    "your response into two main sections: Thought and Solution using the specified format: ",
    THINK, " Thought section ", UNTHINK,
    " Solution section. In the Thought section, detail your reasoning process in steps. Each step "
    "should include detailed considerations such as analysing questions, summarizing relevant "
    "findings, brainstorming new ideas, verifying the accuracy of the current steps, refining any "
    "errors, and revisiting previous steps. In the Solution section, based on various attempts, "
    "explorations, and reflections from the Thought section, systematically present the final "
    "solution that you deem correct. The Solution section should be logical, accurate, and concise "
    "and detail necessary steps needed to reach the conclusion.\n\n"]
EMPTY_THINK = [THINK, "\n\n", UNTHINK, "\n"]


def system_block(custom: str | None, think: bool, date_string: str | None) -> list[str]:
    """The block up to the custom instructions' end (``date_string`` None: no date line)."""
    date = "" if date_string is None else f"Today Date: {date_string}\n"
    head = (f"system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\n{date}Reasoning Mode: "
            f"{'/think' if think else '/no_think'}\n\n## Custom Instructions\n\n")
    return [START, head] + ([custom + "\n\n"] if custom else THINK_SYSTEM if think
                            else NO_THINK_SYSTEM)


def smollm3(messages, add_generation_prompt, enable_thinking: bool = True,
            date_string: str | None = None, original: bool = True) -> list[str]:
    if not isinstance(enable_thinking, bool):
        raise TypeError(f"enable_thinking must be a bool, got {enable_thinking!r}")
    if original and not isinstance(date_string, str):
        raise ValueError("SmolLM3's template dates its system block with today's date: pass it, "
                         "e.g. get_format('smollm3').with_options(date_string='03 December "
                         f"2026') (the template's '%d %B %Y'); got {date_string!r}")
    system, _ = split_system(messages)
    think = enable_thinking
    if system is not None and "/no_think" in system:
        think = False
    elif system is not None and "/think" in system:
        think = True
    # the system message without its switches: the "custom instructions"
    custom = None if system is None else \
        system.replace("/no_think", "").replace("/think", "").rstrip()
    if original and custom is not None and "/system_override" in system:
        out = [START, "system\n" + custom.replace("/system_override", "").rstrip(), END, "\n"]
    else:
        out = system_block(custom, think, date_string if original else None)
        out += [] if original else [END, "\n"]       # the original leaves it open (no tools)
    for m in messages:
        if m["role"] == "user":
            out += [START, "user\n" + m["content"], END, "\n"]
        elif m["role"] == "assistant":
            out += [START, "assistant\n"] + ([] if think else EMPTY_THINK) + \
                   [m["content"].lstrip("\n"), END, "\n"]
    if add_generation_prompt:
        out += [START, "assistant\n"] + ([] if think else EMPTY_THINK)
    return out


def smollm3_unsloth(messages, add_generation_prompt, enable_thinking: bool = True) -> list[str]:
    return smollm3(messages, add_generation_prompt, enable_thinking, None, original=False)


STOPS = (IM_END, "<|end_of_text|>")
FORMATS = (
    ChatFormat("smollm3", "SmolLM3", smollm3, STOPS, IM_START,
               options={"enable_thinking": True, "date_string": None}),
    ChatFormat("smollm3-unsloth", "SmolLM3 (GGUF copy)", smollm3_unsloth, STOPS, IM_START,
               options={"enable_thinking": True}),
)
