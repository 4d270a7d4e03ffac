"""`minillm perplexity` as a subprocess: llama-perplexity's output, the library's number, and a
clear refusal of every bad input."""
import re

import pytest

from minillm import load_model, perplexity
from tests.cli.run_module import SHAKESPEARE, assert_clear_refusal, bad_inputs, run_module


@pytest.fixture(scope="module")
def play(tmp_path_factory):
    text = open(f"{SHAKESPEARE}/val_sample.txt", encoding="utf-8").read()[:8000]
    path = tmp_path_factory.mktemp("ppl") / "play.txt"
    path.write_text(text, encoding="utf-8")
    return path, text


def test_prints_the_running_estimate_and_the_final_one_as_llama_perplexity(play):
    path, text = play
    code, out, err = run_module("perplexity", "--model", SHAKESPEARE, "--ctx", "64",
                                "--batch", "4", path)
    assert code == 0, err
    running = re.findall(r"\[(\d+)\](\d+\.\d{4}),", out.splitlines()[0])
    final = re.fullmatch(r"Final estimate: PPL = (\d+\.\d{4}) \+/- (\d+\.\d{5})",
                         out.splitlines()[-1])
    model, tok = load_model(SHAKESPEARE)
    expected = perplexity(model, tok.encode_ordinary(text), 64)
    assert [int(k) for k, _ in running] == list(range(1, expected.chunks + 1))
    assert [float(v) for _, v in running] == pytest.approx(expected.running, abs=6e-5)
    assert final and float(final[1]) == pytest.approx(expected.ppl, abs=6e-5)
    assert float(final[2]) == pytest.approx(expected.error, abs=6e-6)
    assert f"chunk {expected.chunks}/{expected.chunks}" in err          # the progress, on stderr


def test_stride_gives_the_sliding_window_number(play):
    path, text = play
    code, out, err = run_module("perplexity", "--model", SHAKESPEARE, "--ctx", "64",
                                "--stride", "32", path)
    model, tok = load_model(SHAKESPEARE)
    expected = perplexity(model, tok.encode_ordinary(text), 64, stride=32)
    assert code == 0, err
    assert out.splitlines()[-1].startswith(f"Final estimate: PPL = {expected.ppl:.4f} +/- ")


def test_bad_inputs_are_refused_naming_the_flag(play, tmp_path):
    path, _ = play
    files = bad_inputs(tmp_path)
    (tmp_path / "short.txt").write_text("To be or not to be.")
    m = ("--model", SHAKESPEARE)
    cases = [
        (("perplexity", *m, files["missing.txt"]), ["FILE", "no such file"]),
        (("perplexity", *m, files["folder"]), ["FILE", "folder"]),
        (("perplexity", *m, files["latin1.txt"]), ["FILE", "not UTF-8"]),
        (("perplexity", *m, files["empty.txt"]), ["FILE", "empty"]),
        (("perplexity", *m, files["blank.txt"]), ["FILE", "empty"]),
        (("perplexity", *m, tmp_path / "short.txt"), ["FILE", "at least"]),
        (("perplexity", *m, "--ctx", "1", path), ["--ctx", "at least 3"]),
        (("perplexity", *m, "--ctx", "2", "--stride", "1", "--batch", "0", path), ["--batch"]),
        (("perplexity", *m, "--ctx", "4096", path), ["--ctx", "context window is 128"]),
        (("perplexity", *m, "--ctx", "64", "--stride", "65", path), ["--stride", "64"]),
        (("perplexity", *m, "--stride", "0", path), ["--stride"]),
        (("perplexity", *m, "--ctx", "x", path), ["--ctx", "invalid int"]),
        (("perplexity", path), ["--model"]),
        (("perplexity", "--model", "no/such/model", path), ["--model", "no/such/model"]),
    ]
    for argv, names in cases:
        code, out, err = run_module(*argv)
        assert_clear_refusal(code, err, *names)
