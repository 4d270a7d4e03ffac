"""tests.conftest.shared_file also finds SmolLM2 where `python -m minillm download smollm2` puts
it (regression: tests needing SmolLM2 skipped unless MINILLM_SHARED_DATA was set, even after
the download)."""
import pytest

import tests.conftest as conftest
from minillm.io.download import MODELS


def test_shared_file_finds_a_downloaded_smollm2(tmp_path, monkeypatch):
    monkeypatch.setattr(conftest, "SHARED_DATA", tmp_path / "no-shared-data")
    monkeypatch.setenv("MINILLM_HOME", str(tmp_path / "home"))
    relative = "models/SmolLM2-135M-Instruct.Q4_1.gguf"
    with pytest.raises(pytest.skip.Exception, match="minillm download"):
        conftest.shared_file(relative)
    downloaded = tmp_path / "home" / "models" / MODELS["smollm2"].filename
    downloaded.parent.mkdir(parents=True)
    downloaded.write_bytes(b"GGUF")
    assert conftest.shared_file(relative) == downloaded


def test_shared_file_prefers_the_development_data_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(conftest, "SHARED_DATA", tmp_path)
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "x.txt").write_text("x")
    assert conftest.shared_file("corpora/x.txt") == tmp_path / "corpora" / "x.txt"


def test_download_locations_agree_with_the_tokenizer_loader():
    """The loader reads a download's first file (cli.download.verified_download)."""
    for relative, (name, where) in conftest.DOWNLOADED.items():
        if relative.endswith(("gguf", "tokenizer.json")):
            assert where == MODELS[name].filename, relative
