"""``train`` validates its pattern, schedule and data size before it writes anything into OUT,
so a refused run leaves nothing behind and the next run into the same folder is not refused."""
import pytest

from minillm.cli import main
from minillm.tokenizer import Tokenizer
from tests.train.test_data_safety import TRAIN_ARGS, corpus


def train(tmp_path, *extra, data=None):
    out = tmp_path / "model"
    return out, main(["train", "--data", str(data or corpus(tmp_path)), "--out", str(out),
                      "--steps", "5", *TRAIN_ARGS, *extra])


@pytest.mark.parametrize("pattern, message", [
    ("", "a pattern must be a non-empty string"),
    ("(a|aa)+$", "catastrophic backtracking"),
    ("\\w*", "matches the empty string"),
    ("[a-", "is not a valid regex"),
])
def test_train_refuses_a_pattern_the_loader_would_refuse(tmp_path, capsys, pattern, message):
    out, code = train(tmp_path, "--pattern", pattern)
    assert code == 2 and message in capsys.readouterr().err
    assert not out.exists()


def test_what_train_accepts_the_loader_reads_back(tmp_path):
    out, code = train(tmp_path, "--pattern", "\\p{N}", "--pattern", "gpt2")
    assert code == 0 and Tokenizer.load(out).encode("fox 12") == Tokenizer.load(out).encode("fox 12")


def test_warmup_longer_than_steps_is_refused_naming_both(tmp_path, capsys):
    out, code = train(tmp_path, "--warmup", "100")
    err = capsys.readouterr().err
    assert code == 2 and "--warmup 100 is longer than --steps 5" in err and "never reach --lr" in err
    assert not out.exists()


def test_a_failed_early_train_leaves_nothing_and_the_next_run_is_not_refused(tmp_path, capsys):
    short = tmp_path / "short.txt"
    short.write_text("the quick brown fox\n" * 30)          # splits, but too few tokens
    out, code = train(tmp_path, data=short)
    err = capsys.readouterr().err
    assert code == 2 and "fewer than --context 16 + 1" in err
    assert not out.exists() or list(out.iterdir()) == []        # no tokenizer.json behind
    out, code = train(tmp_path)                                 # same OUT, enough text
    assert code == 0 and (out / "model.safetensors").is_file()
