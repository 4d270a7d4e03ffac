"""A request body -> a ``Job``: the prompt ids and every generation setting, checked before any
work starts (a 400 names the field at fault).

    chat:        messages -> the model's own chat format (minillm.chat.formats) -> ids; the
                 format's end-of-turn ids stop the reply
    completions: prompt (a string, or a list of token ids) -> ids

Then the fields both share (``settings_of``): max_tokens (or max_completion_tokens), temperature,
top_p, top_k, min_p, frequency_penalty, presence_penalty, repeat_penalty, logit_bias, seed, stop,
ignore_eos (llama-server's: the end-of-text ids do not stop), logprobs / top_logprobs,
response_format (structured.py), n. They become one ``Sampler`` and one ``Stops`` (the one
place the server names them), checked once more by ``GenerationSettings.build``, whose
ValueError becomes a 400 too: the server accepts exactly what the library accepts.

Defaults, as OpenAI's: temperature 1, top_p 1, no top-k or min-p, max_tokens = all the room the
context has left (a prompt longer than the context, or prompt + max_tokens past it, is a 400).
No seed: a fresh one is drawn, so each reply differs; with one, the same request gives the same
text, alone or among others (each job has its own generator). ``n`` choices (at most 8) are n
generations of the same prompt, choice i seeded ``seed + i``: choice 0 is the reply n = 1 gives.
"""
from __future__ import annotations

import dataclasses
import secrets

import numpy as np

from minillm.decoding.generate_args import GenerationSettings
from minillm.decoding.stop_strings import Stops
from minillm.sampling import Sampler
from minillm.server import fields
from minillm.server.errors import APIError, bad
from minillm.server.structured import constraint_of

MAX_TOP_LOGPROBS = 20            # OpenAI's chat limit (completions: 5; the same limit here)
MAX_N = 8                        # choices per request (each takes a slot)
ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


@dataclasses.dataclass
class Job:
    """One generation the batcher runs: ``prompt`` ids, ``max_tokens``, ``settings`` (a
    GenerationSettings: sampler, its own generator, stops, logprobs, constraint); ``stream`` and
    ``include_usage`` shape the reply; ``top_n``: top_logprobs asked."""
    kind: str                       # "chat" or "text"
    prompt: list
    max_tokens: int
    settings: GenerationSettings
    stream: bool = False
    include_usage: bool = False
    logprobs: bool = False
    top_n: int = 0
    echo: bool = False
    n: int = 1
    seed: int = 0

    def choice_settings(self, i: int) -> GenerationSettings:
        """Choice i's settings: the job's, with its own generator seeded ``seed + i`` (choice 0
        is the request made with n = 1)."""
        if i == 0:
            return self.settings
        return dataclasses.replace(self.settings, rng=np.random.default_rng(self.seed + i))


def chat_job(served, body: dict) -> Job:
    """``POST /v1/chat/completions``' body -> a Job (the conversation in the model's format)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad("messages", "messages must be a non-empty array of {role, content} objects")
    turns = [_message(i, m) for i, m in enumerate(messages)]
    try:
        ids = served.format.ids(served.tokenizer, turns)
    except (ValueError, TypeError) as exc:          # e.g. a format's role order (Gemma's)
        raise bad("messages", str(exc)) from None
    logprobs = fields.boolean(body, "logprobs", False)
    top_n = fields.integer(body, "top_logprobs", 0, low=0, high=MAX_TOP_LOGPROBS)
    if top_n and not logprobs:
        raise bad("top_logprobs", "top_logprobs needs logprobs: true")
    name = "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens"
    return _job("chat", served, body, ids, logprobs, top_n, {name: body.get(name)},
                stop_ids=served.format.stop_ids(served.tokenizer), text_stops=served.text_stops)


def completion_job(served, body: dict) -> Job:
    """``POST /v1/completions``' body -> a Job (``logprobs`` there is the top count, 0-5+)."""
    ids = prompt_ids(served, body.get("prompt"), "prompt")
    n_lp = body.get("logprobs")
    top_n = fields.integer(body, "logprobs", 0, low=0, high=MAX_TOP_LOGPROBS)
    job = _job("text", served, body, ids, n_lp is not None, top_n,
               {"max_tokens": body.get("max_tokens")}, stop_ids=())
    job.echo = fields.boolean(body, "echo", False)
    if job.echo and job.stream:
        raise bad("echo", "echo is not supported together with stream")
    return job


def prompt_ids(served, prompt, name: str) -> list:
    """A prompt as a string (encoded, special-token strings as text) or a list of token ids."""
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
        prompt = prompt[0]                              # ["text"] or [[ids]]: one prompt
    if isinstance(prompt, str):
        if not prompt:
            raise bad(name, f"{name} must not be empty")
        return served.tokenizer.encode_ordinary(prompt)
    V = served.model.config.vocab_size
    if isinstance(prompt, list) and prompt and all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < V for i in prompt):
        return list(prompt)
    raise bad(name, f"{name} must be a non-empty string or one list of token ids in [0, {V}) "
                    f"(several prompts in one request are not supported: send one request each)")


def _message(i: int, m) -> dict:
    """One OpenAI message -> {"role", "content": str}: text parts joined; "developer" is "system"."""
    if not isinstance(m, dict) or not isinstance(m.get("role"), str):
        raise bad("messages", f"messages[{i}] must be an object with a role and a content")
    if m["role"] not in ROLES:
        raise bad("messages", f"messages[{i}].role must be one of {', '.join(ROLES)} (tools are "
                              f"not supported), got {m['role']!r}")
    content = m.get("content")
    if isinstance(content, list):                        # [{"type": "text", "text": "..."}]
        if not all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
                   for p in content):
            raise bad("messages", f"messages[{i}].content parts must be text parts "
                                  f"({{'type': 'text', 'text': ...}}): this model reads text only")
        content = "".join(p["text"] for p in content)
    if not isinstance(content, str):
        raise bad("messages", f"messages[{i}].content must be a string, got {type(content).__name__}")
    return {"role": ROLES[m["role"]], "content": content}


def _job(kind, served, body, ids, logprobs, top_n, limit: dict, stop_ids, text_stops=()) -> Job:
    capacity = served.capacity
    if len(ids) >= capacity:
        raise APIError(400, f"the prompt is {len(ids)} tokens; this server's context holds "
                            f"{capacity} (prompt + completion): shorten it",
                       param="messages" if kind == "chat" else "prompt",
                       code="context_length_exceeded")
    (name, _), = limit.items()
    max_tokens = fields.integer(limit, name, capacity - len(ids), low=1)
    if len(ids) + max_tokens > capacity:
        raise APIError(400, f"{name}={max_tokens} with a {len(ids)}-token prompt is past this "
                            f"server's context of {capacity} tokens: at most "
                            f"{capacity - len(ids)}", param=name, code="context_length_exceeded")
    n = fields.integer(body, "n", 1, low=1, high=MAX_N)
    for unsupported in ("tools", "functions", "suffix"):
        if body.get(unsupported):
            raise bad(unsupported, f"{unsupported} is not supported by this server")
    stream = fields.boolean(body, "stream", False)
    options = fields.mapping(body, "stream_options") or {}
    if options and not stream:
        raise bad("stream_options", "stream_options is only allowed with stream: true")
    seed = fields.integer(body, "seed", None, low=0, high=2**63 - 1 - MAX_N)
    seed = secrets.randbits(62) if seed is None else seed
    settings = settings_of(served, body, stop_ids, logprobs, top_n, text_stops, seed)
    return Job(kind, ids, max_tokens, settings,
               stream=stream, include_usage=fields.boolean(options, "include_usage", False),
               logprobs=logprobs, top_n=top_n, n=n, seed=seed)


def settings_of(served, body: dict, stop_ids, logprobs: bool, top_n: int,
                text_stops=(), seed: int = 0) -> GenerationSettings:
    """The sampling and stopping fields -> the library's checked GenerationSettings
    (``text_stops``: the chat format's end-of-turn markers when they are plain text)."""
    ignore_eos = fields.boolean(body, "ignore_eos", False)     # llama-server's: benchmarks
    if ignore_eos:
        stop_ids = ()
    sampling = dict(
        temperature=fields.number(body, "temperature", 1.0, low=0.0, high=100.0),
        top_p=fields.number(body, "top_p", 1.0, low=0.0, low_open=True, high=1.0),
        top_k=fields.integer(body, "top_k", 0, low=0),
        min_p=fields.number(body, "min_p", 0.0, low=0.0, high=1.0),
        frequency_penalty=fields.number(body, "frequency_penalty", 0.0, low=-2.0, high=2.0),
        presence_penalty=fields.number(body, "presence_penalty", 0.0, low=-2.0, high=2.0),
        repetition_penalty=fields.number(body, "repeat_penalty", 1.0, low=0.0, low_open=True),
        logit_bias=fields.logit_bias(body, served.model.config.vocab_size))
    try:
        sampler = Sampler(**sampling)
        stops = Stops(ids=stop_ids, eos=not ignore_eos, strings=tuple(
            dict.fromkeys(fields.stop_strings(body) + tuple(text_stops))))
        return GenerationSettings.build(
            served.model, sampler=sampler, stops=stops, seed=seed, tokenizer=served.tokenizer,
            logprobs=logprobs, top_n=top_n, constraint=constraint_of(body.get("response_format")))
    except ValueError as exc:          # (a TypeError here would be the server's bug: a 500)
        raise bad(None, str(exc)) from None
