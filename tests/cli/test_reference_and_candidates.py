"""``--reference`` runs the code a reader reads (minillm/model/), and ``--show-candidates`` /
``/candidates`` show how each token was chosen: both by running the commands."""
import io
import math
import re
import sys

import numpy as np

from minillm import GPT, Sampler, generate, load_model
from minillm.cli import main
from tests.chat.test_chat import model_dir, model, tok  # noqa: F401  (a tiny ChatML model)
from tests.cli.helpers import run_cli

SHAKESPEARE = "weights/shakespeare"
GREEDY = ("generate", "--model", SHAKESPEARE, "-t", "0", "--max-new-tokens", "12", "--no-echo")


def test_reference_gives_the_engines_tokens_and_says_what_ran(capsys):
    """What each mode runs after a real edit of a file is tests/test_map_by_edits.py's: an edit
    there changes the source the engine imports (a monkeypatched attribute would not)."""
    _, plain, err = run_cli(capsys, *GREEDY, "ROMEO:")
    _, reference, err_reference = run_cli(capsys, *GREEDY, "--reference", "ROMEO:")
    assert reference == plain                          # the same tokens, either code
    assert "ran minillm/model/ (--reference)" in err_reference
    assert "--reference" not in err


def test_load_model_reference_is_model_code():
    model, _ = load_model(SHAKESPEARE, fast=False)
    assert type(model) is GPT and type(model).forward is GPT.forward


def candidate_blocks(err: str) -> list[list[tuple[bool, float, float | None, str]]]:
    """Each step's rows: (chosen, raw p, sampled p or None for '-', token)."""
    blocks = []
    for block in re.split(r"\nstep \d+: ", "\n" + err)[1:]:
        rows = []
        for line in block.splitlines()[2:]:
            m = re.match(r"  ([→ ]) (\d\.\d{3}) +(\d\.\d{3}|-)  (.*)$", line)
            if m:
                rows.append((m[1] == "→", float(m[2]), None if m[3] == "-" else float(m[3]), m[4]))
        blocks.append(rows)
    return blocks


def test_show_candidates_lists_k_tokens_per_step_before_and_after_sampling(capsys):
    code, out, err = run_cli(capsys, "generate", "--model", SHAKESPEARE, "--show-candidates", "4",
                             "-t", "0.7", "--top-k", "2", "--seed", "3", "--max-new-tokens", "5",
                             "ROMEO:")
    assert code == 0
    blocks = candidate_blocks(err)
    assert len(blocks) == 5
    for rows in blocks:
        assert sum(chosen for chosen, *_ in rows) == 1             # one token marked as chosen
        raw = [r[1] for r in rows[:4]]
        assert raw == sorted(raw, reverse=True)                    # most likely first
        kept = [r for r in rows[:4] if r[2] is not None]
        assert len(kept) == 2                                      # top-k 2: the rest removed
        assert math.isclose(sum(r[2] for r in kept), 1.0, abs_tol=2e-3)
        assert all(r[2] is not None for r in rows if r[0])         # the chosen one survived


def test_show_candidates_numbers_are_the_samplers_distribution():
    """Step.top_sampled holds Sampler.probs at the top ids (what the CLI prints)."""
    model, tokenizer = load_model(SHAKESPEARE)
    sampler = Sampler(temperature=0.8, top_p=0.9)
    prompt = tokenizer.encode("ROMEO:")
    steps = list(generate(model, prompt, 4, sampler=sampler, seed=0, top_n=5, logprobs=True))
    ids = list(prompt)
    for step in steps:
        logits = model(np.array(ids))[-1]
        probs = sampler.probs(logits)
        np.testing.assert_allclose(step.top_sampled, [probs[i] for i, _ in step.top], atol=1e-5)
        assert math.isclose(step.sampled, probs[step.id], abs_tol=1e-5)
        assert step.sampled > 0
        ids.append(step.id)


def test_show_candidates_is_refused_outside_its_range_and_with_beams(capsys):
    code, _, err = run_cli(capsys, "generate", "--model", SHAKESPEARE, "--show-candidates", "0", "x")
    assert code == 2 and "from 1 to 50" in err
    code, _, err = run_cli(capsys, "generate", "--model", SHAKESPEARE, "--show-candidates", "51", "x")
    assert code == 2 and "from 1 to 50" in err
    code, _, err = run_cli(capsys, "generate", "--model", SHAKESPEARE, "--show-candidates", "3",
                           "--beams", "2", "x")
    assert code == 2 and "--beams" in err


def test_chat_candidates_command_and_reference(model_dir, monkeypatch, capsys):  # noqa: F811
    turns = "/candidates 3\nHello!\n/candidates 0\nAgain\n/candidates x\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(turns))
    code = main(["chat", "--model", str(model_dir), "--seed", "1", "--max-new-tokens", "4",
                 "--reference"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "showing the 3 most likely tokens at each step" in err and "candidates off" in err
    assert "K a whole number from 0 (off) to 50" in err
    first_turn = err[:err.index("candidates off")]
    blocks = candidate_blocks(first_turn)
    assert 1 <= len(blocks) <= 4 and all(sum(r[0] for r in rows) == 1 for rows in blocks)
    assert "step" not in err[err.index("candidates off"):]          # off again: no tables
    assert err.count("ran minillm/model/ (--reference)") == 2        # one stats line per reply
