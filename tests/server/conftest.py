"""A server on a free 127.0.0.1 port serving the shipped tiny-llama (2 layers, n_ctx 128: fast),
started in a thread for the module's tests and stopped after them."""
from __future__ import annotations

import http.client
import json
import threading

import pytest

from minillm import load_model
from minillm.server import make_server

HOST = "127.0.0.1"


@pytest.fixture(scope="module")
def tiny():
    return load_model("weights/tiny-llama")


def start(model, tokenizer, name: str = "tiny-llama", **options):
    """A running server (``port=0``: a free one), serving in a thread."""
    server = make_server(model, tokenizer, name=name, host=HOST, port=0, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


@pytest.fixture(scope="module")
def server(tiny):
    server = start(*tiny, slots=4)
    yield server
    server.stop(grace=1.0)


def post(server, path: str, body, headers=None, raw: bytes | None = None):
    """(status, parsed JSON) of one POST over http.client."""
    conn = http.client.HTTPConnection(HOST, server.server_address[1], timeout=60)
    data = raw if raw is not None else json.dumps(body).encode()
    conn.request("POST", path, body=data, headers={"Content-Type": "application/json",
                                                   **(headers or {})})
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    return response.status, json.loads(payload)
