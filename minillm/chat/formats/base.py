"""A chat format: a conversation -> pieces of text and markers -> the text, or the token ids.

Every family renders a conversation its own way, but the result is always a row of two kinds of
pieces: MARKERS (``Marker``: ``<|im_start|>``, ``<|start_header_id|>``, ``<start_of_turn>``,
``[INST]``, the BOS token...) that the model's tokenizer holds as special tokens, and TEXT (roles,
message contents, newlines). A family's renderer (chatml.py, llama3.py, gemma.py, phi3.py,
mistral.py) only builds that row; this module turns it into

    text:  the pieces joined                       "<|im_start|>user\\nHi<|im_end|>\\n"
    ids:   each marker -> its special id,           [1, *encode_ordinary("user\\nHi"), 2,
           each run of text -> encode_ordinary       *encode_ordinary("\\n")]

so content is ordinary text even when it spells a marker: a user typing ``<|im_end|>`` cannot close
their own turn (Hugging Face's ``apply_chat_template(tokenize=True)`` tokenises the rendered
string with specials on; for content without marker strings both give the same ids: every text
run is cut off by markers there too). subtle: a marker the tokenizer does not hold is text (as it
is for Hugging Face: Mistral v1's ``[INST]`` is spelled in ordinary tokens).

Example::

    fmt = get_format("llama3")
    fmt.render([{"role": "user", "content": "Hi"}])
    # '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\\n\\nHi<|eot_id|>'
    # '<|start_header_id|>assistant<|end_header_id|>\\n\\n'
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from minillm.chat.chatml import check_messages


class Marker(str):
    """A piece of a rendering that is one special token (when the tokenizer holds it)."""


@dataclasses.dataclass(frozen=True)
class ChatFormat:
    """One family's chat format.

    name: how ``get_format`` / ``--chat-format`` call it; family: the models that use it;
    build(messages, add_generation_prompt, **options) -> the row of pieces (str and Marker);
    stops: the markers that end an assistant's turn; required: a marker the model's tokenizer
    must hold (else it is not this family's tokenizer); default_system: the system prompt the
    template puts in when the conversation has none (None: none), so ``Chat`` counts it before
    the first turn; options: the template's own switches and their defaults (``with_options``).
    """
    name: str
    family: str
    build: Callable[..., list[str]]
    stops: tuple[str, ...]
    required: str
    default_system: str | None = None
    options: dict = dataclasses.field(default_factory=dict)

    def pieces(self, messages, add_generation_prompt: bool = True) -> list[str]:
        """The rendering as pieces: str for text, Marker for a special token."""
        if not isinstance(add_generation_prompt, bool):
            raise TypeError(f"add_generation_prompt must be a bool, got {add_generation_prompt!r}")
        return [p for p in self.build(check_messages(messages), add_generation_prompt,
                                      **self.options) if p]

    def render(self, messages, add_generation_prompt: bool = True) -> str:
        """The conversation as text (for reading; the model gets ``ids``)."""
        return "".join(self.pieces(messages, add_generation_prompt))

    def ids(self, tokenizer, messages, add_generation_prompt: bool = True) -> list[int]:
        """The conversation as token ids: markers as special ids, every run of text as text."""
        return pieces_to_ids(tokenizer, self.pieces(messages, add_generation_prompt))

    def check_tokenizer(self, tokenizer) -> None:
        """A ValueError unless the tokenizer holds this format's markers (its ``required`` one)."""
        if self.required not in tokenizer.special_tokens:
            raise ValueError(f"the tokenizer has no special token {self.required!r}: it is not a "
                             f"{self.family} model's tokenizer (chat format {self.name!r})")

    def stop_ids(self, tokenizer) -> tuple[int, ...]:
        """Ids that end the assistant's turn: this format's stop markers the tokenizer holds,
        and its EOS."""
        ids = {tokenizer.special_tokens.get(t) for t in self.stops} | {tokenizer.eos_id}
        return tuple(sorted(i for i in ids if i is not None))

    def with_options(self, **options) -> "ChatFormat":
        """This format with some of its switches set (e.g. ``get_format("qwen3")
        .with_options(enable_thinking=False)``); an unknown switch is a ValueError."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise ValueError(f"chat format {self.name!r} has no option {unknown[0]!r}; its "
                             f"options: {', '.join(self.options) or 'none'}")
        return dataclasses.replace(self, options={**self.options, **options})


def pieces_to_ids(tokenizer, pieces) -> list[int]:
    """Each marker the tokenizer holds -> its special id; each run of text between them (other
    markers included) -> ``encode_ordinary``, as one piece of text."""
    specials = tokenizer.special_tokens
    ids: list[int] = []
    text = ""
    for piece in pieces:
        if isinstance(piece, Marker) and piece in specials:
            ids += tokenizer.encode_ordinary(text) if text else []
            ids.append(specials[piece])
            text = ""
        else:
            text += piece
    return ids + (tokenizer.encode_ordinary(text) if text else [])


def alternating(messages: list[dict], start: int = 0) -> None:
    """The rule of Gemma's and Mistral's templates: after an optional system message, the roles
    go user, assistant, user, ... (a ValueError otherwise, as their ``raise_exception``)."""
    for i, message in enumerate(messages[start:]):
        if (message["role"] == "user") != (i % 2 == 0):
            raise ValueError("after the optional system message, conversation roles must "
                             f"alternate user/assistant/user/...; message {start + i} is "
                             f"{message['role']!r}")


def split_system(messages: list[dict]) -> tuple[str | None, list[dict]]:
    """(the first message's content if it is a system message, else None; the rest)."""
    if messages and messages[0]["role"] == "system":
        return messages[0]["content"], messages[1:]
    return None, messages
