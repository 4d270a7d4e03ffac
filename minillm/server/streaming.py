"""A generation's answer over HTTP: the whole reply at once, or server-sent events as it grows.

``Replying`` is the part of the handler (handler.py) that waits on a job's events (slots.py)
and writes them out; it also watches the client: one that has closed its side (a readable
socket with nothing to read) or stopped reading (a write that times out) gets its job cancelled,
so its slot is free before the next decode step. A stream always ends with ``data: [DONE]``;
one cut short (shutdown, an error) first gets an error event in OpenAI's shape.
"""
from __future__ import annotations

import json
import select
import socket
import time

from minillm.server.errors import APIError, error_body
from minillm.server.replies import Reply

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
        reply, live = Reply(job, server.served), server.engine.submit(job)
        with server.lock:
            server.active += 1
        try:
            (self._stream if job.stream else self._whole)(live, reply)
        finally:
            server.engine.cancel(live)     # (a no-op once it has ended)
            with server.lock:
                server.active -= 1

    def _events(self, live):
        """The job's events; stops early when the client is gone, or once the batch thread has
        stopped and its last events are read (both looked at every 0.1 s)."""
        looked = time.monotonic()
        for event in live.events(timeout=0.1):
            if time.monotonic() - looked >= 0.1:
                looked = time.monotonic()
                if self._client_gone():
                    return
                if not self.server.engine.thread.is_alive():
                    yield from ([event] if event is not None else []) + drain(live.out)
                    return
            if event is not None:
                yield event

    def _client_gone(self) -> bool:
        """The client closed its side (a readable socket with nothing to read)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _whole(self, live, reply) -> None:
        kind, rest = None, [None]
        for kind, *rest in self._events(live):
            if kind != "step":
                break
            reply.add(rest[0])
        if kind == "end" and rest[0] != "cancelled":
            return self._send_json(200, reply.whole(rest[0]))
        self.close_connection = True
        if kind == "error":
            raise APIError(500, rest[0])
        if self.server.closing or not self.server.engine.thread.is_alive():
            raise APIError(503, "the server is shutting down: the reply was cut")
        # else the client has gone: nobody to answer

    def _stream(self, live, reply) -> None:
        self.close_connection = self.streaming = True     # the stream ends with the connection
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        send = self._event
        if reply.job.kind == "chat":
            send(reply.chunk(first=True))
        kind = None
        for kind, *rest in self._events(live):
            if kind == "step":
                send(reply.chunk(rest[0]))
                continue
            if kind == "end" and rest[0] != "cancelled":
                send(reply.chunk(reason=rest[0]))
                if reply.job.include_usage:
                    send(reply.usage_chunk())
            break
        if kind != "end" or rest[0] == "cancelled":          # no finish reason: say why
            message = rest[0] if kind == "error" else "the server is shutting down: the reply was cut"
            self.wfile.write(b"data: " + error_body(500 if kind == "error" else 503, message)
                             + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _event(self, obj) -> None:
        self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
        self.wfile.flush()
