"""Chat: a conversation -> the token ids a chat model was fine-tuned on (ChatML), and its reply.

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

Example::

    chat = Chat(model, tokenizer, preset="chat", seed=0)
    for piece in chat.send("What is the capital of France?"):
        print(piece, end="", flush=True)
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from minillm.generate import generate
from minillm.generate_args import make_sampler
from minillm.kv_cache import KVCache

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


class Chat:
    """A conversation with a model: holds the history, renders it, streams the replies.

    system: None behaves as the template does (DEFAULT_SYSTEM is inserted); a str replaces it.
    Generation settings (preset, temperature, top_k, top_p, min_p) go to ``minillm.generate``;
    ``seed`` builds the one generator every turn draws from: same seed, same conversation.
    When history + a full answer would overflow the context window, the oldest user/assistant
    turns are dropped (the system message stays) — why long chats "forget".
    """

    def __init__(self, model, tokenizer, system: str | None = None, max_new_tokens: int | None = None,
                 seed: int | None = None, **sampling):
        if max_new_tokens is None:                # a reply may take up to half the window
            max_new_tokens = min(256, model.config.n_ctx // 2)
        if system is not None and not isinstance(system, str):
            raise TypeError(f"system must be a str or None, got {type(system).__name__}")
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) \
                or not 1 <= max_new_tokens < model.config.n_ctx:
            raise ValueError(f"max_new_tokens must be an integer in [1, n_ctx={model.config.n_ctx}), "
                             f"got {max_new_tokens!r}")
        self.model, self.tokenizer = model, tokenizer
        make_sampler(**sampling)                 # unknown or bad settings fail here, not mid-chat
        self.system, self.max_new_tokens, self.sampling = system, max_new_tokens, sampling
        self.rng = np.random.default_rng(seed)
        self.stop_ids = stop_ids(tokenizer)
        self.messages: list[dict] = []           # user and assistant turns, oldest first
        # The KV cache lives across turns: each turn feeds only what the cache does not hold yet
        # (the new user message), instead of re-reading the whole conversation.
        self.cache = KVCache(model.config, batch_size=1, capacity=model.config.n_ctx)
        self.cached_ids: list[int] = []          # the ids whose keys/values the cache holds
        self.last_turn = (0, 0, 0)               # last reply: (prompt, of them cached, generated)
        special_id(tokenizer, IM_START)          # fail now, not at the first turn

    def conversation(self) -> list[dict]:
        """The messages as the model sees them (system message first when one was given)."""
        head = [] if self.system is None else [{"role": "system", "content": self.system}]
        return head + self.messages

    def prompt_ids(self) -> list[int]:
        return chatml_ids(self.tokenizer, self.conversation())

    def count_tokens(self) -> int:
        """Tokens the next reply starts from: the rendered history plus the generation prompt."""
        return len(self.prompt_ids())

    def fit_window(self) -> int:
        """Drop the oldest turns until prompt + max_new_tokens fits in n_ctx; -> prompt length."""
        n_ctx = self.model.config.n_ctx
        while (n := self.count_tokens()) + self.max_new_tokens > n_ctx:
            if len(self.messages) <= 1:
                raise ValueError(f"the message alone takes {n} tokens; with max_new_tokens="
                                 f"{self.max_new_tokens} it does not fit the window n_ctx={n_ctx}")
            del self.messages[:2 if self.messages[1]["role"] == "assistant" else 1]
        return n

    def send(self, text: str) -> Iterator[str]:
        """Add a user turn, then yield the reply's text as it is generated. The reply joins the
        history when the stream ends (also when it is cut short: what was shown is kept)."""
        self.messages.append(check_messages([{"role": "user", "content": text}])[0])
        try:
            self.fit_window()
        except ValueError:
            self.messages.pop()                  # a message that cannot fit is not kept
            raise
        ids = self.prompt_ids()
        reused = _common_prefix(self.cached_ids, ids[:-1])
        self.cache.rollback(reused)              # keep what still matches
        pieces: list[str] = []
        generated: list[int] = []
        try:
            for step in generate(self.model, ids, self.max_new_tokens, rng=self.rng,
                                 stop_ids=self.stop_ids, tokenizer=self.tokenizer,
                                 cache=self.cache, **self.sampling):
                if step.id is not None:
                    generated.append(step.id)
                if step.text:
                    pieces.append(step.text)
                    yield step.text
        finally:
            self.messages.append({"role": "assistant", "content": "".join(pieces)})
            # subtle: the cache holds a prefix of prompt + generated; the reply is re-encoded from
            # its text next turn and may split into other tokens: the common prefix decides.
            self.cached_ids = (ids + generated)[:self.cache.length]
            self.last_turn = (len(ids), reused, len(generated))

    def ask(self, text: str) -> str:
        """``send`` without streaming: the whole reply."""
        return "".join(self.send(text))

    def reset(self) -> None:
        self.messages.clear()
        self.cache.rollback(0)
        self.cached_ids = []


def _common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two id lists."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
