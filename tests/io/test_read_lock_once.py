"""A load takes its folder's read lock once (io/commit.py's ``reading``): ``load_model`` holds the
folder for the model and its tokenizer, and the readers it calls inside (``from_pretrained``,
``read_checkpoint_config``), which hold it themselves when called alone, take nothing more. Another
thread's load takes its own."""
import threading

import pytest

from minillm import GPT, load_model
from minillm.config import ModelConfig
from minillm.io import commit
from minillm.io.checkpoints import read_checkpoint_config


@pytest.fixture
def acquisitions(monkeypatch):
    """The folders ``reading`` locks, one entry per acquisition."""
    taken, real = [], commit.locked

    def counted(folder, exclusive, wait=None):
        taken.append((str(folder), exclusive))
        return real(folder, exclusive, wait)

    monkeypatch.setattr(commit, "locked", counted)
    return taken


@pytest.fixture
def folder(tmp_path):
    config = ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_heads=2, n_layers=1, d_ff=16)
    GPT(config, seed=0).save_pretrained(tmp_path / "m")
    return tmp_path / "m"


@pytest.mark.parametrize("load", [lambda path: load_model(path), GPT.from_pretrained, read_checkpoint_config],
                         ids=["load_model", "from_pretrained", "read_checkpoint_config"])
def test_a_load_takes_its_folders_read_lock_once(folder, acquisitions, load):
    load(folder)
    assert acquisitions == [(str(folder), False)]


def test_a_nested_load_in_another_thread_takes_its_own_lock(folder, acquisitions):
    with commit.reading(folder):
        inner = threading.Thread(target=read_checkpoint_config, args=(folder,))
        inner.start()
        inner.join()
        read_checkpoint_config(folder)                    # this thread: already held
    assert acquisitions == [(str(folder), False)] * 2


def test_the_lock_is_taken_again_after_the_load_ends(folder, acquisitions):
    load_model(folder)
    load_model(folder)
    assert len(acquisitions) == 2
