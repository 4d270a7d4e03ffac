"""The fine-tuning API refuses bad input with a ValueError saying what was wrong, before any
step: conversations that are not a list of message lists, a warmup longer than the run, a seed or
max_tokens of the wrong kind, an evaluation batch size that is not positive."""
import pytest

from minillm.train.sft import evaluate_conversations, finetune
from tests.train.test_sft import CONVERSATIONS, chat_model, chat_tokenizer


@pytest.mark.parametrize("conversations, message", [
    ([], "expected a non-empty list of conversations"),
    ("chat.jsonl", r"read_conversations\(path\) reads a JSONL file"),
    ([{"messages": CONVERSATIONS[0]}], "conversation 1: 'messages' must be a non-empty list"),
    ([CONVERSATIONS[0], [{"role": "bot", "content": "hi"}]], "conversation 2: message 0 has role 'bot'"),
], ids=["empty", "a path", "jsonl records", "a bad role"])
def test_conversations_that_are_not_lists_of_messages_are_refused(conversations, message):
    with pytest.raises(ValueError, match=message):
        finetune(chat_model(), chat_tokenizer(), conversations, steps=1)


@pytest.mark.parametrize("more, message", [
    ({"warmup": 5, "steps": 3}, "warmup 5 is longer than the run's 3 steps"),
    ({"warmup": 3, "epochs": 1, "batch_size": 2}, "warmup 3 is longer than the run's 2 steps"),
    ({"seed": -1}, "seed must be an integer >= 0"),
    ({"max_tokens": 2.5}, "max_tokens must be a positive integer or None"),
    ({"lr": True}, "need 0 < min_lr ≤ lr"),
], ids=["warmup > steps", "warmup > epoch", "seed", "max_tokens", "a bool lr"])
def test_settings_that_cannot_train_as_asked_are_refused(more, message):
    with pytest.raises(ValueError, match=message):
        finetune(chat_model(), chat_tokenizer(), CONVERSATIONS, **{"steps": None, **more})


@pytest.mark.parametrize("batch_size", [0, -1, 1.5])
def test_evaluation_refuses_a_batch_size_that_is_not_positive(batch_size):
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        evaluate_conversations(chat_model(), chat_tokenizer(), CONVERSATIONS, batch_size=batch_size)


def test_evaluation_refuses_no_conversations():
    with pytest.raises(ValueError, match="non-empty list of held-out conversations"):
        evaluate_conversations(chat_model(), chat_tokenizer(), [])


def test_the_cli_refuses_targets_with_full(tmp_path, capsys):
    """--targets chooses LoRA's projections: with --full it would be ignored, so it is refused
    (before the model is read: the model path need not exist)."""
    from minillm.cli import main
    argv = ["finetune", "--model", str(tmp_path / "none"), "--data", str(tmp_path / "c.jsonl"),
            "--out", str(tmp_path / "out"), "--full", "--targets", "q,v"]
    assert main(argv) == 2
    assert "as is --targets; --full trains" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["finetune", "train"])
def test_the_cli_refuses_resume_with_overwrite(tmp_path, capsys, command):
    """--resume continues the run in --out, --overwrite replaces it: asked for both, neither is
    guessed (nothing is read or written)."""
    from minillm.cli import main
    (tmp_path / "c.jsonl").write_text('{"messages": [{"role": "user", "content": "hi"}]}\n' * 2000)
    source = ["--model", str(tmp_path / "none")] if command == "finetune" else []
    argv = [command, *source, "--data", str(tmp_path / "c.jsonl"), "--out", str(tmp_path / "out"),
            "--resume", "--overwrite"]
    assert main(argv) == 2
    assert "--resume continues the run in --out and --overwrite replaces it" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
