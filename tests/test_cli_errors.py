"""Every error the CLI can meet is one line naming the file or argument, exit status 2; --debug
adds the traceback. Regression tests for the tracebacks found by fuzzing the commands."""
import errno
import json

import pytest

from minillm.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, err


def test_beams_100000_is_refused_before_allocating(capsys):
    code, err = run(capsys, "generate", "--beams", "100000", "hi")
    assert code == 2 and "--beams must be at most 1,000" in err and "Traceback" not in err


def test_max_new_tokens_10_12_with_sliding_window_is_refused(capsys):
    code, err = run(capsys, "generate", "--max-new-tokens", str(10**12), "--sliding-window", "hi")
    assert code == 2 and "--max-new-tokens must be at most" in err


def test_a_file_where_a_folder_should_be_is_one_line(tmp_path, capsys):
    (tmp_path / "corpus.txt").write_text("abc\n" * 50)
    (tmp_path / "afile").write_text("")
    code, err = run(capsys, "train", "--data", str(tmp_path / "corpus.txt"),
                    "--out", str(tmp_path / "afile" / "model"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "afile" in err


def test_debug_shows_the_traceback(tmp_path, capsys):
    code, err = run(capsys, "--debug", "train", "--data", str(tmp_path / "none.txt"),
                    "--out", str(tmp_path / "m"))
    assert code == 2 and "Traceback" in err
    code, err = run(capsys, "train", "--data", str(tmp_path / "none.txt"), "--out",
                    str(tmp_path / "m"), "--debug")
    assert code == 2 and "Traceback" in err


def test_full_disk_is_one_line(tmp_path, capsys, monkeypatch):
    import minillm.cli.tokenize as tokenize_cmd

    def full(args):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x"))
    monkeypatch.setattr(tokenize_cmd, "run", full)
    code, err = run(capsys, "tokenize", "hi")
    assert code == 2 and "No space left on device" in err and "free some space" in err


@pytest.mark.parametrize("exc", [MemoryError("big"), RecursionError("deep")])
def test_memory_and_recursion_errors_are_one_line(capsys, monkeypatch, exc):
    import minillm.cli.tokenize as tokenize_cmd

    def fail(args):
        raise exc
    monkeypatch.setattr(tokenize_cmd, "run", fail)
    code, err = run(capsys, "tokenize", "hi")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_model_with_bad_config_is_one_line_naming_the_file(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama",
                                                      "num_attention_heads": 0}))
    (tmp_path / "model.safetensors").write_bytes(b"")
    code, err = run(capsys, "generate", "--model", str(tmp_path), "hi")
    assert code == 2 and "config.json" in err and "Traceback" not in err


def test_train_sizes_beyond_memory_are_refused_first(tmp_path, capsys):
    (tmp_path / "corpus.txt").write_text("abc\n" * 50)
    code, err = run(capsys, "train", "--data", str(tmp_path / "corpus.txt"), "--out",
                    str(tmp_path / "m"), "--layers", "100000", "--d-model", "4096", "--heads", "32")
    assert code == 2 and "training needs" in err and not (tmp_path / "m").exists()


# ---- messages that say what to do ---------------------------------------------------------------
@pytest.mark.parametrize("command", [["generate", "hi"], ["train", "--data", "x", "--out", "y"]])
def test_seed_minus_1_says_seeds_are_integers_from_0(capsys, command):
    with pytest.raises(SystemExit):
        main([*command, "--seed", "-1"])
    assert "seeds are integers >= 0 (e.g. --seed 0), got '-1'" in capsys.readouterr().err


def test_a_tokenizer_whose_vocabulary_does_not_fit_the_model_says_so(capsys):
    code, err = run(capsys, "generate", "--model", "weights/shakespeare", "--tokenizer", "gpt2",
                    "hi")
    assert code == 2 and "--tokenizer gpt2 has a vocabulary of 50,257 tokens, which does not " \
                         "fit the model" in err
    assert "leave out --tokenizer to use the model's own" in err and "stop_ids" not in err


@pytest.mark.parametrize("flags", [["--top-p", "7"], ["--beams", "0"], ["-t", "-1"],
                                   ["--max-new-tokens", "100000"]])
def test_generate_checks_its_flags_before_printing_the_prompt(capsys, flags):
    code = main(["generate", *flags, "the prompt"])
    out, err = capsys.readouterr()
    assert code == 2 and "the prompt" not in out and len(err.strip().splitlines()) == 2
    assert err.strip().splitlines()[-1].startswith("minillm generate: error: ")
