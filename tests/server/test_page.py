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


@pytest.mark.skipif(not BROWSERS, reason="headless Chromium is absent: install the "
                                         "distribution's chromium package (never a browser "
                                         "download) to run the page in it")
def test_the_page_in_headless_chromium(server, tmp_path):
    """/?demo generates from the default prompt, then moves the temperature slider: the sampled
    column before and after differ; a screenshot is saved."""
    url = f"{server.url}/?demo"
    run = [BROWSERS[0], "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000"]
    dom = subprocess.run(run + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    before = re.search(r'data-before="([^"]*)"', dom)
    after = re.search(r'data-after="([^"]*)"', dom)
    assert before and after and before.group(1) and before.group(1) != after.group(1), dom[-500:]
    shot = tmp_path / "page.png"
    subprocess.run(run + [f"--screenshot={shot}", "--window-size=1000,1200", url], timeout=120)
    assert shot.exists() and shot.stat().st_size > 1000
