"""Safe under abuse: every bad request is a 4xx with OpenAI's error JSON
``{"error": {"message", "type", "param", "code"}}``, never a traceback or a dead server; slow and
vanished clients lose their connection and their slot; an API key is checked. Raw http.client
and sockets, so that nothing a client library would smooth over is hidden."""
from __future__ import annotations

import http.client
import json
import socket
import time

import pytest

from tests.server.conftest import HOST, post, start

CHAT = "/v1/chat/completions"
MSG = [{"role": "user", "content": "Hi"}]


def assert_error(status, body, expected_status, param="skip"):
    assert status == expected_status, body
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert "Traceback" not in body["error"]["message"]
    if param != "skip":
        assert body["error"]["param"] == param


@pytest.mark.parametrize("field, value", [
    ("max_tokens", -1), ("max_tokens", "10"), ("max_tokens", 2.5), ("max_tokens", True),
    ("temperature", -0.5), ("temperature", "hot"), ("top_p", 0), ("top_p", 1.5),
    ("top_k", -3), ("min_p", 2), ("seed", -1), ("seed", "x"), ("frequency_penalty", 9),
    ("presence_penalty", None if False else [1]), ("stop", 5), ("stop", [""]), ("stream", "yes"),
    ("logprobs", 1), ("top_logprobs", 99), ("n", 9), ("n", 0), ("logit_bias", {"x": 1}),
    ("logit_bias", {"5": 500}), ("response_format", {"type": "yaml"}),
    ("response_format", {"type": "json_schema", "json_schema": {"schema": {"pattern": "a"}}}),
    ("messages", "Hi"), ("messages", []), ("messages", [{"role": "wizard", "content": "x"}]),
    ("messages", [{"role": "user", "content": 5}]), ("tools", [{"type": "function"}]),
])
def test_a_wrong_field_is_a_400_naming_it(server, field, value):
    status, body = post(server, CHAT, {"messages": MSG, "max_tokens": 2, field: value})
    assert_error(status, body, 400)
    if field not in ("response_format",):
        assert body["error"]["param"] in (field, "top_logprobs", "logprobs"), body


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(server, literal):
    raw = ('{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2, "temperature": '
           + literal + "}").encode()
    status, body = post(server, CHAT, None, raw=raw)
    assert_error(status, body, 400, param="temperature")


@pytest.mark.parametrize("raw", [b"{", b"not json", b"[1, 2]", b'"text"', b"\xff\xfe", b"",
                                 b"[" * 100_000 + b"]" * 100_000])
def test_malformed_json_is_a_400(server, raw):
    assert_error(*post(server, CHAT, None, raw=raw), 400)


def test_max_tokens_past_the_context_is_a_400(server):
    status, body = post(server, CHAT, {"messages": MSG, "max_tokens": 10_000})
    assert_error(status, body, 400, param="max_tokens")
    assert body["error"]["code"] == "context_length_exceeded"


def test_a_prompt_longer_than_the_context_is_a_400(server):
    status, body = post(server, "/v1/completions", {"prompt": "word " * 500, "max_tokens": 1})
    assert_error(status, body, 400, param="prompt")
    assert body["error"]["code"] == "context_length_exceeded"


def test_an_unknown_model_is_a_404(server):
    assert_error(*post(server, CHAT, {"model": "gpt-9", "messages": MSG}), 404, param="model")


def test_an_unknown_path_is_a_404_and_a_wrong_method_a_405(server):
    assert_error(*post(server, "/v1/nothing", {}), 404)
    conn = http.client.HTTPConnection(HOST, server.server_address[1], timeout=10)
    conn.request("GET", CHAT)
    response = conn.getresponse()
    assert_error(response.status, json.loads(response.read()), 405)
    conn.request("DELETE", "/v1/models")
    response = conn.getresponse()
    assert_error(response.status, json.loads(response.read()), 405)


def test_a_body_over_the_limit_is_a_413_unread(server):
    conn = http.client.HTTPConnection(HOST, server.server_address[1], timeout=10)
    conn.putrequest("POST", CHAT)
    conn.putheader("Content-Length", str(server.max_body + 1))
    conn.endheaders()                        # the body itself is never sent
    response = conn.getresponse()
    assert_error(response.status, json.loads(response.read()), 413)


def test_a_post_without_content_length_is_a_411(server):
    with socket.create_connection((HOST, server.server_address[1]), timeout=10) as s:
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = b""
        while chunk := s.recv(65536):        # the server closes the connection after it
            reply += chunk
        reply = reply.decode()
    assert reply.startswith("HTTP/1.1 411") and '"error"' in reply


def test_the_server_still_answers_after_every_refusal(server):
    status, body = post(server, "/v1/completions", {"prompt": "Hi", "max_tokens": 3, "seed": 0})
    assert status == 200 and body["usage"]["completion_tokens"] == 3


def test_tokenize_and_detokenize_round_trip(server, tiny):
    status, body = post(server, "/tokenize", {"content": "To be, or not"})
    assert status == 200 and body["tokens"] == tiny[1].encode_ordinary("To be, or not")
    status, back = post(server, "/detokenize", {"tokens": body["tokens"]})
    assert status == 200 and back["content"] == "To be, or not"
    status, pieces = post(server, "/tokenize", {"content": "To be", "with_pieces": True})
    assert "".join(p["piece"] for p in pieces["tokens"]) == "To be"
    assert_error(*post(server, "/detokenize", {"tokens": [10**9]}), 400, param="tokens")
    assert_error(*post(server, "/tokenize", {"content": 5}), 400, param="content")


def test_an_api_key_is_checked_on_every_request(tiny):
    keyed = start(*tiny, slots=1, api_key="s3cret")
    try:
        assert_error(*post(keyed, "/v1/completions", {"prompt": "Hi", "max_tokens": 1}), 401)
        assert_error(*post(keyed, "/tokenize", {"content": "Hi"},
                           headers={"Authorization": "Bearer wrong"}), 401)
        conn = http.client.HTTPConnection(HOST, keyed.server_address[1], timeout=10)
        conn.request("GET", "/v1/models")
        assert conn.getresponse().status == 401
        status, _ = post(keyed, "/v1/completions", {"prompt": "Hi", "max_tokens": 1},
                         headers={"Authorization": "Bearer s3cret"})
        assert status == 200
        conn = http.client.HTTPConnection(HOST, keyed.server_address[1], timeout=10)
        conn.request("GET", "/")                     # the page's files need no key …
        r = conn.getresponse()
        assert r.status == 200 and b"<html" in r.read()
        assert_error(*post(keyed, "/inspect/steps", {"prompt": "Hi", "max_tokens": 1}), 401)  # … its data does
    finally:
        keyed.stop(grace=0.5)


def test_a_stalled_client_is_dropped_and_others_are_served(tiny):
    """A client that sends half a request and stops loses its connection after the client
    timeout; meanwhile the server answers others."""
    server = start(*tiny, slots=1, client_timeout=0.5)
    try:
        with socket.create_connection((HOST, server.server_address[1]), timeout=10) as s:
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            status, _ = post(server, "/v1/completions", {"prompt": "Hi", "max_tokens": 2})
            assert status == 200
            started = time.monotonic()
            reply = s.recv(65536)             # a 408, then the server closes the connection
            while reply and s.recv(65536):
                pass
            assert time.monotonic() - started < 5
        assert b"408" in reply.split(b"\r\n")[0]
    finally:
        server.stop(grace=0.5)


class Slow:
    """The tiny model, 20 ms a forward: a 100-token reply takes 2 s, long enough to drop it."""

    def __init__(self, model):
        self.model, self.config = model, model.config

    def __call__(self, *args, **kwargs):
        time.sleep(0.02)
        return self.model(*args, **kwargs)


def test_a_client_that_disconnects_mid_stream_frees_its_slot(tiny):
    """With one slot: a stream read for one chunk and then dropped frees the slot at once (its
    generation is cut, not run to its 100 tokens), and the next request is answered."""
    server = start(Slow(tiny[0]), tiny[1], slots=1)
    try:
        s = socket.create_connection((HOST, server.server_address[1]), timeout=10)
        body = json.dumps({"prompt": "Hi", "max_tokens": 100, "stream": True}).encode()
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                  b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        seen = b""
        while b"data: " not in seen:
            seen += s.recv(4096)
        s.close()
        deadline = time.monotonic() + 1.0    # the whole reply would take 2 s
        while any(server.engine.batcher.slots) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not any(server.engine.batcher.slots), "the dropped stream still holds its slot"
        assert server.engine.batcher.cut == 1
        status, reply = post(server, "/v1/completions", {"prompt": "Hi", "max_tokens": 2})
        assert status == 200 and reply["usage"]["completion_tokens"] == 2
    finally:
        server.stop(grace=0.5)


def test_too_many_connections_get_a_503_at_once(tiny):
    server = start(*tiny, slots=1, max_connections=2)
    try:
        held = [socket.create_connection((HOST, server.server_address[1]), timeout=10)
                for _ in range(2)]
        time.sleep(0.2)
        with socket.create_connection((HOST, server.server_address[1]), timeout=10) as s:
            assert s.recv(4096).startswith(b"HTTP/1.1 503")
        for h in held:
            h.close()
    finally:
        server.stop(grace=0.5)


def test_a_client_that_disconnects_while_waiting_for_a_whole_reply_frees_its_slot(tiny):
    server = start(Slow(tiny[0]), tiny[1], slots=1)
    try:
        s = socket.create_connection((HOST, server.server_address[1]), timeout=10)
        body = json.dumps({"prompt": "Hi", "max_tokens": 100}).encode()
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: "
                  + str(len(body)).encode() + b"\r\n\r\n" + body)
        while not any(server.engine.batcher.slots):
            time.sleep(0.01)
        s.close()
        deadline = time.monotonic() + 1.0
        while any(server.engine.batcher.slots) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not any(server.engine.batcher.slots) and server.engine.batcher.cut == 1
    finally:
        server.stop(grace=0.5)


def test_max_completion_tokens_is_max_tokens_new_name(server):
    """Chat takes ``max_completion_tokens`` (OpenAI's newer name), winning over ``max_tokens``."""
    for body, n in (({"max_completion_tokens": 3}, 3), ({"max_tokens": 4}, 4),
                    ({"max_completion_tokens": 2, "max_tokens": 9}, 2),
                    ({"max_completion_tokens": None, "max_tokens": 5}, 5)):
        status, reply = post(server, CHAT, {"messages": MSG, "seed": 1, "ignore_eos": True, **body})
        assert status == 200 and reply["usage"]["completion_tokens"] == n, (body, reply)
    status, reply = post(server, CHAT, {"messages": MSG, "max_completion_tokens": 0})
    assert_error(status, reply, 400, param="max_completion_tokens")
