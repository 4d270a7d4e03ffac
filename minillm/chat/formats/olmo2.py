"""OLMo 2 Instruct (Tülu 3's format): ``<|role|>\\n`` content ``\\n``, replies closed by EOS.

    <|endoftext|><|system|>\\nYou are terse.\\n<|user|>\\nHi\\n
    <|assistant|>\\nHello!<|endoftext|>\\n
    <|user|>\\nAnd now?\\n<|assistant|>\\n          <- the generation prompt

    * the text opens with the BOS token, which is OLMo 2's EOS too: ``<|endoftext|>``;
    * a system or user message is its tag, a newline, the content as it is, a newline;
    * a reply is ``<|assistant|>\\n`` content ``<|endoftext|>``, and a newline after it unless it
      is the last message (so a finished conversation ends with EOS, and a rendering without the
      prompt is still a prefix of the next turn's);
    * the generation prompt is ``<|assistant|>\\n``, after the last message only: an empty
      conversation is the BOS token alone, prompt or not (the template writes it inside its loop).

subtle: ``<|system|>``, ``<|user|>`` and ``<|assistant|>`` are NOT special tokens in OLMo 2's
tokenizer (cl100k_base's BPE; its added tokens are ``<|endoftext|>``, ``<|im_start|>``,
``<|pad|>``, ...): they are spelled in ordinary tokens, merged with the newline and text around
them, as ``pieces_to_ids`` does with a marker the tokenizer does not hold.
"""
from __future__ import annotations

from minillm.chat.formats.base import ChatFormat, Marker

EOS = Marker("<|endoftext|>")
TAGS = {role: Marker(f"<|{role}|>") for role in ("system", "user", "assistant")}


def olmo2(messages, add_generation_prompt) -> list[str]:
    out: list[str] = [EOS]                                  # bos_token: the same token as EOS
    for i, m in enumerate(messages):
        last = i == len(messages) - 1
        if m["role"] == "assistant":
            out += [TAGS["assistant"], "\n" + m["content"], EOS] + ([] if last else ["\n"])
        else:
            out += [TAGS[m["role"]], "\n" + m["content"] + "\n"]
        if last and add_generation_prompt:
            out += [TAGS["assistant"], "\n"]
    return out


FORMATS = (ChatFormat("olmo2", "OLMo 2 Instruct", olmo2, ("<|endoftext|>",), "<|endoftext|>"),)
