"""A generation's answer over HTTP: the whole reply at once, or server-sent events as it grows.

``Replying`` is the part of the handler (handler.py) that waits on a job's events (slots.py)
and writes them out; it also watches the client: one that has closed its side (a readable
socket with nothing to read) or stopped reading (a write that times out) gets its job cancelled,
so its slot is free before the next decode step. A stream always ends with ``data: [DONE]``;
one cut short (shutdown, an error) first gets an error event in OpenAI's shape.
"""
from __future__ import annotations

import json
import queue
import select
import socket
import time

from minillm.server.errors import APIError, error_body
from minillm.server.replies import choices, usage, whole
from minillm.server.slots import Tagged

GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout)


def drain(out) -> list:
    """What a queue holds now, without waiting."""
    items = []
    while not out.empty():
        items.append(out.get_nowait())
    return items


class Replying:
    """The generation methods of ``Handler`` (``self.server``: the Server; ``self.wfile``)."""

    def _generate(self, job) -> None:
        server = self.server
        if server.closing:
            raise APIError(503, "the server is shutting down")
        replies, shared = choices(job, server.served), queue.Queue()
        lives = [server.engine.submit(job, job.choice_settings(i), Tagged(shared, i))
                 for i in range(job.n)]
        with server.lock:
            server.active += 1
        try:
            (self._stream if job.stream else self._whole)(shared, replies)
        finally:
            for live in lives:
                server.engine.cancel(live)     # (a no-op once it has ended)
            with server.lock:
                server.active -= 1

    def _events(self, shared, n: int = 1):
        """(choice, event) pairs until each of the n choices has ended; stops early when the
        client is gone, or once the batch thread has stopped and its last events are read (both
        looked at every 0.1 s)."""
        looked, ended = time.monotonic(), 0
        while ended < n:
            try:
                item = shared.get(timeout=0.1)
            except queue.Empty:
                item = None
            if time.monotonic() - looked >= 0.1:
                looked = time.monotonic()
                if self._client_gone():
                    return
                if not self.server.engine.thread.is_alive():
                    yield from ([item] if item is not None else []) + drain(shared)
                    return
            if item is not None:
                ended += item[1][0] not in ("step", "logits")
                yield item

    def _client_gone(self) -> bool:
        """The client closed its side (a readable socket with nothing to read)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _whole(self, shared, replies) -> None:
        reasons = [None] * len(replies)
        for i, (kind, *rest) in self._events(shared, len(replies)):
            if kind == "step":
                replies[i].add(rest[0])
            elif kind == "error":
                self.close_connection = True
                raise APIError(500, rest[0])
            else:
                reasons[i] = rest[0]
        if None not in reasons and "cancelled" not in reasons:
            return self._send_json(200, whole(replies, reasons))
        self.close_connection = True
        if self.server.closing or not self.server.engine.thread.is_alive():
            raise APIError(503, "the server is shutting down: the reply was cut")
        # else the client has gone: nobody to answer

    def _stream(self, shared, replies) -> None:
        self.close_connection = self.streaming = True     # the stream ends with the connection
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        send, job = self._event, replies[0].job
        if job.kind == "chat":
            for r in replies:
                send(r.chunk(first=True))
        reasons, failure = [None] * len(replies), None
        for i, (kind, *rest) in self._events(shared, len(replies)):
            if kind == "step":
                send(replies[i].chunk(rest[0]))
            elif kind == "end" and rest[0] != "cancelled":
                reasons[i] = rest[0]
                send(replies[i].chunk(reason=rest[0]))
            else:
                failure = rest[0] if kind == "error" else "the server is shutting down: the reply was cut"
                break
        if failure is None and None in reasons:
            failure = "the server is shutting down: the reply was cut"
        if failure is not None:                               # no finish reason: say why
            status = 500 if not failure.startswith("the server is shutting down") else 503
            self.wfile.write(b"data: " + error_body(status, failure) + b"\n\n")
        elif job.include_usage:
            send(replies[0].usage_chunk(usage(replies)))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _event(self, obj) -> None:
        self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
        self.wfile.flush()
