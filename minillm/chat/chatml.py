"""ChatML: a conversation -> the text and the token ids a chat model was fine-tuned on.

An instruction-tuned model is still a next-token predictor; it answers because it was trained on
conversations written in one fixed format. SmolLM2-Instruct (like Qwen2) uses ChatML::

    <|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\\n
    <|im_start|>user\\nWhat is the capital of France?<|im_end|>\\n
    <|im_start|>assistant\\n                     <- the generation prompt: the model writes from here
    The capital of France is Paris.<|im_end|>    <- and ends its turn with a stop token

``<|im_start|>`` and ``<|im_end|>`` are single special tokens, never spelled out of text pieces.

The model file carries its template as a Jinja program (GGUF ``tokenizer.chat_template``).
minillm renders ChatML directly, without a Jinja engine (numpy and regex are its only
dependencies), following SmolLM2's template rule by rule:
  1. if the conversation does not start with a system message, the DEFAULT_SYSTEM message is
     inserted first (SmolLM2's template hard-codes it; ``tests/test_smollm2.py`` checks the text
     against the real file's metadata);
  2. every message is ``<|im_start|>`` + role + ``\\n`` + content + ``<|im_end|>`` + ``\\n``;
  3. ``add_generation_prompt`` appends ``<|im_start|>assistant\\n``.

Tokenisation choice: the ChatML markers become their special ids and every piece of text (role and
content) is encoded as ORDINARY text. Hugging Face's ``apply_chat_template(tokenize=True)``
renders one string and tokenises it with specials on, so a user typing ``<|im_end|>`` would close
their own turn and could forge an assistant turn; here it stays text. For content without
special-token strings both give the same ids (tested): every text span is cut off by markers.

The conversation with a model (history, cache, streaming): chat.py. Example::

    render_chatml([{"role": "user", "content": "Hi"}])
    # '<|im_start|>system\\nYou are a helpful AI ...<|im_end|>\\n<|im_start|>user\\nHi<|im_end|>\\n'
    # '<|im_start|>assistant\\n'
    chatml_ids(tokenizer, messages)    # the same, markers as special ids, text as ordinary text
"""
from __future__ import annotations

IM_START, IM_END, END_OF_TEXT = "<|im_start|>", "<|im_end|>", "<|endoftext|>"
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
ROLES = ("system", "user", "assistant")


def check_messages(messages) -> list[dict]:
    """A list of {"role": one of ROLES, "content": str} dicts, or a ValueError/TypeError."""
    if not isinstance(messages, (list, tuple)):
        raise TypeError(f"messages must be a list of dicts, got {type(messages).__name__}")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or set(m) != {"role", "content"}:
            raise ValueError(f"message {i} must be a dict with exactly 'role' and 'content', got {m!r}")
        if m["role"] not in ROLES:
            raise ValueError(f"message {i}: role must be one of {ROLES}, got {m['role']!r}")
        if not isinstance(m["content"], str):
            raise TypeError(f"message {i}: content must be a str, got {type(m['content']).__name__}")
    return list(messages)


def with_default_system(messages, default_system: str | None = DEFAULT_SYSTEM) -> list[dict]:
    """Rule 1: prepend the default system message when the first message is not a system one.

    subtle: an EMPTY conversation gets no system message (the template's ``loop.first`` never
    fires), so ``render_chatml([])`` is only the generation prompt, as in the original.
    """
    messages = check_messages(messages)
    if messages and messages[0]["role"] != "system" and default_system is not None:
        return [{"role": "system", "content": default_system}] + messages
    return messages


def render_chatml(messages, add_generation_prompt: bool = True,
                  default_system: str | None = DEFAULT_SYSTEM) -> str:
    """The conversation as ChatML text (for reading; the model gets ``chatml_ids``).

    Example: render_chatml([{"role": "user", "content": "Hi"}], default_system=None)
    -> '<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n'
    """
    text = "".join(f"{IM_START}{m['role']}\n{m['content']}{IM_END}\n"
                   for m in with_default_system(messages, default_system))
    return text + (f"{IM_START}assistant\n" if add_generation_prompt else "")


def chatml_ids(tokenizer, messages, add_generation_prompt: bool = True,
               default_system: str | None = DEFAULT_SYSTEM) -> list[int]:
    """The conversation as token ids: markers as special ids, all text as ordinary text."""
    start, end = special_id(tokenizer, IM_START), special_id(tokenizer, IM_END)
    newline = tokenizer.encode_ordinary("\n")
    ids: list[int] = []
    for m in with_default_system(messages, default_system):
        ids += [start, *tokenizer.encode_ordinary(f"{m['role']}\n{m['content']}"), end, *newline]
    if add_generation_prompt:
        ids += [start, *tokenizer.encode_ordinary("assistant\n")]
    return ids


def special_id(tokenizer, token: str) -> int:
    if token not in tokenizer.special_tokens:
        raise ValueError(f"the tokenizer has no special token {token!r}: it is not a ChatML model's")
    return tokenizer.special_tokens[token]


def stop_ids(tokenizer) -> tuple[int, ...]:
    """Ids that end the assistant's turn: ``<|im_end|>``, ``<|endoftext|>`` and the tokenizer's EOS
    (for SmolLM2: 2, 0 and 2), those that exist."""
    ids = {tokenizer.special_tokens.get(t) for t in (IM_END, END_OF_TEXT)} | {tokenizer.eos_id}
    return tuple(sorted(i for i in ids if i is not None))
