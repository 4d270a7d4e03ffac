"""A conversation -> its token ids and the loss mask: which tokens the model is taught to write.

Supervised fine-tuning trains on the assistant's replies only. The prompt (system and user
messages, every role header) is context the model reads, never text it should learn to produce:

    <|im_start|>system\\nYou are …<|im_end|>\\n<|im_start|>user\\nWhat is 2 + 2?<|im_end|>\\n
    <|im_start|>assistant\\n 4. <|im_end|> \\n
    ·························· ▲▲ ▲▲▲▲▲▲▲▲ ··      ▲ counted by the loss, · context only

Counted: each assistant reply's content and the ``<|im_end|>`` that ends it — the model must
learn to stop, and at chat time generation ends at that token (chat/chatml.py's stop ids). Not
counted: the header ``<|im_start|>assistant\\n`` (the prompt gives it) and the ``\\n`` after
``<|im_end|>`` (never generated).

The format is an object with one method, ``pieces(tokenizer, messages) -> [(ids, counted)]``:
the conversation's ids in order, cut into pieces that are counted or not. ``ChatMLFormat``
(SmolLM2, Qwen2) renders chat/chatml.py's format; another family's template is another object
with the same method.

subtle: an assistant reply is encoded apart from its header, as the model meets it when it
writes (the prompt ends with ``assistant\\n``, then come the reply's ids); ``chatml_ids`` encodes
header and content as one text. For ordinary replies both give the same ids (tested).

Example (token strings for ids): ``render(tok, [{"role": "user", "content": "Hi"},
{"role": "assistant", "content": "Hello"}], ChatMLFormat(default_system=None))``
-> ids ``<|im_start|> user \\n Hi <|im_end|> \\n <|im_start|> assistant \\n Hello <|im_end|> \\n``,
counted ``0 0 0 0 0 0 0 0 0 1 1 0``.
"""
from __future__ import annotations

import numpy as np

from minillm.chat.chatml import DEFAULT_SYSTEM, IM_END, IM_START, special_id, with_default_system


class ChatMLFormat:
    """ChatML pieces (chat/chatml.py's rules; ``default_system`` as there: None inserts none)."""
    name = "chatml"

    def __init__(self, default_system: str | None = DEFAULT_SYSTEM):
        self.default_system = default_system

    def pieces(self, tokenizer, messages) -> list[tuple[list[int], bool]]:
        start, end = special_id(tokenizer, IM_START), special_id(tokenizer, IM_END)
        text = tokenizer.encode_ordinary
        newline = text("\n")
        out = []
        for m in with_default_system(messages, self.default_system):
            if m["role"] == "assistant":
                out += [([start, *text("assistant\n")], False),        # the header: the prompt's
                        ([*text(m["content"]), end], True),            # the reply and its stop
                        (newline, False)]
            else:
                out.append(([start, *text(f"{m['role']}\n{m['content']}"), end, *newline], False))
        return out


def render(tokenizer, messages, fmt=None) -> tuple[np.ndarray, np.ndarray]:
    """-> (ids [L] int64, counted [L] bool): the whole conversation and which tokens the loss
    counts (``fmt``: a format object, default ``ChatMLFormat()``)."""
    pieces = (fmt or ChatMLFormat()).pieces(tokenizer, messages)
    ids = np.array([i for piece, _ in pieces for i in piece], np.int64)          # [L]
    counted = np.array([c for piece, c in pieces for _ in piece], bool)          # [L]
    return ids, counted


def training_pair(ids: np.ndarray, counted: np.ndarray) -> tuple[np.ndarray, ...]:
    """(ids [L], counted [L]) -> inputs [L−1], targets [L−1], loss mask [L−1]: position t reads
    ids[:t+1] and is scored on ids[t+1], counted when that target token is."""
    return ids[:-1], ids[1:], counted[1:]
