"""The HTTP side: one ``Handler`` per connection (a thread of ``ThreadingHTTPServer``).

    GET  /v1/models                 the one model served (OpenAI's list shape)
    GET  /health                    {"status": "ok"} (llama-server's)
    GET  /, POST /inspect/...       the page and its endpoints (inspector.py)
    POST /v1/chat/completions       a reply in the model's chat format (stream: SSE)
    POST /v1/completions            a continuation of a prompt (stream: SSE)
    POST /tokenize                  {"content": str, "with_pieces"?: bool} -> {"tokens": [...]}
    POST /detokenize                {"tokens": [int, ...]} -> {"content": str}

Every request passes the same gate before any work: the API key (if the server has one; the
page's own three files are served without it, its requests then send it), a
Content-Length under the limit, a body read within the client timeout, JSON that is an object,
a known ``model``. A refusal is OpenAI's error JSON with a 4xx status (errors.py); an unexpected
failure is a 500 with one line (logged once), and the server goes on. A client that disconnects
or stops reading loses its slot before the next decode step (``Engine.cancel``).
"""
from __future__ import annotations

import hmac
import json
import socket
from http.server import BaseHTTPRequestHandler

from minillm.server import inspector, jobs
from minillm.server.errors import APIError, bad, log
from minillm.server.streaming import GONE, Replying


class Handler(Replying, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"          # keep-alive, as the openai client expects

    def version_string(self) -> str:
        return "minillm"

    def setup(self):
        self.timeout = self.server.client_timeout      # every read and write on the socket
        super().setup()

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass                               # quiet: one line per error only (``log``)

    # --- routing ------------------------------------------------------------------------------
    def do_GET(self):
        page = {path: (lambda p=path: inspector.static(self, p)) for path in inspector.STATIC}
        self._answer({"/v1/models": self._models, "/models": self._models,
                      "/health": lambda: {"status": "ok"}, **page}, with_body=False)

    def do_POST(self):
        self._answer({"/v1/chat/completions": self._chat, "/chat/completions": self._chat,
                      "/v1/completions": self._completions, "/completions": self._completions,
                      "/tokenize": self._tokenize, "/detokenize": self._detokenize,
                      "/inspect/steps": lambda: inspector.steps(self),
                      "/inspect/attention": lambda: inspector.attention(self),
                      "/inspect/lens": lambda: inspector.lens(self)}, with_body=True)

    def do_PUT(self):
        self._refuse(APIError(405, f"{self.command} is not allowed: use GET or POST"))

    do_DELETE = do_PATCH = do_PUT

    def _answer(self, routes: dict, with_body: bool) -> None:
        path = self.path.split("?", 1)[0]
        self.body, self.streaming = None, False
        try:
            if not (self.command == "GET" and path in inspector.STATIC):   # the page's files
                self._check_key()                                         # are no secret
            route = routes.get(path)
            if route is None:
                other = "POST" if self.command == "GET" else "GET"
                raise APIError(404 if path not in self._paths(other) else 405,
                               f"{self.command} {path}: no such endpoint" if path not in
                               self._paths(other) else f"{path} takes {other}, not {self.command}")
            self.body = self._read_json() if with_body else {}
            result = route()
            if result is not None:
                self._send_json(200, result)
        except APIError as exc:
            if with_body and self.body is None:   # refused before its body was read: the
                self.close_connection = True      # stream is not at the next request
            self._refuse(exc)
        except GONE:
            self.close_connection = True
        except Exception as exc:           # noqa: BLE001 (a bug must not kill the server)
            log(f"internal error on {self.command} {path}: {type(exc).__name__}: {exc}")
            self.close_connection = True
            if not self.streaming:             # (mid-stream, a new response cannot start)
                self._refuse(APIError(500, f"internal server error ({type(exc).__name__})"))

    def _paths(self, method: str) -> set:
        return ({"/v1/models", "/models", "/health", *inspector.STATIC} if method == "GET" else
                {"/v1/chat/completions", "/chat/completions", "/v1/completions",
                 "/completions", "/tokenize", "/detokenize", "/inspect/steps",
                 "/inspect/attention", "/inspect/lens"})

    # --- the gate -----------------------------------------------------------------------------
    def _check_key(self) -> None:
        key = self.server.api_key
        if key is None:
            return
        given = self.headers.get("Authorization", "")
        token = given[7:] if given.startswith("Bearer ") else ""
        if not hmac.compare_digest(token.encode(), key.encode()):
            raise APIError(401, "a valid API key is needed: send the header "
                                "'Authorization: Bearer KEY'", code="invalid_api_key")

    def _read_json(self) -> dict:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise APIError(411, "send the body with a Content-Length (no chunked encoding)")
        length = self.headers.get("Content-Length")
        if length is None or not (length.isascii() and length.isdigit()):
            self.close_connection = True
            raise APIError(411, "a POST needs a Content-Length header")
        if int(length) > self.server.max_body:
            self.close_connection = True   # the body is not read: the connection ends here
            raise APIError(413, f"the body is {int(length):,} bytes; the limit is "
                                f"{self.server.max_body:,}")
        try:
            raw = self.rfile.read(int(length))
        except socket.timeout:
            self.close_connection = True
            raise APIError(408, f"the body did not arrive within {self.server.client_timeout:g} s") \
                from None
        if len(raw) < int(length):
            self.close_connection = True
            raise APIError(400, "the body is shorter than its Content-Length")
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise APIError(400, f"the body is not valid JSON ({str(exc)[:100]})") from None
        if not isinstance(body, dict):
            raise APIError(400, "the body must be a JSON object")
        model = body.get("model")
        if model is not None and model != self.server.served.name:
            raise APIError(404, f"the model {model!r} does not exist: this server serves "
                                f"{self.server.served.name!r}", param="model",
                           code="model_not_found")
        return body

    # --- replies ------------------------------------------------------------------------------
    def _send_json(self, status: int, obj, body: bytes | None = None) -> None:
        data = body if body is not None else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _refuse(self, exc: APIError) -> None:
        try:
            self._send_json(exc.status, None, body=exc.body())
        except GONE:
            self.close_connection = True

    # --- endpoints ----------------------------------------------------------------------------
    def _models(self) -> dict:
        served = self.server.served
        return {"object": "list", "data": [{"id": served.name, "object": "model", "created": 0,
                                            "owned_by": "minillm",
                                            "meta": {"n_ctx": served.capacity,
                                                     "n_vocab": served.model.config.vocab_size,
                                                     "chat_format": served.format.name}}]}

    def _chat(self):
        return self._generate(jobs.chat_job(self.server.served, self.body))

    def _completions(self):
        return self._generate(jobs.completion_job(self.server.served, self.body))

    def _tokenize(self) -> dict:
        content = self.body.get("content")
        if not isinstance(content, str):
            raise bad("content", "content must be a string")
        tok = self.server.served.tokenizer
        ids = tok.encode_ordinary(content)
        if self.body.get("with_pieces") is True:
            return {"tokens": [{"id": i, "piece": tok.decode([i])} for i in ids]}
        return {"tokens": ids}

    def _detokenize(self) -> dict:
        ids, V = self.body.get("tokens"), self.server.served.tokenizer.vocab_size
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                and 0 <= i < V for i in ids):
            raise bad("tokens", f"tokens must be a list of token ids in [0, {V})")
        return {"content": self.server.served.tokenizer.decode(ids)}
