"""``python -m minillm finetune`` killed with ``kill -9`` at random moments (with and without
``--resume``), as ``train`` is in test_kill_and_full_disk.py: OUT then holds no adapter or the
finished one, and whenever a checkpoint verifies, ``--resume`` ends with the uninterrupted run's
adapter, byte for byte."""
import random
import shutil
import signal
import subprocess
import time

import pytest

from minillm.cli import main
from minillm.train.checkpoint import find_checkpoint
from minillm.train.manifest import ADAPTER_FILES, OPTIMIZER
from tests.conftest import REPO
from tests.fuzz.profile import KILLS
from tests.fuzz.test_kill_and_full_disk import ENV, MINILLM, digests, run_and_kill, timed
from tests.train.test_sft import CONVERSATIONS, chat_model, chat_tokenizer, write_jsonl


@pytest.mark.parametrize("resume", [False, True], ids=["finetune", "finetune --resume"])
def test_kill_9_during_finetune_leaves_no_adapter_or_the_finished_one(tmp_path, resume):
    chat_model().save_pretrained(tmp_path / "base")
    chat_tokenizer().save(tmp_path / "base" / "tokenizer.json")
    data = write_jsonl(tmp_path / "chat.jsonl", CONVERSATIONS * 3)

    def argv(out, *extra):
        return ["finetune", "--model", str(tmp_path / "base"), "--data", str(data), "--out",
                str(out), "--lora", "2", "--steps", "16", "--batch", "2", "--checkpoint-every", "1",
                *extra]
    assert main(argv(tmp_path / "full")) == 0
    new = digests(tmp_path / "full", ADAPTER_FILES)
    out, started = tmp_path / "out", tmp_path / "started"
    if resume:                      # a run killed once its first checkpoint verified
        proc = subprocess.Popen([*MINILLM, *argv(started)], env=ENV, cwd=REPO,
                                stdout=subprocess.DEVNULL)
        while proc.poll() is None and not (started / "checkpoint" / "manifest.json").exists():
            time.sleep(0.001)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        find_checkpoint(started, required=(*ADAPTER_FILES, OPTIMIZER))
    command = [*MINILLM, *argv(out, *(["--resume"] if resume else []))]
    duration, _ = timed(command) if not resume else (None, None)
    if resume:
        shutil.copytree(started, out)
        duration, _ = timed(command)
    outcomes, resumed = [], 0
    for k in range(KILLS):
        shutil.rmtree(out, ignore_errors=True)
        if resume:
            shutil.copytree(started, out)
        run_and_kill(command, random.Random(k), duration)
        outcomes.append(digests(out, ADAPTER_FILES))
        assert outcomes[-1] in ({}, new), outcomes[-1]
        try:
            find_checkpoint(out, required=(*ADAPTER_FILES, OPTIMIZER))
        except ValueError:
            continue                # no checkpoint verifies: nothing to resume from
        if outcomes[-1] == {}:      # resume to the end: the uninterrupted adapter, byte for byte
            assert main(argv(out, "--resume")) == 0
            assert digests(out, ADAPTER_FILES) == new
            resumed += 1
    print(f"finetune{' --resume' * resume}: {KILLS} kills, outcomes none/new "
          f"{outcomes.count({})}/{outcomes.count(new)}, {resumed} resumed to the end")
