"""A downloaded model's name means the verified download, never a file or folder of that name in
the working directory (reached as ./NAME); when one is there, the CLI says it is not used."""
import shutil

import pytest

import minillm.io.download as download
from minillm.loading import load_model
from tests.cli.helpers import run_cli
from tests.conftest import REPO


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """A working directory holding a folder named smollm2 (a copy of a small model), and an
    empty download cache."""
    shutil.copytree(REPO / "weights" / "shakespeare", tmp_path / "smollm2")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MINILLM_HOME", str(tmp_path / "cache"))
    return tmp_path / "smollm2"


def test_a_same_named_folder_never_stands_in_for_a_download(planted):
    with pytest.raises(FileNotFoundError, match="the smollm2 here is not used for the name: "
                                                "give ./smollm2 to load it"):
        load_model("smollm2")
    model, tok = load_model("./smollm2")                     # the folder, asked for by path
    assert model.config.vocab_size == tok.vocab_size


def test_the_cli_says_a_same_named_folder_is_not_used(planted, capsys, monkeypatch):
    shakespeare = REPO / "weights" / "shakespeare"            # (stands in for the download)
    monkeypatch.setattr(download, "verified_download", lambda name: shakespeare)
    code, _, err = run_cli(capsys, "tokenize", "--model", "smollm2", "hi")
    assert code == 0 and (f"--model smollm2 is the verified download {shakespeare}; the "
                          f"smollm2 in this folder is not used (give ./smollm2 to use it)") in err
