"""The server object: the model being served (``Served``), the batch thread (slots.py) and the
listening socket (the standard library's ``ThreadingHTTPServer``: one thread per connection).

    server = make_server(model, tokenizer, name="tiny-llama", port=0, slots=4)
    threading.Thread(target=server.serve_forever).start()      # http://127.0.0.1:<port>/v1
    ...
    server.stop(grace=5.0)      # stop accepting; running replies get 5 s, then are cut

Safe defaults: the address is 127.0.0.1 (this machine only) unless ``host`` says otherwise;
an ``api_key`` is checked on every request (constant-time); bodies are limited to ``max_body``
bytes; a client has ``client_timeout`` seconds for each read or write (a stalled one is dropped,
its slot freed); at most ``max_connections`` connections at once (more get a 503 at once).
The context a request may fill is ``capacity`` tokens (prompt + completion), at most the
model's n_ctx: the KV cache holds ``slots`` × ``capacity`` positions.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from http.server import ThreadingHTTPServer

from minillm.chat.formats.detect import choose_format
from minillm.server.errors import error_body
from minillm.server.handler import Handler
from minillm.server.slots import Engine

DEFAULT_CAPACITY = 2048              # tokens per request (prompt + completion), at most n_ctx
MAX_BODY = 1 << 20                   # 1 MiB: a full context of text is far less


@dataclasses.dataclass
class Served:
    """The model behind the endpoints: its ``name`` (the ``model`` field clients send), the
    model and tokenizer, its chat ``format`` (``note`` says which and why), the tokens one
    request may fill (``capacity``) and the end-of-turn strings when the tokenizer lacks the
    format's markers (they are then plain text: the reply stops at them as at a stop string)."""
    name: str
    model: object
    tokenizer: object
    format: object
    note: str
    capacity: int
    text_stops: tuple = ()

    def token_entry(self, token_id: int, logprob) -> dict:
        """OpenAI's logprob entry for one token: its text, log-prob and UTF-8 bytes."""
        data = self.tokenizer.decode_bytes([token_id])
        return {"token": data.decode("utf-8", errors="replace"), "logprob": logprob,
                "bytes": list(data)}


def served_model(model, tokenizer, name: str, capacity: int | None = None,
                 chat_format: str | None = None) -> Served:
    """The model as the endpoints see it; the chat format from its template (or ``chat_format``)."""
    n_ctx = model.config.n_ctx
    capacity = min(DEFAULT_CAPACITY, n_ctx) if capacity is None else capacity
    if isinstance(capacity, bool) or not isinstance(capacity, int) or not 2 <= capacity <= n_ctx:
        raise ValueError(f"the context (--context) must be an integer in [2, n_ctx={n_ctx}], "
                         f"got {capacity!r}")
    fmt, note = choose_format(tokenizer, chat_format)
    text_stops = ()
    try:
        fmt.check_tokenizer(tokenizer)
    except ValueError:                    # markers as text: a shipped tiny model, say
        text_stops = tuple(fmt.stops)
        note += (f"; this tokenizer has no {fmt.required!r} token, so the format's markers are "
                 f"plain text and a reply stops at {', '.join(map(repr, fmt.stops))}")
    return Served(name, model, tokenizer, fmt, note, capacity, text_stops)


class Server(ThreadingHTTPServer):
    """The HTTP server: ``served`` (the model), ``engine`` (the batch thread) and the limits."""
    daemon_threads = True                 # an idle keep-alive connection never blocks exit
    allow_reuse_address = True
    request_queue_size = 128              # the listen backlog (socketserver's 5 resets a burst)

    def __init__(self, served: Served, host: str = "127.0.0.1", port: int = 8000, *,
                 slots: int = 4, api_key: str | None = None, max_body: int = MAX_BODY,
                 client_timeout: float = 30.0, max_connections: int = 64):
        if api_key is not None and (not isinstance(api_key, str) or not api_key):
            raise ValueError("api_key must be a non-empty string (or None: no key)")
        if isinstance(slots, bool) or not isinstance(slots, int) or not 1 <= slots <= 256:
            raise ValueError(f"slots must be an integer in [1, 256], got {slots!r}")
        self.served, self.api_key, self.max_body = served, api_key, max_body
        self.client_timeout, self.max_connections = client_timeout, max_connections
        self.engine = Engine(served.model, slots, served.capacity)
        self.connections = 0
        self.active = 0                   # generations running in handler threads
        self.lock = threading.Lock()
        self.closing = False
        super().__init__((host, port), Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def process_request(self, request, client_address):
        with self.lock:
            full = self.connections >= self.max_connections
            if not full:
                self.connections += 1
        if full:                          # answered here, no thread: a flood stays cheap
            body = error_body(503, f"too many connections (at most {self.max_connections})")
            try:
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: "
                                b"application/json\r\nConnection: close\r\nContent-Length: "
                                + str(len(body)).encode() + b"\r\n\r\n" + body)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.lock:
                self.connections -= 1

    def stop(self, grace: float = 5.0) -> None:
        """Stop accepting; let running replies finish for ``grace`` s, then cut them; return
        once every reply has been answered (or 5 s more have passed)."""
        self.closing = True
        if getattr(self, "_serving", False):
            self.shutdown()                # serve_forever returns (from another thread)
        self.server_close()               # the listening socket: no new connection
        self.engine.close(grace)
        deadline = time.monotonic() + 5.0
        while self.active and time.monotonic() < deadline:
            time.sleep(0.02)

    def serve_forever(self, poll_interval: float = 0.5):
        self._serving = True
        try:
            super().serve_forever(poll_interval)
        finally:
            self._serving = False


def make_server(model, tokenizer, name: str = "minillm", host: str = "127.0.0.1",
                port: int = 8000, *, capacity: int | None = None, chat_format: str | None = None,
                **options) -> Server:
    """A ready ``Server`` (not yet serving: call ``serve_forever``); ``port=0`` picks a free
    port (``server.url`` says which). ``options``: slots, api_key, max_body, client_timeout,
    max_connections."""
    return Server(served_model(model, tokenizer, name, capacity, chat_format), host, port,
                  **options)
