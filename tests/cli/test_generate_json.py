"""``generate --json`` / ``--json-final`` / ``--logprobs K`` run as a subprocess: every line
parses, and the log-probs are the library's for the same seed (``generate(..., logprobs=True,
top_n=K)``)."""
import json

import pytest

from minillm import load_model
from minillm.decoding.generate import generate
from tests.cli.subprocess_run import ROOT, minillm

PROMPT, SEED, N = "ROMEO:", 3, 6


@pytest.fixture(scope="module")
def library_steps():
    model, tok = load_model(ROOT / "weights" / "shakespeare")
    return tok, list(generate(model, tok.encode(PROMPT), N, temperature=0.8, seed=SEED,
                              stop_ids=() if tok.eos_id is None else (tok.eos_id,),
                              tokenizer=tok, logprobs=True, top_n=3))


def test_json_is_one_object_per_token_with_the_librarys_logprobs(library_steps):
    tok, steps = library_steps
    code, out, err = minillm("generate", "--json", "--logprobs", "3", "-t", "0.8", "--seed", SEED,
                             "-n", N, "-p", PROMPT)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in rows] == [s.id for s in steps]
    assert [r["text"] for r in rows] == [s.text for s in steps]
    for r, s in zip(rows, steps):
        assert r["logprob"] == pytest.approx(s.logprob, abs=1e-6)
        assert [t["id"] for t in r["top"]] == [i for i, _ in s.top]
        assert [t["logprob"] for t in r["top"]] == pytest.approx([lp for _, lp in s.top], abs=1e-6)
        assert [t["text"] for t in r["top"]] == [tok.decode([i]) for i, _ in s.top]
    assert PROMPT not in out                          # no echo: stdout is JSON only
    assert f"seed {SEED}" in err


def test_json_without_logprobs_has_empty_top():
    code, out, _ = minillm("generate", "--json", "-t", "0", "-n", 3, PROMPT)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 3 and all(r["top"] == [] and r["logprob"] <= 0 for r in rows)


def test_json_final_is_one_object_with_text_ids_reason_timings_seed(library_steps):
    tok, steps = library_steps
    code, out, err = minillm("generate", "--json-final", "-t", "0.8", "--seed", SEED, "-n", N, PROMPT)
    assert code == 0, err
    (line,) = out.splitlines()
    final = json.loads(line)
    assert final["ids"] == [s.id for s in steps] and final["text"] == "".join(s.text for s in steps)
    assert final["finish_reason"] == "length" and final["seed"] == SEED
    assert final["prompt_tokens"] == len(tok.encode(PROMPT)) and final["generated_tokens"] == N
    assert final["prompt_seconds"] >= 0 and final["generation_seconds"] >= 0
    assert "tokens" not in final


def test_json_final_with_logprobs_carries_the_tokens(library_steps):
    _, steps = library_steps
    code, out, _ = minillm("generate", "--json-final", "--logprobs", "3", "-t", "0.8", "--seed",
                           SEED, "-n", N, PROMPT)
    final = json.loads(out)
    assert code == 0 and [t["logprob"] for t in final["tokens"]] == \
        pytest.approx([s.logprob for s in steps], abs=1e-6)


def test_a_stop_string_ends_with_finish_reason_stop():
    code, out, _ = minillm("generate", "--json-final", "-t", "0", "-n", 30, "--stop", "\\n", PROMPT)
    final = json.loads(out)
    assert code == 0 and final["finish_reason"] == "stop" and "\n" not in final["text"]
