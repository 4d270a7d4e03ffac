"""A conversation -> its token ids and the loss mask: which tokens the model is taught to write.

Supervised fine-tuning trains on the assistant's replies only. The prompt (system and user
messages, every role header) is context the model reads, never text it should learn to produce:

    <|im_start|>system\\nYou are …<|im_end|>\\n<|im_start|>user\\nWhat is 2 + 2?<|im_end|>\\n
    <|im_start|>assistant\\n 4. <|im_end|> \\n
    ·························· ▲▲ ▲▲▲▲▲▲▲▲ ··      ▲ counted by the loss, · context only

Counted: each assistant reply's content and the stop token that ends it (``<|im_end|>``) — the
model must learn to stop, and at chat time generation ends at that token. Not counted: the header
``<|im_start|>assistant\\n`` (the prompt gives it) and what follows the stop (``\\n``: never
generated).

How the reply is found, for any chat format: the ids of the conversation up to reply i (with the
generation prompt, as the model sees it when it starts to write) are a prefix of the ids up to and
including reply i; the rest, up to and including the first stop id, is what the model writes:

    prompt_i = ids(messages[:i], add_generation_prompt=True)     … <|im_start|>assistant\\n
    upto_i   = ids(messages[:i+1], add_generation_prompt=False)  … <|im_start|>assistant\\n 4. <|im_end|> \\n
    counted  = upto_i[len(prompt_i) : first stop + 1]                                      4. <|im_end|>

A format is any object with ``ids(tokenizer, messages, add_generation_prompt)`` and
``stop_ids(tokenizer)``: ``ChatMLFormat`` (SmolLM2, Qwen2: chat/chatml.py), or another family's.

subtle: where the header's last token and the reply's first would merge into one token (a reply
starting with whitespace), the prefix breaks at that token; counting starts there, so the merged
token is counted (it holds the reply's first characters). The ids trained on are always the whole
conversation's, ``ids(messages, add_generation_prompt=False)``, as ``Chat`` renders its history.

Example (token strings for ids): ``render(tok, [{"role": "user", "content": "Hi"},
{"role": "assistant", "content": "Hello"}], ChatMLFormat(default_system=None))``
-> ids ``<|im_start|> user \\n Hi <|im_end|> \\n <|im_start|> assistant \\n Hello <|im_end|> \\n``,
counted ``0 0 0 0 0 0 0 0 0 1 1 0``.
"""
from __future__ import annotations

import numpy as np

from minillm.chat.chatml import DEFAULT_SYSTEM, chatml_ids, stop_ids


class ChatMLFormat:
    """ChatML as chat/chatml.py renders it (``default_system`` as there: None inserts none)."""
    name = "chatml"

    def __init__(self, default_system: str | None = DEFAULT_SYSTEM):
        self.default_system = default_system

    def ids(self, tokenizer, messages, add_generation_prompt: bool = True) -> list[int]:
        return chatml_ids(tokenizer, messages, add_generation_prompt, self.default_system)

    def stop_ids(self, tokenizer) -> tuple[int, ...]:
        return stop_ids(tokenizer)


class TooLong(ValueError):
    """A conversation of ``n_tokens`` tokens, over the limit ``render`` was given."""

    def __init__(self, n_tokens: int, limit: int):
        super().__init__(f"{n_tokens} tokens, more than the limit of {limit}")
        self.n_tokens = n_tokens


class _Memo:
    """The tokenizer with ``encode_ordinary`` remembered per text: the prefixes ``render``
    renders share every text run but the last, so each run is encoded once."""

    def __init__(self, tokenizer):
        self._tokenizer, self._ids = tokenizer, {}

    def __getattr__(self, name):
        return getattr(self._tokenizer, name)

    def encode_ordinary(self, text: str) -> list[int]:
        if text not in self._ids:
            self._ids[text] = self._tokenizer.encode_ordinary(text)
        return list(self._ids[text])


def render(tokenizer, messages, fmt=None, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """-> (ids [L] int64, counted [L] bool): the whole conversation and which tokens the loss
    counts (``fmt``: a format object, default ``ChatMLFormat()``). With ``limit``, a
    conversation of more tokens is a ``TooLong`` error as soon as the whole is rendered.

    subtle: the prefixes below make the work turns × length; the length is measured first
    (and bounded by ``limit``) and each text run is encoded once (``_Memo``), so the
    tokenizer's work is linear and the rest bounded by turns × limit list steps."""
    fmt = fmt or ChatMLFormat()
    tokenizer = _Memo(tokenizer)
    ids = fmt.ids(tokenizer, messages, add_generation_prompt=False)
    if limit is not None and len(ids) > limit:
        raise TooLong(len(ids), limit)
    stops = set(fmt.stop_ids(tokenizer))
    counted = np.zeros(len(ids), bool)
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        prompt = fmt.ids(tokenizer, messages[:i], add_generation_prompt=True)
        upto = fmt.ids(tokenizer, messages[:i + 1], add_generation_prompt=False)
        if ids[:len(upto)] != upto:
            raise ValueError(f"message {i}: the format's ids of the conversation up to this reply "
                             f"are not a prefix of the whole conversation's (a format that "
                             f"rewrites earlier turns cannot be trained turn by turn)")
        start = next((k for k, (a, b) in enumerate(zip(prompt, upto)) if a != b),
                     min(len(prompt), len(upto)))                       # where the reply begins
        if start < len(prompt) - 1:                                     # (only the last may merge)
            raise ValueError(f"message {i}: the format's ids of the prompt before this reply are "
                             f"not a prefix of those with the reply (they differ at token "
                             f"{start} of {len(prompt)})")
        end = next((k + 1 for k in range(start, len(upto)) if upto[k] in stops), len(upto))
        counted[start:end] = True                                       # the reply and its stop
    return np.array(ids, np.int64), counted


def training_pair(ids: np.ndarray, counted: np.ndarray) -> tuple[np.ndarray, ...]:
    """(ids [L], counted [L]) -> inputs [L−1], targets [L−1], loss mask [L−1]: position t reads
    ids[:t+1] and is scored on ids[t+1], counted when that target token is."""
    return ids[:-1], ids[1:], counted[1:]
