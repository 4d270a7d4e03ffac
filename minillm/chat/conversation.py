"""Chat: a conversation with a model, turn by turn: the history, its ids, the streamed reply.

The conversation is rendered in the model's own chat format (formats/: ChatML, Llama 3 headers,
Gemma turns, Phi-3 tags, Mistral [INST]; chosen from the tokenizer's chat template by
formats/detect.py, or by name) and fed to ``generate``. The KV cache lives across turns: each
turn feeds only the ids the cache does not hold yet. When history + a full answer would overflow
the context window, the oldest turns are dropped (the system message stays).

One count of the context: ``context_tokens()``, the tokens of the conversation so far (system
prompt included, also before the first turn and after ``reset``). After each reply the cache is
brought to hold exactly those ids (the reply as re-encoded, and the ``\n`` closing its turn, which
the model never generates), so the count a reply's stats show, ``/context`` and the next turn's
"cached" prompt tokens are one number.

Example::

    chat = Chat(model, tokenizer, preset="chat", seed=0)
    for piece in chat.send("What is the capital of France?"):
        print(piece, end="", flush=True)
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np

from minillm.chat.chatml import check_messages
from minillm.chat.formats.detect import choose_format
from minillm.decoding.generate import generate_with
from minillm.decoding.generate_args import SAMPLER_SHORTCUTS, GenerationSettings, sampler_and_stops
from minillm.decoding.stop_strings import Stops
from minillm.kv_cache import KVCache


class Chat:
    """A conversation with a model: holds the history, renders it, streams the replies.

    system: None behaves as the template does (e.g. SmolLM2's default system message is
    inserted); a str replaces it. chat_format: a name (``formats.FORMATS``) or a ChatFormat;
    None: the one the tokenizer's chat template names, else ChatML (``format_note`` says which).
    Generation settings (``sampler=Sampler(...)``, or the shortcuts preset, temperature, top_k,
    top_p, min_p; the stops are the chat format's) are checked once,
    as ``generate`` checks them (``GenerationSettings``); ``seed`` builds the one generator every
    turn draws from: same seed, same conversation. ``constraint`` (``Regex``, ``JsonSchema``,
    ``Choice``): every reply matches it (``generate``'s ``constraint=``).
    When history + a full answer would overflow the context window, the oldest user/assistant
    turns are dropped (the system message stays) — why long chats "forget".
    """

    def __init__(self, model, tokenizer, system: str | None = None, max_new_tokens: int | None = None,
                 seed: int | None = None, chat_format=None, constraint=None, sampler=None,
                 **shortcuts):
        if max_new_tokens is None:                # a reply may take up to half the window
            max_new_tokens = min(256, model.config.n_ctx // 2)
        if system is not None and not isinstance(system, str):
            raise TypeError(f"system must be a str or None, got {type(system).__name__}")
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) \
                or not 1 <= max_new_tokens < model.config.n_ctx:
            raise ValueError(f"max_new_tokens must be an integer in [1, n_ctx={model.config.n_ctx}), "
                             f"got {max_new_tokens!r}")
        self.model, self.tokenizer = model, tokenizer
        self.system, self.max_new_tokens = system, max_new_tokens
        self.rng = np.random.default_rng(seed)
        self.format, self.format_note = choose_format(tokenizer, chat_format)
        self.stop_ids = self.format.stop_ids(tokenizer)
        # built once, for every turn: unknown or bad settings fail here, not mid-chat
        sampler, _ = sampler_and_stops("Chat", sampler, None, shortcuts, takes=SAMPLER_SHORTCUTS)
        self.settings = GenerationSettings.build(model, sampler=sampler, stops=Stops(ids=self.stop_ids),
                                                 rng=self.rng, tokenizer=tokenizer,
                                                 constraint=constraint)
        self.messages: list[dict] = []           # user and assistant turns, oldest first
        # The KV cache lives across turns: each turn feeds only what the cache does not hold yet
        # (the new user message), instead of re-reading the whole conversation.
        self.cache = KVCache(model.config, batch_size=1, capacity=model.config.n_ctx)
        self.cached_ids: list[int] = []          # the ids whose keys/values the cache holds
        self.last_turn = (0, 0, 0)               # last reply: (prompt, of them cached, generated)
        self._rendered: dict = {}                # the last rendering of each kind (see _ids)
        self.format.check_tokenizer(tokenizer)   # fail now, not at the first turn
        self._hold_history([])                   # the system prompt, cached from the start

    def conversation(self) -> list[dict]:
        """The messages as the model sees them (system message first when one was given)."""
        head = [] if self.system is None else [{"role": "system", "content": self.system}]
        return head + self.messages

    def prompt_ids(self) -> list[int]:
        return self._ids(self.conversation(), add_generation_prompt=True)

    def count_tokens(self) -> int:
        """Tokens the next reply starts from: the rendered history plus the generation prompt."""
        return len(self.prompt_ids())

    def history_ids(self) -> list[int]:
        """The conversation so far, without the generation prompt. subtle: with no turns yet the
        template may render nothing; the system prompt the next turn will start with is
        counted instead (``system``, or the format's default)."""
        default = self.format.default_system
        conversation = self.conversation() or (
            [] if default is None else [{"role": "system", "content": default}])
        return self._ids(conversation, add_generation_prompt=False)

    def _ids(self, conversation: list[dict], add_generation_prompt: bool) -> list[int]:
        """The format's ids, encoded once per conversation: a turn's prompt, its history and the
        counts shown after it reuse the last rendering while the messages are the same."""
        key = [(m["role"], m["content"]) for m in conversation]
        last = self._rendered.get(add_generation_prompt)
        if last is None or last[0] != key:
            last = self._rendered[add_generation_prompt] = (key, self.format.ids(
                self.tokenizer, conversation, add_generation_prompt=add_generation_prompt))
        return list(last[1])

    def context_tokens(self) -> int:
        """How much of the context window the conversation fills: the one count shown after a
        reply, by ``/context``, and as the next turn's cached prompt tokens."""
        return len(self.history_ids())

    def _hold_history(self, held: list[int]) -> None:
        """Bring the cache (holding ``held``) to hold exactly ``history_ids()``: keep the common
        prefix, feed the rest (a few tokens: the turn's closing newline, a reply re-encoded
        differently)."""
        history = self.history_ids()[:self.cache.capacity]
        keep = _common_prefix(held, history)
        self.cache.rollback(keep)
        if keep < len(history):
            self.model(np.array(history[keep:])[None], cache=self.cache, last_only=True)  # [1, T']
        self.cached_ids = history

    def fit_window(self) -> list[int]:
        """Drop the oldest turns until prompt + max_new_tokens fits in n_ctx; -> the prompt's ids."""
        n_ctx = self.model.config.n_ctx
        while len(ids := self.prompt_ids()) + self.max_new_tokens > n_ctx:
            if len(self.messages) <= 1:
                raise ValueError(f"the message alone takes {len(ids)} tokens; with max_new_tokens="
                                 f"{self.max_new_tokens} it does not fit the window n_ctx={n_ctx}")
            del self.messages[:2 if self.messages[1]["role"] == "assistant" else 1]
        return ids

    def send(self, text: str) -> Iterator[str]:
        """Add a user turn, then yield the reply's text as it is generated. The reply joins the
        history when the stream ends (also when it is cut short: what was shown is kept)."""
        return (step.text for step in self.send_steps(text) if step.text)

    def show_candidates(self, k: int) -> None:
        """From the next turn on, each ``Step`` of ``send_steps`` carries its ``k`` most likely
        tokens before and after the sampling settings (``Step.top``, ``top_sampled``); 0: off."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"show_candidates takes an integer >= 0 (0: off), got {k!r}")
        self.settings = dataclasses.replace(self.settings, top_n=k, logprobs=k > 0)

    def send_steps(self, text: str) -> Iterator:
        """``send``, yielding each ``Step`` (its text, and its candidates: ``show_candidates``)."""
        self.messages.append(check_messages([{"role": "user", "content": text}])[0])
        try:
            ids = self.fit_window()
        except ValueError:
            self.messages.pop()                  # a message that cannot fit is not kept
            raise
        reused = _common_prefix(self.cached_ids, ids[:-1])
        self.cache.rollback(reused)              # keep what still matches
        pieces: list[str] = []
        generated: list[int] = []
        try:
            for step in generate_with(self.model, ids, self.max_new_tokens, self.settings,
                                      cache=self.cache):
                if step.id is not None:
                    generated.append(step.id)
                if step.text:
                    pieces.append(step.text)
                yield step
        finally:
            self.messages.append({"role": "assistant", "content": "".join(pieces)})
            # subtle: the cache holds a prefix of prompt + generated; the reply is re-encoded from
            # its text next turn and may split into other tokens: the common prefix decides.
            self._hold_history((ids + generated)[:self.cache.length])
            self.last_turn = (len(ids), reused, len(generated))

    def ask(self, text: str) -> str:
        """``send`` without streaming: the whole reply."""
        return "".join(self.send(text))

    def reset(self) -> None:
        """Forget the turns; the system prompt stays (and stays cached)."""
        self.messages.clear()
        self._hold_history(self.cached_ids)


def _common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two id lists."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
