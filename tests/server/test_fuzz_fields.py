"""Any JSON body, any field of any type: the server answers 200 or a 4xx with OpenAI's error
JSON — never a 500, never a traceback — and keeps serving. Hypothesis draws bodies that mix the
real fields (with values of every JSON type, in range or not) and unknown ones."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server.conftest import post

FIELDS = ["max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "min_p",
          "seed", "stop", "n", "frequency_penalty", "presence_penalty", "repeat_penalty",
          "logit_bias", "logprobs", "top_logprobs", "stream", "stream_options",
          "response_format", "ignore_eos", "echo", "model", "user", "tools", "candidates"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=6)
small = st.one_of(st.integers(0, 6), st.floats(0, 1.5), st.sampled_from(
    ["e", ["a", "b"], {"type": "json_object"}, {"include_usage": True}, {"5": 1.0}]))
messages = st.one_of(values, st.just([{"role": "user", "content": "Hi"}]),
                     st.lists(st.fixed_dictionaries({"role": st.sampled_from(
                         ["user", "system", "assistant", "tool", 3]), "content": values}),
                         max_size=3))


@st.composite
def bodies(draw, path):
    body = {k: draw(st.one_of(values, small)) for k in draw(st.lists(st.sampled_from(FIELDS),
                                                                      max_size=6, unique=True))}
    if draw(st.booleans()):
        body["max_tokens"] = draw(st.integers(1, 4))        # keep most generations short
    if draw(st.booleans()):
        body.pop("model", None)
    key = "messages" if path.endswith("chat/completions") else "prompt"
    body[key] = draw(messages if key == "messages" else st.one_of(values, st.just("To be")))
    return body


def _nan_safe(body):
    return json.dumps(body, allow_nan=True).encode()         # NaN, Infinity sent as clients may


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                HealthCheck.too_slow])
@given(data=st.data())
def test_any_body_is_answered_200_or_a_4xx_in_openais_shape(server, data):
    path = data.draw(st.sampled_from(["/v1/chat/completions", "/v1/completions", "/inspect/steps",
                                      "/tokenize", "/detokenize", "/inspect/attention"]))
    body = data.draw(bodies(path))
    if path in ("/tokenize", "/detokenize", "/inspect/attention"):
        body = {"content": body.get("prompt"), "tokens": data.draw(values),
                "position": data.draw(values)}
    if body.get("stream") is True:
        body["stream"] = False                                # (a stream's body is events)
    status, reply = _post_raw(server, path, _nan_safe(body))
    assert status == 200 or 400 <= status < 500, (status, body, reply)
    if status != 200:
        assert set(reply["error"]) == {"message", "type", "param", "code"}
        assert "Traceback" not in reply["error"]["message"]


def _post_raw(server, path, raw):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=60)
    conn.request("POST", path, body=raw, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    if path == "/inspect/steps" and r.status == 200:
        return 200, None                                      # (events, checked elsewhere)
    return r.status, json.loads(data)


def test_the_server_answers_after_the_fuzzing(server):
    status, reply = post(server, "/v1/completions", {"prompt": "Hi", "max_tokens": 2})
    assert status == 200 and reply["usage"]["completion_tokens"] == 2
