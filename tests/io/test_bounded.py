"""Files minillm reads beside a model are regular files of bounded size: a link to a device, a
FIFO, a /proc entry, a folder under a file's name or an over-long name is a clear ValueError."""
import json
import os
import sys

import pytest

from minillm.io.hf.config import read_config, to_hf_dict
from minillm import Tokenizer, load_model
from minillm.io.bounded import read_bounded
from tests.train.test_loop import tiny

unix_only = pytest.mark.skipif(sys.platform == "win32" or not os.path.exists("/dev/zero"),
                               reason="devices, FIFOs and /proc are POSIX (Linux) files")


def plant(target, kind):
    """Put a file of ``kind`` at ``target``: a link to a device or /proc entry, a FIFO, a folder."""
    if kind == "dir":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(kind)


SPECIAL = ["/dev/zero", "/proc/self/pagemap", "/proc/self/status", "fifo", "dir"]


@pytest.fixture
def tokenizer_folder(tmp_path):
    Tokenizer.train("hello world, hello there " * 50, 300).save(tmp_path / "tokenizer.json")
    return tmp_path


@unix_only
@pytest.mark.parametrize("kind", SPECIAL)
def test_tokenizer_config_json_that_is_a_special_file_is_refused(tokenizer_folder, kind):
    (tokenizer_folder / "tokenizer_config.json").unlink()
    plant(tokenizer_folder / "tokenizer_config.json", kind)
    with pytest.raises(ValueError, match="not a regular file|changed size|cannot be read"):
        Tokenizer.load(tokenizer_folder)


@unix_only
@pytest.mark.parametrize("kind", SPECIAL)
def test_vocab_bpe_that_is_a_special_file_is_refused(tmp_path, kind):
    (tmp_path / "encoder.json").write_text('{"a": 0}')
    plant(tmp_path / "vocab.bpe", kind)
    with pytest.raises(ValueError, match="not a regular file|changed size|cannot be read"):
        Tokenizer.load(tmp_path)


@unix_only
@pytest.mark.parametrize("name", ["config.json", "generation_config.json", "model.safetensors"])
@pytest.mark.parametrize("kind", SPECIAL)
def test_model_files_that_are_special_files_are_refused(tmp_path, name, kind):
    model = tiny()
    model.save_pretrained(tmp_path)
    hf_only = {k: v for k, v in to_hf_dict(model.config).items() if k != "minillm"}
    (tmp_path / "config.json").write_text(json.dumps(hf_only))   # reads generation_config.json
    (tmp_path / name).unlink(missing_ok=True)
    plant(tmp_path / name, kind)
    # (a main file from /proc fails its header check: size 0, then a header of garbage)
    with pytest.raises(ValueError, match="not a regular file|changed size|cannot be read|"
                                         "safetensors"):
        load_model(tmp_path)


@unix_only
@pytest.mark.parametrize("kind", SPECIAL)
def test_a_gguf_that_is_a_special_file_is_refused(tmp_path, kind):
    plant(tmp_path / "model.gguf", kind)
    with pytest.raises((ValueError, FileNotFoundError),   # a folder: "not a checkpoint directory"
                       match="not a regular file|changed size|cannot be read|GGUF|directory"):
        load_model(tmp_path / "model.gguf")


@pytest.mark.parametrize("load", [Tokenizer.load, load_model, read_config])
def test_a_5000_character_name_is_a_clear_error(tmp_path, load):
    with pytest.raises(ValueError, match=r"cannot be read \(.*\).*|5,0\d\d characters"):
        load(str(tmp_path / ("x" * 5000)))


def test_read_bounded_refuses_a_file_over_its_limit_unread(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(ValueError, match="101 bytes; a side file is limited to 100"):
        read_bounded(tmp_path / "big", 100, "a side file")
    assert read_bounded(tmp_path / "big", 101) == b"x" * 101


def test_read_bounded_of_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_bounded(tmp_path / "absent", 10)
