"""`minillm score` as a subprocess: one JSON line per token with its log-probability and top-K."""
import json

import numpy as np
import pytest

from minillm import load_model, log_softmax
from tests.cli.run_module import SHAKESPEARE, assert_clear_refusal, bad_inputs, run_module


def test_each_token_gets_its_logprob_and_the_top_k_alternatives():
    code, out, err = run_module("score", "--model", SHAKESPEARE, "--top", "3", "To be or not")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    model, tok = load_model(SHAKESPEARE)
    ids = tok.encode_ordinary("To be or not")
    logp = log_softmax(model(np.array([ids]))[0])                          # [T, V]
    assert [r["id"] for r in rows] == ids and [r["i"] for r in rows] == list(range(len(ids)))
    assert "".join(r["text"] for r in rows) == "To be or not"
    assert rows[0]["logprob"] is None and rows[0]["top"] == []            # nothing precedes it
    for t in range(1, len(ids)):
        assert rows[t]["logprob"] == pytest.approx(float(logp[t - 1, ids[t]]), abs=1e-5)
        best = np.argsort(-logp[t - 1])[:3]
        assert [a["id"] for a in rows[t]["top"]] == best.tolist()
        assert rows[t]["top"][0]["logprob"] >= rows[t]["logprob"] - 1e-6


def test_file_gives_the_same_lines_as_the_text(tmp_path):
    (tmp_path / "t.txt").write_text("To be or not", encoding="utf-8")
    assert (run_module("score", "--model", SHAKESPEARE, "--file", tmp_path / "t.txt")[1]
            == run_module("score", "--model", SHAKESPEARE, "To be or not")[1])


def test_bad_inputs_are_refused_naming_the_flag(tmp_path):
    files = bad_inputs(tmp_path)
    (tmp_path / "long.txt").write_text("To be or not to be. " * 200)
    m = ("--model", SHAKESPEARE)
    cases = [
        (("score", *m), ["TEXT", "--file"]),
        (("score", *m, "x", "--file", files["empty.txt"]), ["TEXT", "--file"]),
        (("score", *m, ""), ["TEXT", "empty"]),
        (("score", *m, "--file", files["missing.txt"]), ["--file", "no such file"]),
        (("score", *m, "--file", files["folder"]), ["--file", "folder"]),
        (("score", *m, "--file", files["latin1.txt"]), ["--file", "not UTF-8"]),
        (("score", *m, "--file", files["empty.txt"]), ["--file", "empty"]),
        (("score", *m, "--file", tmp_path / "long.txt"), ["context window of 128"]),
        (("score", *m, "--top", "-1", "hi"), ["--top"]),
        (("score", *m, "--top", "two", "hi"), ["--top", "invalid int"]),
        (("score", "hi"), ["--model"]),
    ]
    for argv, names in cases:
        code, out, err = run_module(*argv)
        assert_clear_refusal(code, err, *names)
