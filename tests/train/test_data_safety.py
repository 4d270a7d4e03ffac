"""Training and saving never destroy data: regression tests for each way a run used to lose it."""
import errno
import json
import shutil

import numpy as np
import pytest

from minillm.cli import main
from minillm import GPT
from minillm.train.checkpoint import find_checkpoint, read_manifest
from minillm.train.loop import LOG_NAME, TrainingDiverged, TrainSettings, train
from tests.train.test_loop import TEXT_IDS, tiny

QUIET = dict(progress=lambda line: None)
SETTINGS = TrainSettings(steps=12, batch=4, warmup=3, eval_every=3, checkpoint_every=3,
                         log_every=3, seed=5)


def corpus(tmp_path):
    data = tmp_path / "corpus.txt"
    data.write_text("the quick brown fox jumps over the lazy dog\n" * 200, encoding="utf-8")
    return data


TRAIN_ARGS = ["--vocab-size", "280", "--layers", "1", "--d-model", "16", "--heads", "2",
              "--context", "16", "--batch", "4", "--warmup", "2", "--eval-every", "5"]


def test_train_refuses_a_non_empty_out_folder(tmp_path, capsys):
    out = tmp_path / "model"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code = main(["train", "--data", str(corpus(tmp_path)), "--out", str(out), "--steps", "5",
                 *TRAIN_ARGS])
    assert code == 2 and "not empty" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_train_overwrite_never_deletes_a_user_file_in_checkpoint(tmp_path):
    out = tmp_path / "model"
    (out / "checkpoint").mkdir(parents=True)
    (out / "checkpoint" / "mine.txt").write_text("keep me")
    assert main(["train", "--data", str(corpus(tmp_path)), "--out", str(out), "--steps", "5",
                 "--overwrite", *TRAIN_ARGS]) == 2
    assert (out / "checkpoint" / "mine.txt").read_text() == "keep me"
    assert sorted(p.name for p in out.rglob("*")) == ["checkpoint", "mine.txt"]


def test_resume_with_no_checkpoint_fails_instead_of_restarting(tmp_path):
    with pytest.raises(ValueError, match="nothing to resume"):
        train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, resume=True, **QUIET)
    assert not (tmp_path / LOG_NAME).exists()


def full_run_and_one_stopped_at_step_9(tmp_path):
    """-> (the uninterrupted run's result, the folder of a run interrupted at step 9)."""
    full = train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path / "full", SETTINGS, **QUIET)
    run = tmp_path / "run"

    def stop_at_9(line):
        if line.split()[1].startswith("9/"):
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        train(tiny(), TEXT_IDS, TEXT_IDS, run, SETTINGS, progress=stop_at_9)
    return full, run


def test_resume_from_a_half_rotated_checkpoint_is_bit_exact(tmp_path):
    """A kill between 'rename checkpoint -> checkpoint.old' and 'rename .tmp -> checkpoint'."""
    full, run = full_run_and_one_stopped_at_step_9(tmp_path)
    (run / "checkpoint").rename(run / "checkpoint.old")         # the crash left only .old
    resumed = train(tiny(seed=3), TEXT_IDS, TEXT_IDS, run, SETTINGS, resume=True, **QUIET)
    for name, a in full.params.named().items():
        np.testing.assert_array_equal(resumed.params.named()[name], a, err_msg=name)


def test_resume_refuses_a_corrupt_checkpoint(tmp_path):
    train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, **QUIET)
    path = tmp_path / "checkpoint" / "model.safetensors"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="sha256"):
        train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, resume=True, **QUIET)


def test_resume_refuses_a_checkpoint_without_manifest(tmp_path):
    train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, **QUIET)
    (tmp_path / "checkpoint" / "manifest.json").unlink()
    with pytest.raises(ValueError, match="incomplete"):
        train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, resume=True, **QUIET)


def test_resume_log_line_without_step_is_a_clear_error(tmp_path):
    train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, **QUIET)
    with open(tmp_path / LOG_NAME, "a") as f:
        f.write('{"loss": 1.0}\n')
    with pytest.raises(ValueError, match=r"train_log.jsonl:\d+: not a training log record"):
        train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, resume=True, **QUIET)


def test_resume_refuses_a_log_that_disagrees_with_the_checkpoint(tmp_path):
    train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, **QUIET)
    (tmp_path / LOG_NAME).write_text(json.dumps({"step": 3}) + "\n")
    with pytest.raises(ValueError, match="disagree"):
        train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, resume=True, **QUIET)


def test_nan_loss_stops_training_and_keeps_the_last_checkpoint(tmp_path):
    settings = TrainSettings(steps=40, batch=4, warmup=1, lr=1e4, min_lr=1e3, eval_every=2,
                             checkpoint_every=1, log_every=1)
    with pytest.raises(TrainingDiverged, match="diverged"):
        train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, settings, **QUIET)
    if (tmp_path / "checkpoint").exists():
        model = GPT.from_pretrained(tmp_path / "checkpoint")
        assert all(np.isfinite(a).all() for a in model.params.named().values())


def test_cli_lr_1000_exits_non_zero_and_saves_no_model(tmp_path, capsys):
    out = tmp_path / "model"
    code = main(["train", "--data", str(corpus(tmp_path)), "--out", str(out), "--steps", "60",
                 "--lr", "1000", *TRAIN_ARGS])
    assert code == 2 and "diverged" in capsys.readouterr().err
    assert not (out / "model.safetensors").exists()


def test_best_validation_checkpoint_is_kept_beside_the_last(tmp_path):
    train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, **QUIET)
    best = read_manifest(tmp_path / "best")
    log = [json.loads(x) for x in (tmp_path / LOG_NAME).read_text().splitlines()]
    vals = {r["step"]: r["val_loss"] for r in log if "val_loss" in r}
    assert best["val_loss"] == min(vals.values()) and vals[best["step"]] == best["val_loss"]
    GPT.from_pretrained(tmp_path / "best")


def test_rising_validation_loss_is_warned(tmp_path):
    lines = []
    held_out = (TEXT_IDS[::-1] + 7) % 26            # a text the model gets worse at
    settings = TrainSettings(steps=60, batch=4, warmup=1, lr=2e-2, min_lr=2e-2, eval_every=5,
                             checkpoint_every=60, log_every=5)
    train(tiny(), TEXT_IDS, held_out, tmp_path, settings, progress=lines.append)
    assert any("has risen 3 evaluations in a row" in x for x in lines), lines


def test_train_prints_a_sample_and_the_generate_command(tmp_path, capsys):
    out = tmp_path / "model"
    assert main(["train", "--data", str(corpus(tmp_path)), "--out", str(out), "--steps", "5",
                 *TRAIN_ARGS]) == 0
    printed = capsys.readouterr().out
    assert "sample: " in printed
    assert f"python -m minillm generate --model {out} " in printed


def test_a_full_disk_during_save_keeps_the_previous_model(tmp_path, monkeypatch):
    model = tiny()
    model.save_pretrained(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    import minillm.io.atomic as atomic

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(atomic.os, "fsync", no_space)
    with pytest.raises(OSError):
        tiny(seed=1).save_pretrained(tmp_path)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before   # no temp file left
    GPT.from_pretrained(tmp_path)


def test_checkpoint_rotation_leaves_one_verified_checkpoint(tmp_path):
    train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, **QUIET)
    shutil.copytree(tmp_path / "checkpoint", tmp_path / "checkpoint.tmp")
    (tmp_path / "checkpoint.tmp" / "manifest.json").unlink()        # an interrupted new one
    folder, manifest = find_checkpoint(tmp_path)
    assert folder.name == "checkpoint" and manifest["step"] == SETTINGS.steps


def test_resume_after_a_kill_mid_log_line(tmp_path):
    """kill -9 while a log line was half written: that line is dropped, the run resumes."""
    full, run = full_run_and_one_stopped_at_step_9(tmp_path)
    with open(run / LOG_NAME, "a") as f:
        f.write('{"step": 9, "lo')
    resumed = train(tiny(seed=3), TEXT_IDS, TEXT_IDS, run, SETTINGS, resume=True, **QUIET)
    for name, a in full.params.named().items():
        np.testing.assert_array_equal(resumed.params.named()[name], a, err_msg=name)


def test_resume_hashes_each_checkpoint_file_once(tmp_path, monkeypatch):
    """Regression: ``train --resume`` hashed every checkpoint file four times (find_checkpoint
    verified each candidate, then the chosen one again; the command and resume each called it)."""
    import collections
    import minillm.train.manifest as manifest
    out = tmp_path / "model"
    args = ["train", "--data", str(corpus(tmp_path)), "--out", str(out), "--checkpoint-every", "2",
            *TRAIN_ARGS]
    import minillm.train.loop as loop
    def write_then_stop(model, out, name, fields, **kw):   # Ctrl-C after the step-4 checkpoint
        real_write(model, out, name, fields, **kw)
        if name == "checkpoint" and fields["step"] == 4:
            raise KeyboardInterrupt
    real_write = loop.write_checkpoint
    monkeypatch.setattr(loop, "write_checkpoint", write_then_stop)
    assert main([*args, "--steps", "6"]) == 130              # (Ctrl-C's exit status)
    monkeypatch.undo()
    hashed = collections.Counter()
    def sha256_file(path):
        hashed[path.relative_to(out).as_posix()] += 1
        return real(path)
    real = manifest.sha256_file
    monkeypatch.setattr(manifest, "sha256_file", sha256_file)
    assert main([*args, "--steps", "6", "--resume"]) == 0
    read = {name: n for name, n in hashed.items() if name.startswith("checkpoint/")}
    assert read == {f"checkpoint/{name}": 1 for name in
                    ("config.json", "model.safetensors", "optimizer.safetensors")}


def test_resume_reads_each_header_once_and_the_weights_into_the_model(tmp_path, monkeypatch):
    """Regression: resume parsed the optimiser file's header 3 times and the model file's twice,
    and built a second full set of weights (load_hf_checkpoint) to copy into the model."""
    import collections
    import minillm.io.checkpoints as checkpoints
    import minillm.io.hf.shards as shards
    import minillm.io.safetensors as st
    from minillm.train.optim import AdamW
    from minillm.train.resume import data_digest, resume
    full, run = full_run_and_one_stopped_at_step_9(tmp_path)
    read = collections.Counter()
    def counted(real):
        def read_header(f, size):
            read[size] += 1                      # (the two files' sizes differ)
            return real(f, size)
        return read_header
    for module in (st, shards):                  # (checkpoints reads the weights through shards)
        monkeypatch.setattr(module, "read_header", counted(module.read_header))
    monkeypatch.setattr(checkpoints, "empty_params", None)     # no second set of weights
    model = tiny(seed=3)
    opt = AdamW(model.params.named(), weight_decay=SETTINGS.weight_decay)
    folder, manifest = find_checkpoint(run)
    assert resume(model, opt, run, SETTINGS, data_digest(TEXT_IDS, TEXT_IDS),
                  (folder, manifest)) == (6, manifest["log_records"])
    assert sorted(read.values()) == [1, 1]
