"""The page at ``/`` and its JSON endpoints: the files served with no outside address, each step's
candidates equal to ``generate``'s (raw log-probs and the sampled probabilities the draw used),
the attention equal to ``model(ids, return_weights=True)``, and page.js's sampling pipeline equal
to minillm.sampling's (run under node) — then the page itself in headless Chromium."""
from __future__ import annotations

import http.client
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from minillm import Sampler, generate
from minillm.lens import lens_table, logit_lens
from tests.server.chromium import Chromium
from tests.server.conftest import HOST, post

PAGE = Path(__file__).resolve().parents[2] / "minillm" / "server" / "page"
ASK = {"prompt": "To be, or", "max_tokens": 6, "seed": 3, "temperature": 0.9, "top_k": 30,
       "top_p": 0.95, "min_p": 0.01, "candidates": 12}


def get(server, path: str):
    conn = http.client.HTTPConnection(HOST, server.server_address[1], timeout=30)
    conn.request("GET", path)
    r = conn.getresponse()
    return r.status, dict(r.getheaders()), r.read()


def steps(server, body) -> list[dict]:
    conn = http.client.HTTPConnection(HOST, server.server_address[1], timeout=60)
    conn.request("POST", "/inspect/steps", json.dumps(body), {"Content-Type": "application/json"})
    raw = conn.getresponse().read().decode()
    events = [line[6:] for line in raw.split("\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    return [json.loads(e) for e in events[:-1]]


def test_the_page_is_served_with_nothing_from_outside(server):
    for path, kind in (("/", "text/html"), ("/page.js", "text/javascript"), ("/page.css", "text/css")):
        status, headers, data = get(server, path)
        assert status == 200 and headers["Content-Type"].startswith(kind)
        assert headers["Content-Security-Policy"] == "default-src 'self'"
        assert not re.search(rb"https?://|//[a-z]", data), f"{path} names an outside address"


def test_each_step_gives_generates_candidates_raw_and_sampled(server, tiny):
    model, tok = tiny
    events = steps(server, ASK)
    settings = {k: ASK[k] for k in ("temperature", "top_k", "top_p", "min_p")}
    expected = list(generate(model, tok.encode_ordinary(ASK["prompt"]), ASK["max_tokens"],
                             seed=ASK["seed"], tokenizer=tok, logprobs=True, top_n=12, **settings))
    shown = [e for e in events if "candidates" in e]
    assert [e["id"] for e in shown] == [s.id for s in expected]
    assert "".join(e["text"] for e in shown) == "".join(s.text for s in expected)
    for event, step in zip(shown, expected):
        assert [c["id"] for c in event["candidates"]] == [i for i, _ in step.top]
        assert np.allclose([c["logprob"] for c in event["candidates"]], [lp for _, lp in step.top],
                           atol=1e-5)
        assert np.allclose([c["sampled"] for c in event["candidates"]], step.top_sampled, atol=1e-6)
        assert sum(n for _, n in event["tail"]) == model.config.vocab_size - 12
    assert events[-1]["finish_reason"] == "length"


def test_the_attention_is_the_models_weights(server, tiny):
    model, tok = tiny
    ids = tok.encode_ordinary("Now is the winter of our discontent")
    status, body = post(server, "/inspect/attention", {"tokens": ids, "position": 4})
    assert status == 200 and len(body["pieces"]) == 5
    _, weights = model(np.asarray(ids[:5])[None], return_weights=True)
    assert len(body["weights"]) == model.config.n_layers
    for layer, w in zip(body["weights"], weights):
        assert np.allclose(layer, w[0, :, 4, :5], atol=1e-5)
        assert np.allclose(np.sum(layer, axis=1), 1.0, atol=1e-4)
    status, body = post(server, "/inspect/attention", {"tokens": ids, "position": 99})
    assert status == 400 and body["error"]["param"] == "position"


def test_the_lens_column_is_minillm_lens(server, tiny):
    """/inspect/lens at position i = minillm.lens on the whole text, column i: each layer's top
    token and probability (lens_table), and the next token's probability (logit_lens)."""
    model, tok = tiny
    ids = tok.encode_ordinary("Now is the winter of our discontent")
    top, prob = lens_table(model, ids)                            # [L + 1, T] each
    p = logit_lens(model, ids, probs=True)                        # [L + 1, T, V]
    for i in (0, 4, len(ids) - 1):
        status, body = post(server, "/inspect/lens", {"tokens": ids, "position": i})
        assert status == 200 and body["position"] == i
        layers = body["layers"]
        assert [r["layer"] for r in layers] == list(range(model.config.n_layers + 1))
        assert [r["id"] for r in layers] == top[:, i].tolist()
        assert [r["piece"] for r in layers] == [tok.decode([t]) for t in top[:, i]]
        assert np.allclose([r["prob"] for r in layers], prob[:, i], atol=1e-5)
        if i + 1 < len(ids):
            assert body["next"] == ids[i + 1] and body["next_piece"] == tok.decode([ids[i + 1]])
            assert np.allclose([r["next_prob"] for r in layers], p[:, i, ids[i + 1]], atol=1e-6)
        else:                                                     # nothing followed it
            assert body["next"] is None and all("next_prob" not in r for r in layers)
    status, body = post(server, "/inspect/lens", {"tokens": ids})  # default: the last position
    assert status == 200 and body["position"] == len(ids) - 1


@pytest.mark.parametrize("body, param", [
    ({"tokens": [1, 2], "position": 2}, "position"),
    ({"tokens": [1, 2], "position": -1}, "position"),
    ({"tokens": [1, 2], "position": "1"}, "position"), ({"tokens": []}, "tokens"),
    ({"tokens": [1, 10**6]}, "tokens"), ({"tokens": [1] * 129}, "tokens"), ({}, "tokens")])
def test_the_lens_refuses_bad_input_with_a_400(server, body, param):
    status, reply = post(server, "/inspect/lens", body)
    assert status == 400 and reply["error"]["param"] == param, reply


NODE_CHECK = """
const { sampledColumn } = require(process.argv[1]);
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(input.settings.map(s => sampledColumn(input.candidates, input.tail, s))));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is absent: page.js's pipeline "
                                                         "is checked with node")
def test_the_pages_sampling_pipeline_equals_minillm_sampling(server, tiny):
    """page.js's sampledColumn on a step's candidates and tail = Sampler.probs on the full
    logits: exactly (float rounding) when top-k <= K, within 0.01 from the tail's histogram
    otherwise."""
    model, tok = tiny
    event = steps(server, {**ASK, "max_tokens": 1, "candidates": 32})[0]
    logits = model(np.asarray(tok.encode_ordinary(ASK["prompt"]))[None])[0, -1]
    ids = [c["id"] for c in event["candidates"]]
    exact = [dict(temperature=t, top_k=k, top_p=p, min_p=m)
             for t, k, p, m in [(1.0, 32, 1.0, 0.0), (0.7, 10, 1.0, 0.0), (1.3, 20, 0.5, 0.0),
                                (0.5, 32, 1.0, 0.3), (0.0, 5, 1.0, 0.0), (2.0, 3, 0.9, 0.1)]]
    approximate = [dict(temperature=t, top_k=0, top_p=p, min_p=m)
                   for t, p, m in [(1.0, 1.0, 0.0), (0.6, 0.9, 0.0), (1.5, 1.0, 0.05)]]
    data = json.dumps({"candidates": event["candidates"], "tail": event["tail"],
                       "settings": exact + approximate})
    out = subprocess.run(["node", "-e", NODE_CHECK, str(PAGE / "page.js")], input=data,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    for s, column in zip(exact + approximate, json.loads(out)):
        want = Sampler(**s).probs(logits)[ids]
        tol = 1e-5 if s["top_k"] else 1e-2
        assert np.allclose(column, want, atol=tol), (s, column[:4], want[:4])


BROWSERS = [b for b in ("chromium", "chromium-browser") if shutil.which(b)]
LIVE = ("Array.from(document.querySelectorAll('#candidates-table tbody tr'))"   # [drawn, sliders]
        ".map(r => [r.cells[3].textContent, r.cells[4].textContent])")


def press(browser, key: str, code: int, times: int = 1) -> None:
    for _ in range(times):
        for kind in ("rawKeyDown", "keyUp"):
            browser.send("Input.dispatchKeyEvent", session=True, type=kind, key=key, code=key,
                         windowsVirtualKeyCode=code)


@pytest.mark.skipif(not BROWSERS, reason="headless Chromium is absent: install the "
                                         "distribution's chromium package (never a browser "
                                         "download; `apt-get install chromium`, as .ci/run "
                                         "does when it runs as root) to run the page in it")
def test_the_page_in_headless_chromium(server, tmp_path):
    """A user's session in a real browser (DevTools protocol over a pipe, tests/server/
    chromium.py): type a prompt, generate, wait for the reply; the last token's lens column is
    shown, its last row the token's raw p; at the draw's own settings the sliders' column equals
    the column as drawn; two presses of the arrow key on the temperature
    slider change it; a screenshot is saved. Then /?demo does the same by itself."""
    with Chromium(BROWSERS[0], str(tmp_path / "profile")) as browser:
        browser.open(f"{server.url}/")
        browser.wait_for("document.getElementById('model').textContent.startsWith('tiny-llama')")
        browser.evaluate("(() => { const $ = id => document.getElementById(id);"
                         " $('max_tokens').value = 8; $('top_k').value = 20;"
                         " $('top_k').dispatchEvent(new Event('input'));"
                         " $('prompt').select(); $('prompt').focus(); })()")
        browser.send("Input.insertText", session=True, text="Now is the winter")
        assert browser.evaluate("document.getElementById('prompt').value") == "Now is the winter"
        browser.evaluate("document.getElementById('go').click()")
        status = browser.wait_for("(s => /^(done|error)/.test(s) && s)"
                                  "(document.getElementById('status').textContent)")
        assert status == "done: length, 8 tokens", (status, browser.console)
        reply = browser.evaluate("document.getElementById('tokens').textContent")
        assert reply.startswith("Now is the winter") and len(reply) > len("Now is the winter")
        lens = browser.wait_for("(r => r.length && r)(Array.from(document.querySelectorAll("
                                "'#lens-table tbody tr')).map(r => r.cells[3].textContent))")
        assert len(lens) == 3                                       # the embeddings + 2 blocks
        picked = browser.evaluate("document.querySelector('#candidates-table tr.picked')"
                                  ".cells[2].textContent")
        assert lens[-1] == picked        # the last row of the lens is the model's own raw p
        before = browser.evaluate(LIVE)
        assert len(before) == 20 and all(drawn == live for drawn, live in before), before
        browser.evaluate("document.getElementById('temperature').focus()")
        press(browser, "ArrowRight", 39, times=4)                    # 0.8 -> 1.0
        assert browser.evaluate("document.getElementById('temperature').value") == "1"
        after = browser.evaluate(LIVE)
        assert [d for d, _ in after] == [d for d, _ in before]      # the draw is history
        assert [l for _, l in after] != [l for _, l in before]      # the sliders' column moved
        shot = tmp_path / "page.png"
        browser.screenshot(shot)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
        browser.open(f"{server.url}/?demo")
        after = browser.wait_for("document.body.dataset.after")
        assert after != browser.evaluate("document.body.dataset.before")
