"""Data safety under the worst interruptions: ``kill -9`` while a checkpoint or a model is being
written, and a disk that fills up at a random byte. Whatever the moment, the previous model or
checkpoint stays loadable, and resuming gives the uninterrupted run's parameters bit for bit.
The whole commands — ``python -m minillm export``, ``save_pretrained``, ``python -m minillm
train`` with and without ``--resume`` — are killed at random moments too (the last section):
their target is then the old files or the new ones, compared by digest."""
import dataclasses
import errno
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from minillm import GPT
from minillm.train.checkpoint import find_checkpoint
from minillm.train.loop import TrainSettings, train
from tests.conftest import REPO
from tests.fuzz.profile import KILL_POINTS, KILLS
from tests.train.test_loop import TEXT_IDS, tiny

SETTINGS = TrainSettings(steps=30, batch=2, warmup=5, eval_every=10, checkpoint_every=1,
                         log_every=1, seed=3)
TRAIN_SCRIPT = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
from tests.fuzz.test_kill_and_full_disk import SETTINGS
from tests.train.test_loop import TEXT_IDS, tiny
from minillm.train.loop import train
train(tiny(), TEXT_IDS, TEXT_IDS, sys.argv[1], SETTINGS, progress=lambda line: print(line, flush=True))
"""
SAVE_SCRIPT = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
from tests.train.test_loop import tiny
models = [tiny(seed=1), tiny(seed=2)]
i = 0
while True:
    models[i % 2].save_pretrained(sys.argv[1])
    i += 1
    if i == 1:
        print("saved once", flush=True)
"""
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


def start(script, folder):
    return subprocess.Popen([sys.executable, "-c", script, str(folder)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=ENV, text=True)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    return train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path_factory.mktemp("full"), SETTINGS,
                 progress=lambda line: None)


@pytest.mark.parametrize("kill", range(KILLS))
def test_kill_9_during_checkpointing_then_resume_is_bit_exact(tmp_path, uninterrupted, kill):
    proc = start(TRAIN_SCRIPT, tmp_path)
    for _ in range(random.Random(kill).randint(2, 28)):   # kill after a random number of steps
        if not proc.stdout.readline():
            break
    time.sleep(random.Random(kill).random() * 0.02)         # … at a random moment of the next
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    folder, manifest = find_checkpoint(tmp_path)            # there is always one that verifies
    resumed = train(tiny(seed=7), TEXT_IDS, TEXT_IDS, tmp_path, SETTINGS, resume=True,
                    progress=lambda line: None)
    for name, a in uninterrupted.params.named().items():
        np.testing.assert_array_equal(resumed.params.named()[name], a, err_msg=name)


@pytest.mark.parametrize("kill", range(KILLS))
def test_kill_9_during_save_keeps_a_complete_model(tmp_path, kill):
    proc = start(SAVE_SCRIPT, tmp_path)
    # subtle: wait for one whole save, not a fixed time. On a loaded machine the first save
    # (two files, each fsynced, and the folder) can take longer than any sleep chosen here, and
    # a kill before it leaves no model at all: the test then failed now and then (1 in ~400).
    assert proc.stdout.readline().strip() == "saved once"
    time.sleep(random.Random(kill).random() * 0.3)          # … then a random moment of the next
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    loaded = GPT.from_pretrained(tmp_path).params.named()
    candidates = [tiny(seed=1).params.named(), tiny(seed=2).params.named()]
    assert any(all(np.array_equal(loaded[k], c[k]) for k in c) for c in candidates)


class DiskFull:
    """os.fdopen replacement whose files raise ENOSPC once ``budget`` bytes have been written."""

    def __init__(self, budget):
        self.budget, self.real = budget, os.fdopen

    def __call__(self, fd, *args, **kwargs):
        f, outer = self.real(fd, *args, **kwargs), self

        class Limited:
            def __getattr__(self, name):
                return getattr(f, name)

            def __enter__(self):
                f.__enter__()
                return self

            def __exit__(self, *exc):
                return f.__exit__(*exc)

            def write(self, data):
                outer.budget -= len(data)
                if outer.budget < 0:
                    raise OSError(errno.ENOSPC, "No space left on device")
                return f.write(data)
        return Limited()


@pytest.mark.parametrize("case", range(KILLS))
def test_full_disk_during_a_checkpoint_keeps_the_previous_one(tmp_path, monkeypatch, case):
    settings = TrainSettings(steps=6, batch=2, warmup=1, eval_every=3, checkpoint_every=3,
                             log_every=1, seed=3)
    def stop_after_3(line):
        if line.split()[1].startswith("4/"):
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):   # (the step-3 checkpoint comes after its log line)
        train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, settings, progress=stop_after_3)
    import minillm.io.atomic as atomic
    monkeypatch.setattr(atomic.os, "fdopen", DiskFull(random.Random(case).randint(0, 60_000)))
    try:
        train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, TrainSettings(**settings.__dict__),
              resume=True, progress=lambda line: None)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    monkeypatch.undo()
    folder, manifest = find_checkpoint(tmp_path)
    assert manifest["step"] in (3, 6)
    GPT.from_pretrained(folder)



@pytest.mark.parametrize("case", range(KILLS))
def test_full_disk_during_export_or_save_keeps_the_old_files_and_no_litter(tmp_path, monkeypatch,
                                                                           case):
    from minillm.tokenizer import Tokenizer
    import minillm.io.atomic as atomic
    tok = Tokenizer.train("abcdefghijklmnopqrstuvwxyz " * 20, vocab_size=270)
    config = dataclasses.replace(tiny().config, vocab_size=tok.vocab_size)
    old, new = GPT(config, seed=1), GPT(config, seed=2)    # 128 KB as GGUF, 89 KB of weights
    old_gguf = old.save_gguf(tmp_path / "m.gguf", tok).read_bytes()
    old.save_pretrained(tmp_path / "model")
    old_files = {p.name: p.read_bytes() for p in (tmp_path / "model").iterdir()}
    for write in (lambda: new.save_gguf(tmp_path / "m.gguf", tok),
                  lambda: new.save_pretrained(tmp_path / "model")):
        monkeypatch.setattr(atomic.os, "fdopen", DiskFull(random.Random(case).randint(0, 89_000)))
        with pytest.raises(OSError) as exc:
            write()
        monkeypatch.undo()
        assert exc.value.errno == errno.ENOSPC
    assert (tmp_path / "m.gguf").read_bytes() == old_gguf
    assert {p.name: p.read_bytes() for p in (tmp_path / "model").iterdir()} == old_files
    assert sorted(os.listdir(tmp_path)) == ["m.gguf", "model"]


# ---- kill -9 at random moments of whole commands: the target is the old files or the new ones ---
# Each operation runs in a child process killed at KILL_POINTS seeded random moments: half drawn
# uniformly over the whole run, half inside the write itself (from the moment its first temporary
# file appears). Afterwards the target must load and its digests must be the known old or the
# known new ones; a killed training run must then resume (or be whole) to the uninterrupted result.
CORPUS = "the quick brown fox jumps over the lazy dog\n" * 200
TINY_TRAIN = ["--vocab-size", "280", "--layers", "1", "--d-model", "16", "--heads", "2",
              "--context", "16", "--batch", "4", "--warmup", "2", "--steps", "6",
              "--eval-every", "2", "--checkpoint-every", "2", "--log-every", "1"]
MODEL_FILES = ("config.json", "model.safetensors")


def digests(folder, names=MODEL_FILES):
    """{name: sha256} of the files of ``folder`` that exist."""
    import hashlib
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in names
            if (folder / n).is_file()}


def file_digest(path):
    return digests(path.parent, (path.name,)).get(path.name)


def run_and_kill(argv, rng, duration, watch=None, write_time=0.0):
    """Start ``argv``; kill it with SIGKILL at a random moment (uniform over ``duration``, or when
    ``watch`` is given, within ``write_time`` of a file named ``watch`` appearing (a
    (folder, prefix) pair). -> whether it was still running when killed."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
                            cwd=REPO)
    if watch is None:
        time.sleep(rng.uniform(0, duration))
    else:
        folder, prefix = watch
        while proc.poll() is None and not any(n.startswith(prefix) for n in os.listdir(folder)):
            time.sleep(0.0005)
        time.sleep(rng.uniform(0, write_time))
    alive = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return alive


def timed(argv, watch=None):
    """Run ``argv`` to the end -> (seconds, seconds from ``watch``'s file appearing to the end)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV,
                            cwd=REPO)
    seen = None
    while proc.poll() is None:
        if watch and seen is None and any(n.startswith(watch[1]) for n in os.listdir(watch[0])):
            seen = time.perf_counter()
        time.sleep(0.0005)
    end = time.perf_counter()
    assert proc.returncode == 0, proc.stderr.read()
    return end - t0, end - (seen or t0)


def kill_many(argv, check, watch=None, prepare=lambda: None):
    """KILL_POINTS kills of ``argv`` (after ``prepare()`` each time), ``check()`` after each."""
    prepare()
    duration, write_time = timed(argv, watch)
    landed = 0
    for k in range(KILL_POINTS):
        prepare()
        rng = random.Random(k)
        landed += run_and_kill(argv, rng, duration, watch if k % 2 else None, 1.2 * write_time)
        check()
    return landed


MINILLM = [sys.executable, "-m", "minillm"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Two model folders of different shapes (with a tokenizer) and the GGUF of the first."""
    from minillm.tokenizer import Tokenizer
    root = tmp_path_factory.mktemp("models")
    tok = Tokenizer.train(CORPUS, vocab_size=280)
    for name, width in (("old", 32), ("new", 64)):
        GPT(dataclasses.replace(tiny().config, vocab_size=tok.vocab_size, d_model=width,
                                n_ctx=64), seed=width).save_pretrained(root / name)
        tok.save(root / name / "tokenizer.json")
    return root


def test_kill_9_during_export_leaves_the_old_gguf_or_the_new(models, tmp_path):
    out = tmp_path / "m.gguf"
    from minillm.cli import main
    from minillm.loading import load_model
    argv = [*MINILLM, "export", str(models / "new"), "--gguf", str(out), "--overwrite"]
    assert main(argv[3:-2] + [str(tmp_path / "new.gguf")]) == 0
    new = file_digest(tmp_path / "new.gguf")
    assert main(["export", str(models / "old"), "--gguf", str(out)]) == 0
    old = file_digest(out)
    outcomes = []
    def check():
        outcomes.append(file_digest(out))
        assert outcomes[-1] in (old, new)
        load_model(out)
    def restore_old():
        if file_digest(out) != old:
            assert main(["export", str(models / "old"), "--gguf", str(out), "--overwrite"]) == 0
    landed = kill_many(argv, check, watch=(tmp_path, f".{out.name}.tmp-"), prepare=restore_old)
    assert main(argv[3:]) == 0                                   # the next export cleans up
    assert sorted(os.listdir(tmp_path)) == ["m.gguf", "new.gguf"] and file_digest(out) == new
    print(f"export: {KILL_POINTS} kills, {landed} mid-run, outcomes old/new "
          f"{outcomes.count(old)}/{outcomes.count(new)}")


SAVE = "import sys; from minillm import GPT; GPT.from_pretrained(sys.argv[1]).save_pretrained(sys.argv[2])"


def test_kill_9_during_save_pretrained_leaves_the_old_model_or_the_new(models, tmp_path):
    out = tmp_path / "model"
    argv = [sys.executable, "-c", SAVE, str(models / "new"), str(out)]
    old, new = digests(models / "old"), digests(models / "new")
    outcomes = []
    def check():
        GPT.from_pretrained(out)                   # (finishes a commit a kill interrupted)
        outcomes.append(digests(out))
        assert outcomes[-1] in (old, new)
    def restore_old():
        if digests(out) != old:
            GPT.from_pretrained(models / "old").save_pretrained(out)
    landed = kill_many(argv, check, watch=(out, ".model.safetensors.tmp-"), prepare=restore_old)
    GPT.from_pretrained(models / "new").save_pretrained(out)     # the next save cleans up
    assert sorted(os.listdir(out)) == list(MODEL_FILES) and digests(out) == new
    print(f"save_pretrained: {KILL_POINTS} kills, {landed} mid-run, outcomes old/new "
          f"{outcomes.count(old)}/{outcomes.count(new)}")


@pytest.mark.parametrize("resume", [False, True], ids=["train", "train --resume"])
def test_kill_9_during_train_leaves_no_model_or_the_finished_one(tmp_path, resume):
    """The old files are no model; the new ones the uninterrupted run's. After any kill, what is
    in OUT loads, and resuming (when a checkpoint verifies) ends with the uninterrupted model."""
    import shutil
    from minillm.cli import main
    from minillm.train.checkpoint import find_checkpoint
    data = tmp_path / "corpus.txt"
    data.write_text(CORPUS, encoding="utf-8")
    def train_argv(out, *extra):
        return [*MINILLM, "train", "--data", str(data), "--out", str(out), *TINY_TRAIN, *extra]
    assert main(train_argv(tmp_path / "full")[3:]) == 0
    new = digests(tmp_path / "full")
    out, base = tmp_path / "out", tmp_path / "base"
    if resume:                      # a run killed once its first checkpoint verified
        proc = subprocess.Popen(train_argv(base), env=ENV, cwd=REPO, stdout=subprocess.DEVNULL)
        while proc.poll() is None and not (base / "checkpoint" / "manifest.json").exists():
            time.sleep(0.001)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        find_checkpoint(base)
    argv = train_argv(out, "--resume") if resume else train_argv(out)
    outcomes = []
    def prepare():
        shutil.rmtree(out, ignore_errors=True)
        if resume:
            shutil.copytree(base, out, symlinks=True)
    def check():
        if (out / "config.json").exists():
            GPT.from_pretrained(out)
        outcomes.append(digests(out))
        assert outcomes[-1] in ({}, new), outcomes[-1]
        try:
            find_checkpoint(out)
        except ValueError:
            return                  # no checkpoint verifies: nothing to resume from
        if outcomes[-1] == {}:      # resume to the end: the uninterrupted model, bit for bit
            assert main(train_argv(out, "--resume")[3:]) == 0
            assert digests(out) == new
    landed = kill_many(argv, check, prepare=prepare)
    print(f"train{' --resume' * resume}: {KILL_POINTS} kills, {landed} mid-run, outcomes "
          f"none/new {outcomes.count({})}/{outcomes.count(new)}")
