"""What a command reads from the user or a downloaded folder is bounded by size and type
(cli/_input.py, io/bounded.py): a larger file is refused unread, naming it, its size and the
limit; a device or a FIFO is named as one, never reported missing. The large files are sparse
(no disk used)."""
import io
import os
import shutil
import sys

import pytest

from minillm.cli import _input
from tests.cli.helpers import run_cli
from tests.conftest import REPO


def sparse(path, size):
    with open(path, "wb") as f:
        f.truncate(size)
    return str(path)


def test_train_data_names_a_device_as_a_device(capsys, tmp_path):
    code, _, err = run_cli(capsys, "train", "--data", "/dev/zero", "--out", str(tmp_path / "o"))
    assert code == 2 and "--data /dev/zero is a character device, not a regular file" in err


def test_train_data_larger_than_its_limit_is_refused_by_size(capsys, tmp_path):
    big = sparse(tmp_path / "big.txt", _input.DATA_LIMIT + 1)
    code, _, err = run_cli(capsys, "train", "--data", big, "--out", str(tmp_path / "o"))
    assert code == 2 and f"--data {big} is 268,435,457 bytes; --data is limited to 268,435,456" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_count_names_a_fifo_and_does_not_wait_for_a_writer(capsys, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    code, _, err = run_cli(capsys, "count", str(tmp_path / "pipe"))
    assert code == 2 and "pipe is a FIFO (named pipe), not a regular file" in err


def test_count_of_a_file_larger_than_its_limit_is_refused_by_size(capsys, tmp_path):
    big = sparse(tmp_path / "big.txt", _input.TEXT_LIMIT + 1)
    code, out, err = run_cli(capsys, "count", big)
    assert code == 2 and f"{big} is 67,108,865 bytes; a text to read is limited to 67,108,864" in err


@pytest.mark.parametrize("command", ["count", "tokenize"])
def test_standard_input_larger_than_its_limit_is_refused(capsys, monkeypatch, command):
    monkeypatch.setattr(sys, "stdin", io.StringIO("a" * (_input.TEXT_LIMIT + 1)))
    code, _, err = run_cli(capsys, command)
    assert code == 2 and "standard input holds more than 67,108,864 bytes" in err


def test_a_prompt_file_larger_than_its_limit_is_refused_by_size(capsys, tmp_path):
    big = sparse(tmp_path / "p.txt", _input.TEXT_LIMIT + 1)
    code, _, err = run_cli(capsys, "generate", "--prompt-file", big)
    assert code == 2 and f"--prompt-file {big} is 67,108,865 bytes" in err


def test_a_huge_chat_template_in_a_model_folder_is_refused_by_its_size(capsys, tmp_path):
    """Regression: a 3 GB sparse chat_template.jinja was read whole; the memory ran out and the
    error blamed --max-new-tokens."""
    folder = tmp_path / "model"
    shutil.copytree(REPO / "weights" / "shakespeare", folder)
    sparse(folder / "chat_template.jinja", 3 << 30)
    code, _, err = run_cli(capsys, "generate", "--model", str(folder), "Hi")
    assert code == 2 and "chat_template.jinja is 3,221,225,472 bytes; a chat template is " \
                         "limited to 1,048,576" in err and "--max-new-tokens" not in err
