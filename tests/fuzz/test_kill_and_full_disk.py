"""Data safety under the worst interruptions: ``kill -9`` while a checkpoint or a model is being
written, and a disk that fills up at a random byte. Whatever the moment, the previous model or
checkpoint stays loadable, and resuming gives the uninterrupted run's parameters bit for bit."""
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
from tests.fuzz.profile import KILLS
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
print("ready", flush=True)
i = 0
while True:
    models[i % 2].save_pretrained(sys.argv[1])
    i += 1
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
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.05 + random.Random(kill).random() * 0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    loaded = GPT.from_pretrained(tmp_path, fast=False).params.named()
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
