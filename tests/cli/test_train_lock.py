"""``train`` takes the run lock ``finetune`` takes (io/folder_lock.py): one run at a time writes
into an OUT, and a second one is refused at once, naming the first's pid, before it reads or
writes anything there."""
import os
import subprocess
import sys
import time

from minillm.io.folder_lock import RUN_LOCK, run_lock
from tests.cli.helpers import run_cli
from tests.cli.subprocess_run import ROOT

TEXT = "the quick brown fox jumps over the lazy dog. " * 400


def train_argv(data, out, *extra):
    return ["train", "--data", str(data), "--out", str(out), "--vocab-size", "260",
            "--layers", "1", "--d-model", "16", "--heads", "2", "--context", "16", "--batch", "2",
            "--warmup", "1", *extra]


def test_a_second_train_into_a_locked_out_is_refused_at_once(tmp_path, capsys):
    data = tmp_path / "corpus.txt"
    data.write_text(TEXT)
    out = tmp_path / "out"
    with run_lock(out):                          # (another run, as far as the lock can tell)
        code, _, err = run_cli(capsys, *train_argv(data, out, "--steps", "2"))
        assert code == 2 and "another minillm run" in err and f"pid {os.getpid()}" in err
        assert sorted(p.name for p in out.iterdir()) == [RUN_LOCK]      # nothing written
    assert not out.exists()                      # (made for the lock, empty: removed)


def test_a_stale_lock_file_does_not_block_train_and_is_removed(tmp_path, capsys):
    data = tmp_path / "corpus.txt"
    data.write_text(TEXT)
    out = tmp_path / "out"
    out.mkdir()
    (out / RUN_LOCK).write_text("12345\n")       # what kill -9 leaves: a file nobody locks
    code, _, err = run_cli(capsys, *train_argv(data, out, "--steps", "2"))
    assert code == 0, err
    assert (out / "model.safetensors").is_file() and not (out / RUN_LOCK).exists()


def test_two_train_processes_into_one_out_the_second_refused_at_once(tmp_path):
    data = tmp_path / "corpus.txt"
    data.write_text(TEXT)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    argv = [sys.executable, "-m", "minillm", *train_argv(data, out, "--steps", "100000")]
    first = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (out / "train_log.jsonl").exists():     # the first run is stepping
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        t = time.monotonic()     # --overwrite: what would delete the first run's files
        second = subprocess.run([*argv, "--overwrite"], cwd=ROOT, env=env, capture_output=True, text=True,
                                timeout=60)
        assert time.monotonic() - t < 30                  # at once: no waiting for the first
        assert second.returncode == 2 and "Traceback" not in second.stderr
        assert f"another minillm run (pid {first.pid})" in second.stderr
    finally:
        first.kill()
        first.wait()
