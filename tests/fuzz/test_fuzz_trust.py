"""The trust cases, fuzzed: header values of every type and size, side files of every special
kind under every name minillm reads, damaged cached downloads, and user sizes from 0 to 10³⁰.
Each ends in a correct result or a clear ValueError/TypeError/FileNotFoundError naming what was
wrong: never a traceback, a hang, a MemoryError or a silently used file."""
import os
import random
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minillm.io.hf.config import to_hf_dict
from minillm import GPT, ModelConfig, Tokenizer, load_model
from minillm.io import download as dl
from minillm.decoding.beam import beam_search
from minillm.decoding.generate import generate
from minillm.decoding.serving import ContinuousBatcher
from minillm.io.gguf.read import read_gguf
from minillm.io.gguf.write import (ARRAY, BOOL, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64,
                                   STRING, UINT8, UINT16, UINT32, UINT64, write_gguf)
from tests.fuzz.profile import CASES_PER_FORMAT
from tests.fuzz.runner import CLEAR
from tests.test_download_integrity import fake_wheel, spec_for

EXAMPLES = settings(max_examples=CASES_PER_FORMAT, deadline=None)
SCALARS = [UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64, FLOAT32, FLOAT64, BOOL, STRING]
VALUES = (st.integers(min_value=-2**70, max_value=2**70) | st.floats(allow_nan=False)
          | st.booleans() | st.text(max_size=8) | st.none())


@EXAMPLES
@given(st.sampled_from(SCALARS), VALUES, st.booleans())
def test_any_header_value_is_written_exactly_or_refused_before_opening(vtype, value, as_array):
    meta = {"k": (ARRAY, (vtype, [0, value])) if as_array else (vtype, value)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.gguf"
        try:
            write_gguf(path, meta, {})
            refused = None
        except ValueError as exc:
            refused = exc
        if refused is not None:
            assert "GGUF field k" in str(refused) and not path.exists()
        else:
            got = read_gguf(str(path)).metadata["k"]
            got = got[1] if as_array else got
            if vtype in (FLOAT32,) and not isinstance(value, int):
                assert got == pytest.approx(value, rel=1e-6) or abs(value) < 1e-37
            else:
                assert got == value


def test_an_integer_a_float64_cannot_hold_is_refused_not_rounded(tmp_path):
    """Regression: 2⁵³ + 1 as a FLOAT64 value was written as 2⁵³, silently."""
    with pytest.raises(ValueError, match="cannot hold exactly"):
        write_gguf(tmp_path / "x.gguf", {"k": (FLOAT64, 2**53 + 1)}, {})
    assert not (tmp_path / "x.gguf").exists()
    write_gguf(tmp_path / "y.gguf", {"k": (FLOAT64, 2**53)}, {})     # exactly representable
    assert read_gguf(str(tmp_path / "y.gguf")).metadata["k"] == 2**53


SIDE_FILES = {"tokenizer": ["tokenizer.json", "tokenizer_config.json"],
              "gpt2 files": ["encoder.json", "vocab.bpe"],
              "model": ["config.json", "generation_config.json", "model.safetensors"]}
KINDS = ["/dev/zero", "/dev/urandom", "/proc/self/pagemap", "/proc/self/status", "/proc/self/mem",
         "fifo", "dir", "socket", "dangling", "loop"]


def _plant(target: Path, kind: str) -> None:
    if kind == "dir":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "socket":
        import socket
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(target))
    elif kind == "dangling":
        target.symlink_to(target.parent / "absent")
    elif kind == "loop":
        target.symlink_to(target)
    else:
        target.symlink_to(kind)


def _folder(tmp: Path, what: str) -> Path:
    tok = Tokenizer.train("the sea is blue, the sky is red " * 20, 280)
    if what == "model":
        model = GPT(ModelConfig(vocab_size=280, n_ctx=8, d_model=8, n_heads=2, n_layers=1))
        model.save_pretrained(tmp)
        hf = {k: v for k, v in to_hf_dict(model.config).items() if k != "minillm"}
        (tmp / "config.json").write_text(__import__("json").dumps(hf))
    if what == "gpt2 files":
        (tmp / "encoder.json").write_text('{"a": 0, "b": 1}')
        (tmp / "vocab.bpe").write_text("#version: 0.2\n")
    else:
        tok.save(tmp / "tokenizer.json")
    return tmp


@pytest.mark.skipif(sys.platform == "win32", reason="devices, FIFOs and /proc are POSIX files")
@pytest.mark.parametrize("what", list(SIDE_FILES))
def test_every_side_file_of_every_special_kind_is_refused_clearly(tmp_path, what):
    load = load_model if what == "model" else Tokenizer.load
    for case, (name, kind) in enumerate((n, k) for n in SIDE_FILES[what] for k in KINDS):
        folder = tmp_path / str(case)
        folder.mkdir()
        _folder(folder, what)
        (folder / name).unlink(missing_ok=True)
        _plant(folder / name, kind)
        try:
            load(folder)
        except CLEAR as exc:
            assert str(exc), (name, kind)
        # (a dangling generation_config.json is as absent: the model loads)


@EXAMPLES
@given(st.data())
def test_a_damaged_cached_download_is_refused_on_use(data):
    payload = b"a cached model's bytes " * 200
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        spec = spec_for("t/m.bin", payload)
        old = dl.MODELS.get("fuzz"), os.environ.get("MINILLM_HOME")
        dl.MODELS["fuzz"], os.environ["MINILLM_HOME"] = spec, str(tmp / "home")
        try:
            target = dl.download(spec, dl.models_dir(),
                                 fetch=lambda s, t: fake_wheel(tmp, {"t/m.bin": payload}))
            damage = data.draw(st.sampled_from(["flip", "truncate", "append", "replace"]))
            at = data.draw(st.integers(0, len(payload) - 1))
            changed = bytearray(payload)
            if damage == "flip":
                changed[at] ^= 1 << data.draw(st.integers(0, 7))
            elif damage == "truncate":
                changed = changed[:at]
            elif damage == "append":
                changed += b"x"
            else:
                changed = bytearray(random.Random(at).randbytes(len(payload)))
            st_before = target.stat()
            while __import__("time").time_ns() < st_before.st_ctime_ns + 20_000_000:
                __import__("time").sleep(0.005)        # the next write gets a later ctime
            with open(target, "r+b") as f:             # in place: same inode
                f.write(changed)
                f.truncate()
            os.utime(target, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))
            with pytest.raises(ValueError, match="does not match its sha256.*download fuzz"):
                dl.verified_download("fuzz")
        finally:
            dl.MODELS.pop("fuzz")
            if old[1] is None:
                os.environ.pop("MINILLM_HOME")
            else:
                os.environ["MINILLM_HOME"] = old[1]


MODEL = GPT(ModelConfig(vocab_size=64, n_ctx=32, d_model=16, n_heads=2, n_layers=1))
# small ones run; from 10¹³ rows no machine's memory holds them (sizes in between that fit do
# run, and slowly: a million beams are a million beams)
SIZES = st.integers(min_value=0, max_value=40) | st.integers(min_value=10**13, max_value=10**30)


@EXAMPLES
@given(st.sampled_from(["batch_size", "beam_size", "num_draft_tokens"]), SIZES)
def test_user_sizes_work_or_are_refused_before_allocating(which, n):
    try:
        if which == "batch_size":
            ContinuousBatcher(MODEL, batch_size=n)
        elif which == "beam_size":
            beam_search(MODEL, [1, 2], beam_size=n, max_new_tokens=2)
        else:
            list(generate(MODEL, [1, 2, 3], 4, draft="prompt", num_draft_tokens=n,
                          temperature=0))
    except (ValueError, TypeError) as exc:
        assert which in str(exc) or "batch_size" in str(exc)
