"""Ctrl-C, as a user presses it: SIGINT sent to a real ``python -m minillm`` subprocess once its
output shows it is training or generating (bounded waits). ``generate`` ends the partial text's
line, says "interrupted" and prints its timings, exit 130; ``train`` and ``finetune`` write a
checkpoint on the first Ctrl-C, exit 130, and ``--resume`` then ends with exactly the model and
losses of an uninterrupted run; a second Ctrl-C stops at once (FirstInterrupt)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minillm.cli import main
from minillm.cli.interrupt import FirstInterrupt

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--vocab-size", "300", "--layers", "1", "--d-model", "16", "--heads", "2", "--context",
        "16", "--batch", "2", "--warmup", "5", "--log-every", "3", "--eval-every", "100",
        "--checkpoint-every", "100000"]


def corpus(path: Path) -> Path:
    words = "the sea is wide and the king is old and the moon is bright over the hill".split()
    lines = [" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(12)) for i in range(800)]
    path.write_text("\n".join(lines))
    return path


def interrupt_when(argv, ready: str, timeout: float = 60.0):
    """Run ``python -m minillm *argv``; SIGINT once stdout holds ``ready`` -> (rc, out, err)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "minillm", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    os.set_blocking(proc.stdout.fileno(), False)
    out, deadline = b"", time.monotonic() + timeout
    try:
        while ready.encode() not in out:
            assert proc.poll() is None, f"ended before {ready!r}: {out[-300:]!r}"
            assert time.monotonic() < deadline, f"no {ready!r} within {timeout} s"
            out += proc.stdout.read() or b""
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, (out + rest).decode(), err.decode()


def test_ctrl_c_in_train_checkpoints_and_resume_equals_an_uninterrupted_run(tmp_path, capsys):
    data = corpus(tmp_path / "corpus.txt")
    argv = ["train", "--data", str(data), "--steps", "3000", *TINY]
    code, out, err = interrupt_when([*argv, "--out", str(tmp_path / "cut")], "step      3/")
    assert code == 130, err
    assert "interrupted after step" in err and "--resume" in err
    stopped = int(err.split("interrupted after step ")[1].split()[0])
    assert 3 <= stopped < 3000
    manifest = json.loads((tmp_path / "cut" / "checkpoint" / "manifest.json").read_text())
    assert manifest["step"] == stopped
    # --resume, without --overwrite, finishes the run; it equals the uninterrupted one
    assert main([*argv, "--out", str(tmp_path / "cut"), "--resume"]) == 0
    assert main([*argv, "--out", str(tmp_path / "whole")]) == 0
    capsys.readouterr()
    for name in ("model.safetensors",):
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()

    def losses(run):
        return [(r["step"], r.get("loss"), r.get("val_loss")) for r in map(
            json.loads, (tmp_path / run / "train_log.jsonl").read_text().splitlines())]
    assert losses("cut") == losses("whole")       # the mean across the cut too (pending losses)


def test_ctrl_c_before_the_first_step_still_leaves_a_run_to_resume(tmp_path, capsys):
    """SIGINT as the progress starts: OUT has a checkpoint, so --resume works without
    --overwrite (the run's first line is the tokenizer's; the handler is already in place)."""
    data = corpus(tmp_path / "corpus.txt")
    argv = ["train", "--data", str(data), "--steps", "3000", *TINY, "--out", str(tmp_path / "o")]
    code, _, err = interrupt_when(argv, "tokenizer:")
    assert code == 130 and "interrupted after step" in err, err
    assert (tmp_path / "o" / "checkpoint" / "manifest.json").is_file()
    # --resume reads that checkpoint (here refused for a changed --lr: it was found and verified)
    assert main([*argv, "--lr", "1e-3", "--resume"]) == 2
    assert "other settings" in capsys.readouterr().err


def test_a_run_stopped_before_its_first_step_resumes_to_the_uninterrupted_weights(tmp_path):
    import numpy as np
    from minillm import GPT, ModelConfig
    from minillm.train.loop import TrainingInterrupted, TrainSettings, train
    config = ModelConfig(vocab_size=50, n_ctx=8, d_model=16, n_heads=2, n_layers=1)
    rng = np.random.default_rng(0)
    ids, val = rng.integers(0, 50, 400), rng.integers(0, 50, 100)
    s = TrainSettings(steps=12, batch=2, warmup=1, eval_every=6, log_every=5,
                      checkpoint_every=100)
    quiet = dict(progress=lambda line: None)
    whole = train(GPT(config, seed=0), ids, val, tmp_path / "a", s, **quiet)
    with pytest.raises(TrainingInterrupted) as cut:
        train(GPT(config, seed=0), ids, val, tmp_path / "b", s, stop=lambda: True, **quiet)
    assert cut.value.step == 0
    resumed = train(GPT(config, seed=0), ids, val, tmp_path / "b", s, resume=True, **quiet)
    for name, w in whole.params.named().items():
        assert (resumed.params.named()[name] == w).all(), name


@pytest.mark.skipif(not (ROOT / "weights" / "shakespeare").is_dir(), reason="needs the clone's "
                    "weights/shakespeare")
def test_ctrl_c_in_generate_ends_the_line_says_interrupted_and_prints_the_timings():
    code, out, err = interrupt_when(["generate", "--seed", "0", "--max-new-tokens", "100000",
                                     "--sliding-window", "ROMEO:"], "ROMEO:", timeout=60)
    assert code == 130, err
    assert out.startswith("ROMEO:") and out.endswith("\n")
    assert "interrupted after" in err and "tokens/s" in err and "Traceback" not in err


def test_a_second_ctrl_c_stops_at_once():
    with FirstInterrupt() as stop:
        assert not stop()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)                          # (the handler runs between bytecodes)
        assert stop()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_stopped_finetune_checkpoints_between_steps_and_resumes_exactly(tmp_path):
    """The flag the CLI's Ctrl-C sets, read by the fine-tuning loop before step 5 (no regular
    checkpoint there: every 4 steps): a checkpoint of 4... then of the 5 steps done."""
    from minillm.train.loop import TrainingInterrupted
    from minillm.train.sft import finetune
    from tests.train.test_sft import CONVERSATIONS, chat_model, chat_tokenizer
    tok = chat_tokenizer()
    kwargs = dict(rank=2, steps=8, lr=1e-2, batch_size=3, checkpoint_every=4)
    straight = finetune(chat_model(), tok, CONVERSATIONS, out=tmp_path / "a", **kwargs)
    done = []
    with pytest.raises(TrainingInterrupted) as cut:
        finetune(chat_model(), tok, CONVERSATIONS, out=tmp_path / "b",
                 on_step=lambda r: done.append(r["step"]), stop=lambda: len(done) == 5, **kwargs)
    assert cut.value.step == 5 and cut.value.total == 8
    manifest = json.loads((tmp_path / "b" / "checkpoint" / "manifest.json").read_text())
    assert manifest["step"] == 5
    resumed = finetune(chat_model(), tok, CONVERSATIONS, out=tmp_path / "b", resume=True, **kwargs)
    assert resumed.losses == straight.losses[5:]
    for k, v in straight.lora.named().items():
        assert (resumed.lora.named()[k] == v).all(), k


def test_ctrl_c_in_finetune_checkpoints_and_resume_needs_no_overwrite(tmp_path, capsys):
    from tests.train.test_sft import CONVERSATIONS, chat_model, chat_tokenizer, write_jsonl
    chat_model().save_pretrained(tmp_path / "base")
    chat_tokenizer().save(tmp_path / "base" / "tokenizer.json")
    write_jsonl(tmp_path / "chat.jsonl", CONVERSATIONS * 2)
    argv = ["finetune", "--model", str(tmp_path / "base"), "--data", str(tmp_path / "chat.jsonl"),
            "--out", str(tmp_path / "out"), "--lora", "2", "--batch", "2", "--steps", "5000",
            "--checkpoint-every", "100000"]
    code, _, err = interrupt_when(argv, "step 100/")
    assert code == 130, err
    stopped = int(err.split("interrupted after step ")[1].split()[0])
    manifest = json.loads((tmp_path / "out" / "checkpoint" / "manifest.json").read_text())
    assert manifest["step"] == stopped >= 100
    assert main([*argv, "--lr", "2e-3", "--resume"]) == 2      # found and verified: other --lr
    assert "other settings" in capsys.readouterr().err
