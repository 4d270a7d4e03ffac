"""The one error shape every endpoint answers with: OpenAI's ``{"error": {...}}`` and a 4xx status.

    {"error": {"message": "max_tokens must be an integer >= 0, got -1",
               "type": "invalid_request_error", "param": "max_tokens", "code": null}}

A client's mistake is an ``APIError`` raised anywhere below the handler; the handler turns it into
that JSON (``body``) with its status. Anything else that escapes a request is a bug of the server:
it is answered 500 with a one-line message (never a traceback: it could show paths and code) and
the server keeps serving. Statuses follow OpenAI's API: 400 a bad request, 401 no or a wrong API
key, 404 an unknown path or model, 405 a wrong method, 408 a client too slow to send its body,
411 no Content-Length, 413 a body over the limit, 503 the server is shutting down.
"""
from __future__ import annotations

import json
import sys

TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
         405: "invalid_request_error", 408: "timeout_error", 411: "invalid_request_error",
         413: "invalid_request_error", 500: "server_error", 503: "server_error"}


class APIError(Exception):
    """A request the server refuses: ``status`` (4xx/5xx), ``message`` (what was wrong and what is
    allowed), ``param`` (the field at fault, or None), ``code`` (a short name, or None).

    Example: ``raise APIError(400, "temperature must be >= 0, got -1", param="temperature")``.
    """

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code

    def body(self) -> bytes:
        """The JSON bytes of OpenAI's error object."""
        return error_body(self.status, self.message, self.param, self.code)


def error_body(status: int, message: str, param: str | None = None, code: str | None = None) -> bytes:
    error = {"message": message, "type": TYPES.get(status, "invalid_request_error"),
             "param": param, "code": code}
    return json.dumps({"error": error}).encode()


def bad(param: str, message: str, code: str | None = None) -> APIError:
    """A 400 for one field: ``raise bad("top_p", "top_p must be in (0, 1], got 2")``."""
    return APIError(400, message, param=param, code=code)


def log(message: str) -> None:
    """One line on stderr: the start, the stop, an internal error (never a request's data)."""
    print(f"minillm serve: {message}", file=sys.stderr, flush=True)
