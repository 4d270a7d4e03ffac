"""Which chat format a model uses, recognised from its chat template (a Jinja program).

The template travels with the model: GGUF ``tokenizer.chat_template``, a Hugging Face folder's
``tokenizer_config.json`` ``chat_template`` or ``chat_template.jinja``; minillm keeps it on the
tokenizer (``tokenizer.gguf_metadata``, io/gguf/carry.py). Templates of one family differ in
whitespace, quoting and tool handling from release to release, so they are recognised by their
MARKERS, never by equality with a known string:

    <|start_header_id|>     llama3; with "Cutting Knowledge Date": llama3.1, llama3.2 if it asks
                            for today's date (``strftime_now``)
    <start_of_turn>         gemma2 if it refuses a system role, else gemma3
    <|user|> and <|end|>    phi3; phi3.5 if an empty system message is skipped (the first
                            Phi-3 mini template, which drops system messages, is read as phi3:
                            the same prompt when there is none and the conversation
                            ends with a user turn)
    <|user|> + content + \\n  olmo2 (the Tülu format of OLMo 2 Instruct: no <|end|>, a user turn
                            ends with a newline)
    [INST]                  mistral-tekken with no space after [INST], mistral with one; the
                            v1 (' [INST] ') and v7 ([SYSTEM_PROMPT]) templates are not recognised
    <|im_start|>            smollm3 by its metadata block ("Reasoning Mode"; smollm3-unsloth
                            without the date line); qwen3 with its thinking rules; qwen2.5 and
                            smollm2 by their default system messages; chatml if it inserts
                            no default system message and has no thinking, else not
                            recognised (a default minillm does not know would be left out)

Example: ``detect_format(tok.gguf_metadata["tokenizer.chat_template"][1])`` -> "smollm2".
"""
from __future__ import annotations

import time

import regex

from minillm.chat.formats import FORMATS, get_format

FALLBACK = "smollm2"     # what minillm rendered before it read templates: ChatML, SmolLM2's system


def detect_format(template: str) -> str | None:
    """The name of the chat format ``template`` renders, or None when none is recognised."""
    if not isinstance(template, str):
        raise TypeError(f"a chat template is a str, got {type(template).__name__}")
    has = template.__contains__
    if has("<|start_header_id|>"):
        if has("Cutting Knowledge Date"):
            return "llama3.2" if has("strftime_now") else "llama3.1"
        return "llama3"
    if has("<start_of_turn>"):
        return "gemma2" if has("System role not supported") else "gemma3"
    if has("<|user|>") and has("<|end|>"):
        empty_system = regex.search(r"""==\s*['"]system['"]\s+and\s+message\[""", template)
        return "phi3.5" if empty_system else "phi3"
    if regex.search(r"""<\|user\|>\\n['"]\s*\+\s*message\[['"]content['"]\]\s*\+\s*['"]\\n""",
                    template):
        return "olmo2"
    if has("[INST]"):
        if has("[SYSTEM_PROMPT]") or regex.search(r"""['"] \[INST\]""", template):
            return None                                  # v7, or v1's leading space
        if regex.search(r"""\[INST\]['"]""", template):
            return "mistral-tekken"
        return "mistral" if regex.search(r"""\[INST\] ['"]""", template) else None
    if has("<|im_start|>"):
        return _chatml_variant(template)
    return None


def _chatml_variant(template: str) -> str | None:
    has = template.__contains__
    if has("## Metadata") and has("Reasoning Mode: "):
        return "smollm3" if has("Today Date: ") else "smollm3-unsloth"
    if has("<think>") or has("enable_thinking"):
        return "qwen3" if has("last_query_index") else None
    if has("You are Qwen, created by Alibaba Cloud"):
        return "qwen2.5"
    if has("named SmolLM"):
        return "smollm2"
    default_system = regex.search(r"""!=\s*['"]system['"]|Knowledge Cutoff""", template)
    return None if default_system else "chatml"


def template_of(tokenizer) -> str | None:
    """The chat template the tokenizer's source file carried, or None."""
    carried = getattr(tokenizer, "gguf_metadata", None) or {}
    value = carried.get("tokenizer.chat_template")
    return value[1] if isinstance(value, tuple) and isinstance(value[1], str) else None


def choose_format(tokenizer, name: str | None = None):
    """-> (ChatFormat, a sentence saying which and why). ``name`` (``--chat-format``) wins; else
    the tokenizer's chat template decides; else ChatML (SmolLM2's), said as such."""
    if name is not None:
        fmt = get_format(name)
        return dated(fmt, f"chat format {fmt.name} ({fmt.family}), as asked")
    template = template_of(tokenizer)
    found = None if template is None else detect_format(template)
    if found is not None:
        return dated(FORMATS[found], f"chat format {found} ({FORMATS[found].family}), recognised "
                                     f"from the model's chat template")
    why = ("the model carries no chat template" if template is None else
           "the model's chat template is not one minillm recognises")
    return FORMATS[FALLBACK], (f"{why}: using ChatML ({FALLBACK}, with SmolLM2's default system "
                               f"prompt); choose another with --chat-format "
                               f"({', '.join(FORMATS)})")


def dated(fmt, note: str):
    """SmolLM3's template writes today's date into its system block; the format itself never
    reads the clock (its ``date_string`` is required), so a chat dates it here, once, and says
    so: -> (the format with ``date_string`` set, the note)."""
    if fmt.name != "smollm3" or fmt.options["date_string"] is not None:
        return fmt, note
    today = time.strftime("%d %B %Y")
    return fmt.with_options(date_string=today), f"{note}; dated {today} (today), as SmolLM3's " \
                                                "template does"
