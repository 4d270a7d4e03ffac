"""The JSON a generation is answered with, in OpenAI's shapes: a whole reply, or one chunk per
token for ``stream: true`` (server-sent events, then ``data: [DONE]``).

    chat         {"object": "chat.completion", "choices": [{"message": {"role": "assistant",
                  "content": ...}, "logprobs": {"content": [...]}, "finish_reason": ...}], "usage"}
    chat chunk   {"object": "chat.completion.chunk", "choices": [{"delta": {"content": ...}}]}
    completion   {"object": "text_completion", "choices": [{"text": ..., "logprobs": {"tokens",
                  "token_logprobs", "top_logprobs", "text_offset"}}], "usage"}

A ``Step`` (decoding/steps.py) is one token: its released text (held back at a possible stop
string or inside a UTF-8 character, so a chunk's content may be ""), its log-prob and its top
alternatives (the model's raw distribution: ``generate``'s choice). A last step with no id
releases held text only: it adds text, not a token. ``usage`` counts the prompt's tokens and the
generated ones (the stop token that ended a reply is not counted, as it is not shown).
"""
from __future__ import annotations

import time
import uuid


class Reply:
    """One choice of a request's answer as it grows: ``chunk(step)`` for a stream,
    ``whole(reason)`` at the end; ``kind`` "chat" or "text" (``/v1/completions``). A request's
    n choices are n Replies sharing one id (``choices``)."""

    def __init__(self, job, served, index: int = 0, first=None):
        self.job, self.served, self.index = job, served, index
        prefix = "chatcmpl" if job.kind == "chat" else "cmpl"
        self.id = first.id if first else f"{prefix}-{uuid.uuid4().hex[:24]}"
        self.created = first.created if first else int(time.time())
        self.text, self.tokens, self.entries, self.chars = "", 0, [], 0

    def add(self, step) -> dict | None:
        """Take one step; returns its logprob entry (None when not asked or text-only)."""
        self.text += step.text or ""
        if step.id is None:
            return None
        self.tokens += 1
        if not self.job.logprobs:
            return None
        token = self.served.token_entry(step.id, step.logprob)
        entry = (token, [self.served.token_entry(i, lp) for i, lp in (step.top or ())], self.chars)
        self.chars += len(token["token"])            # text_offset: the tokens' own strings
        self.entries.append(entry)
        return entry

    def usage(self) -> dict:
        P = len(self.job.prompt)
        return {"prompt_tokens": P, "completion_tokens": self.tokens, "total_tokens": P + self.tokens}

    def _head(self, obj: str) -> dict:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.served.name}

    def whole(self, reason: str) -> dict:
        """The non-streamed answer."""
        if self.job.kind == "chat":
            choice = {"index": self.index, "message": {"role": "assistant", "content": self.text},
                      "logprobs": self._chat_logprobs(self.entries), "finish_reason": reason}
            return {**self._head("chat.completion"), "choices": [choice], "usage": self.usage()}
        text = (self.served.tokenizer.decode(self.job.prompt) if self.job.echo else "") + self.text
        choice = {"index": self.index, "text": text, "logprobs": self._text_logprobs(self.entries),
                  "finish_reason": reason}
        return {**self._head("text_completion"), "choices": [choice], "usage": self.usage()}

    def chunk(self, step=None, reason: str | None = None, first: bool = False) -> dict:
        """One event of a stream: a step's text (or the opening role / the closing reason)."""
        entry = self.add(step) if step is not None else None
        piece = (step.text or "") if step is not None else ""
        lp = None if entry is None else (self._chat_logprobs([entry]) if self.job.kind == "chat"
                                         else self._text_logprobs([entry]))
        if self.job.kind == "chat":
            delta = {"role": "assistant", "content": ""} if first else \
                ({} if step is None else {"content": piece})
            choice = {"index": self.index, "delta": delta, "logprobs": lp, "finish_reason": reason}
            out = {**self._head("chat.completion.chunk"), "choices": [choice]}
        else:
            choice = {"index": self.index, "text": piece, "logprobs": lp, "finish_reason": reason}
            out = {**self._head("text_completion"), "choices": [choice]}
        if self.job.include_usage:
            out["usage"] = None                     # OpenAI: null on every chunk but the last
        return out

    def usage_chunk(self, usage: dict) -> dict:
        """``stream_options.include_usage``: the last chunk, no choices, the usage."""
        obj = "chat.completion.chunk" if self.job.kind == "chat" else "text_completion"
        return {**self._head(obj), "choices": [], "usage": usage}

    def _chat_logprobs(self, entries) -> dict | None:
        if not self.job.logprobs:
            return None
        return {"content": [{**token, "top_logprobs": top[:self.job.top_n]}
                            for token, top, _ in entries], "refusal": None}

    def _text_logprobs(self, entries) -> dict | None:
        if not self.job.logprobs:
            return None
        return {"tokens": [t["token"] for t, _, _ in entries],
                "token_logprobs": [t["logprob"] for t, _, _ in entries],
                "top_logprobs": [{e["token"]: e["logprob"] for e in top[:self.job.top_n]}
                                 for _, top, _ in entries] if self.job.top_n else None,
                "text_offset": [at for _, _, at in entries]}


def choices(job, served) -> list[Reply]:
    """The n Replies of one request (one id, indices 0 … n − 1)."""
    first = Reply(job, served)
    return [first] + [Reply(job, served, i, first) for i in range(1, job.n)]


def usage(replies: list[Reply]) -> dict:
    """The request's usage: the prompt once, every choice's tokens."""
    P, made = len(replies[0].job.prompt), sum(r.tokens for r in replies)
    return {"prompt_tokens": P, "completion_tokens": made, "total_tokens": P + made}


def whole(replies: list[Reply], reasons: list[str]) -> dict:
    """The non-streamed answer with every choice."""
    answer = replies[0].whole(reasons[0])
    answer["choices"] = [r.whole(why)["choices"][0] for r, why in zip(replies, reasons)]
    answer["usage"] = usage(replies)
    return answer
