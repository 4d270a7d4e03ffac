"""`minillm lens`: the logit lens table and the top heads, and its refusals."""
import numpy as np
import pytest

from minillm import load_model
from minillm.lens import copying_scores, lens_table

from minillm.cli import main
from tests.cli.helpers import run_cli
from tests.cli.run_module import SHAKESPEARE, TINY_LLAMA



@pytest.mark.parametrize("path", [SHAKESPEARE, TINY_LLAMA])
def test_the_table_has_a_row_per_layer_and_the_lens_top_tokens(capsys, path):
    code, out, err = run_cli(capsys, "lens", "--model", str(path), "To be or not")
    assert code == 0, err
    model, tok = load_model(path, fast=False)
    ids = tok.encode("To be or not")
    top, prob = lens_table(model, np.array(ids))
    rows = out.splitlines()[1:]
    assert len(rows) == model.config.n_layers + 1
    last = rows[-1]
    assert last.split()[0] == str(model.config.n_layers)
    assert f"{float(prob[-1, -1]):4.2f}" in last.split()[-1]


def test_heads_lists_the_top_copying_scores_in_order(capsys):
    code, out, err = run_cli(capsys, "lens", "--model", str(SHAKESPEARE), "--heads",
                             "--score", "copying", "--top", "3")
    assert code == 0, err
    model, _ = load_model(SHAKESPEARE, fast=False)
    scores = copying_scores(model)
    rows = [line.split() for line in out.splitlines()[1:]]
    assert len(rows) == 3
    assert [float(r[2]) for r in rows] == pytest.approx(sorted(scores.ravel())[::-1][:3], abs=1e-3)
    layer, head = int(rows[0][0]), int(rows[0][1])
    assert scores[layer, head] == pytest.approx(scores.max(), abs=1e-6)


def test_heads_by_prefix_matching_runs_on_repeated_random_tokens(capsys):
    code, out, err = run_cli(capsys, "lens", "--model", str(SHAKESPEARE), "--heads", "--top", "16")
    assert code == 0, err
    values = [float(line.split()[2]) for line in out.splitlines()[1:]]
    assert len(values) == 16 and values == sorted(values, reverse=True)
    assert all(0 <= v <= 1 for v in values)


@pytest.mark.parametrize("argv, message", [
    ([], "PROMPT is required"),
    (["--heads", "hello"], "give no PROMPT"),
    (["--top", "3", "hello"], "--top only applies with --heads"),
    (["--heads", "--top", "0"], "--top must be"),
    (["--heads", "--repeat", "65"], "at most 64"),
    (["--heads", "--score", "mean"], "invalid choice"),
    (["x " * 200], "at most 64"),
])
def test_bad_flags_are_clear_errors(capsys, argv, message):
    try:
        code = main(["lens", "--model", str(SHAKESPEARE), *argv])
    except SystemExit as exc:                                       # argparse's own refusals
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
