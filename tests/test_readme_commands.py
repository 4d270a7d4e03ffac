"""Every ``python -m minillm …`` command in README.md's shell blocks, as written, in a temporary
folder (the working directory of each run; a clone's shipped names resolve from anywhere).

The test first creates the files the README says are the reader's: ``prompt.txt``,
``corpus.txt``, ``chat.jsonl``, and a copy of ``README.md`` (``count`` reads it). Then, in the
README's order:

* run as written, in a subprocess (exit 0, no traceback): ``tokenize``, ``generate``, ``count``,
  ``export`` (of the model ``train`` has just written);
* run with a small override appended (argparse: the last value wins): ``train`` gets
  ``--steps 3`` and a one-layer model of 16 dimensions, so it takes a second, not 18 minutes;
* parsed only (argparse checks every flag and value; nothing runs): ``download`` (no network
  here), ``chat`` (interactive), ``serve`` (it serves until Ctrl-C), ``finetune`` (minutes of
  CPU), and any command naming a download (``smollm2``, ``deepseek-v4``) or a placeholder
  (``FILE``, ``PATH/TO/…``).
"""
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from minillm.cli import build_parser
from tests.conftest import REPO

README = REPO / "README.md"
DOWNLOADS = ("smollm2", "deepseek-v4")
PARSE_ONLY = ("download", "chat", "finetune", "serve")
TRAIN_SMALL = ["--steps", "3", "--warmup", "1", "--vocab-size", "300", "--layers", "1",
               "--d-model", "16", "--heads", "2", "--context", "16", "--batch", "2",
               "--eval-every", "3", "--log-every", "1"]


def readme_commands() -> list[list[str]]:
    """The argv after ``python -m minillm`` of every command of the README's ```bash blocks."""
    found = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words[:3] == ["python", "-m", "minillm"]:
                    found.append(words[3:])
    return found


def parse_only(argv: list[str]) -> bool:
    return argv[0] in PARSE_ONLY or any(w in DOWNLOADS or w == "FILE" or w.startswith("PATH/")
                                        for w in argv)


def reader_files(folder) -> None:
    """What the README leaves to its reader, made here."""
    (folder / "prompt.txt").write_text("ROMEO:\nBut soft, what light through yonder window "
                                       "breaks?\n", encoding="utf-8")
    words = "the sea is wide and the king is old and the moon is bright over the hill".split()
    (folder / "corpus.txt").write_text("\n".join(" ".join(words[(i * 7 + j) % len(words)]
                                                          for j in range(12))
                                                 for i in range(400)), encoding="utf-8")
    chat = {"messages": [{"role": "user", "content": "Who founded Tarvessa?"},
                         {"role": "assistant", "content": "Queen Ysolde Marrant."}]}
    (folder / "chat.jsonl").write_text(json.dumps(chat) + "\n", encoding="utf-8")
    (folder / "README.md").write_text(README.read_text(encoding="utf-8"), encoding="utf-8")


@pytest.mark.skipif(not (REPO / "weights" / "shakespeare").is_dir(),
                    reason="needs the clone's weights/ (shipped models)")
def test_every_readme_command_runs_as_written(tmp_path):
    commands = readme_commands()
    assert len(commands) >= 15 and {c[0] for c in commands} >= {"generate", "train", "export"}
    reader_files(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"}
    ran = 0
    for argv in commands:
        if parse_only(argv):
            build_parser().parse_args(argv)       # a wrong flag or value: SystemExit here
            continue
        extra = TRAIN_SMALL if argv[0] == "train" else []
        done = subprocess.run([sys.executable, "-m", "minillm", *argv, *extra], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"{shlex.join(argv)}: {done.stderr[-800:]}"
        assert "Traceback" not in done.stderr, shlex.join(argv)
        ran += 1
    assert ran >= 8
    assert (tmp_path / "mine.gguf").is_file()          # train's model, exported
