"""Under load: 16 concurrent clients for a bounded time (8 slots: half of them wait for a slot
at any moment), every reply complete and equal to the same request made alone with the same
seed, no error, and the server's memory flat.

The requests differ in everything a slot keeps to itself — prompt, seed, temperature, top-k,
top-p, min-p, penalties, stop strings, logprobs, stream or not, chat or completion, length — so
that a setting or a generator leaking from one slot to another would change some reply.
Memory: the process's resident set (VmRSS) after a warm-up round and after the load, which
serves 100+ requests; the bound is 25 MB of growth (a leak of each finished request's state —
its Live object, queue, settings and Steps — or of one cache allocation per request grows past
it; a first run measured 82 MB -> 84 MB).
"""
from __future__ import annotations

import http.client
import json
import threading
import time

from tests.server.conftest import HOST, start

CLIENTS, SECONDS, RSS_BOUND = 16, 6.0, 25 << 20


def spec(i: int) -> tuple[str, dict]:
    """Request i of 16: chat or completion, streamed or not, with its own settings."""
    body = {"seed": 1000 + i, "max_tokens": 8 + 4 * i, "temperature": [0.0, 0.7, 1.0, 1.3][i % 4],
            "top_k": [0, 20, 50, 5][i // 4], "top_p": [1.0, 0.9][i % 2],
            "min_p": [0.0, 0.05][(i // 2) % 2], "stream": i % 3 == 0}
    if i % 5 == 1:
        body["frequency_penalty"] = 0.5
    if i % 7 == 2:
        body["stop"] = ["e", "th"]
    if i % 4 == 3:
        body["logprobs"] = True
        body["top_logprobs"] = 2
    if i % 2:
        return "/v1/chat/completions", {**body, "messages": [
            {"role": "system", "content": "x"}, {"role": "user", "content": f"Speak {i}"}]}
    body.pop("top_logprobs", None)
    if body.pop("logprobs", None):
        body["logprobs"] = 2
    return "/v1/completions", {**body, "prompt": f"Scene {i}. Enter" + " the king" * (i % 3)}


def ask(port: int, path: str, body: dict) -> dict:
    """One request -> {"text", "tokens", "finish", "logprobs"}, streamed or not; raises on an
    error or an incomplete reply (no finish reason, no [DONE])."""
    conn = http.client.HTTPConnection(HOST, port, timeout=60)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = conn.getresponse()
    raw = r.read().decode()
    conn.close()
    if r.status != 200:
        raise AssertionError(f"{r.status}: {raw}")
    chat = path.endswith("chat/completions")
    if not body["stream"]:
        reply = json.loads(raw)
        choice = reply["choices"][0]
        lp = choice["logprobs"]
        return {"text": choice["message"]["content"] if chat else choice["text"],
                "tokens": reply["usage"]["completion_tokens"], "finish": choice["finish_reason"],
                "logprobs": None if lp is None else json.dumps(lp)}
    events = [line[6:] for line in raw.split("\n") if line.startswith("data: ")]
    if events[-1] != "[DONE]":
        raise AssertionError(f"a stream without [DONE]: {raw[-200:]}")
    chunks = [json.loads(e) for e in events[:-1]]
    if any("error" in c for c in chunks):
        raise AssertionError(f"an error event: {chunks}")
    choices = [c["choices"][0] for c in chunks if c["choices"]]
    pieces = [(c["delta"].get("content") if chat else c["text"]) for c in choices]
    text = "".join(p for p in pieces if p)
    finish = [c["finish_reason"] for c in choices if c["finish_reason"]]
    return {"text": text, "tokens": None, "finish": finish[-1] if finish else None, "logprobs": None}


def same(got: dict, alone: dict) -> bool:
    """Equal text, tokens and finish reason; log-probs equal to float32 rounding (a batch of B
    rows sums in another order than one row: 1e-6 apart, never another token)."""
    if {k: v for k, v in got.items() if k != "logprobs"} != \
            {k: v for k, v in alone.items() if k != "logprobs"}:
        return False
    if got["logprobs"] is None or alone["logprobs"] is None:
        return got["logprobs"] == alone["logprobs"]
    a, b = _numbers(json.loads(got["logprobs"])), _numbers(json.loads(alone["logprobs"]))
    return len(a) == len(b) and all(x == y if isinstance(x, str) else abs(x - y) <= 1e-4
                                    for x, y in zip(a, b))


def _numbers(value) -> list:
    """Every leaf of a JSON value, in order (keys as strings)."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in [str(k), *_numbers(v)]]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _numbers(v)]
    return [value if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)]


def rss() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) << 10 for line in f if line.startswith("VmRSS:"))


def test_sixteen_clients_get_what_each_would_get_alone(tiny):
    server = start(*tiny, slots=8)
    port = server.server_address[1]
    try:
        requests = [spec(i) for i in range(CLIENTS)]
        alone = [ask(port, path, body) for path, body in requests]     # one at a time
        assert all(a["finish"] in ("stop", "length") for a in alone)
        assert len({a["text"] for a in alone}) == CLIENTS               # all different
        rounds, errors, before = [0] * CLIENTS, [], None
        start_line = threading.Barrier(CLIENTS + 1)

        def client(i: int) -> None:
            start_line.wait()
            while time.monotonic() < deadline:
                try:
                    got = ask(port, *requests[i])
                except Exception as exc:                                # noqa: BLE001
                    errors.append(f"client {i}: {exc}")
                    return
                if not same(got, alone[i]):
                    errors.append(f"client {i} round {rounds[i]}: {got} != alone {alone[i]}")
                    return
                rounds[i] += 1

        for path, body in requests:                                     # warm-up round
            ask(port, path, body)
        before = rss()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + SECONDS
        start_line.wait()
        for t in threads:
            t.join(timeout=SECONDS + 60)
        after = rss()
        assert not errors, errors[:3]
        assert min(rounds) >= 2, rounds                                 # every client was served
        assert after - before < RSS_BOUND, f"RSS grew {(after - before) >> 20} MB over {sum(rounds)} requests"
        print(f"\n{sum(rounds)} requests by {CLIENTS} clients in {SECONDS:g} s "
              f"(rounds per client {min(rounds)}-{max(rounds)}), {server.engine.steps} decode "
              f"steps; RSS {before >> 20} MB -> {after >> 20} MB")
    finally:
        server.stop(grace=1.0)
