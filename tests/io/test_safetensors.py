"""safetensors: round trips, BF16, byte parity with the reference package, malformed files."""
import json
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from minillm.io.safetensors import (float32_to_bf16, load_safetensors, load_safetensors_metadata,
                                    save_safetensors)
from tests.conftest import FIXTURES

REFERENCE = FIXTURES / "dequant" / "reference.safetensors"
tmp_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])

tensor = st.sampled_from([np.float32, np.float16, np.int32, np.int64]).flatmap(
    lambda dtype: arrays(dtype, array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
names = st.text(min_size=1, max_size=8).filter(lambda s: s != "__metadata__")


@tmp_ok
@given(st.dictionaries(names, tensor, max_size=5),
       st.none() | st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
       st.booleans())
def test_load_inverts_save(tmp_path, tensors, metadata, mmap):
    path = tmp_path / "t.safetensors"
    save_safetensors(path, tensors, metadata=metadata)
    loaded = load_safetensors(path, mmap=mmap)
    assert loaded.keys() == tensors.keys()
    for name, x in tensors.items():
        want = x.astype(np.float32) if x.dtype == np.float16 else x  # F16 is read as float32
        assert loaded[name].dtype == want.dtype and loaded[name].shape == x.shape
        np.testing.assert_array_equal(loaded[name], want)
    assert load_safetensors_metadata(path) == (metadata or {})
    assert (len(path.read_bytes()) - 8 - sum(x.nbytes for x in tensors.values())) % 8 == 0


@tmp_ok
@given(arrays(np.float32, array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
              elements=st.floats(width=32)))
def test_bf16_round_trip_keeps_the_top_16_bits_rounded(tmp_path, x):
    path = tmp_path / "b.safetensors"
    save_safetensors(path, {"x": x}, bf16=True)
    back = load_safetensors(path)["x"]
    assert back.dtype == np.float32 and back.shape == x.shape
    assert not (back.view(np.uint32) & 0xFFFF).any()   # only 16 bits survive
    finite = np.isfinite(back) & np.isfinite(x)
    # round to nearest: error at most half a bf16 ulp, 2**-8 relative (2**-134 for subnormals)
    assert (np.abs(back[finite] - x[finite]) <= np.abs(x[finite]) * 2.0**-8 + 2.0**-134).all()
    np.testing.assert_array_equal(np.isnan(back), np.isnan(x))


def test_bf16_rounds_to_nearest_even():
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -2.0, np.inf], np.float32)
    # 1 + 2**-8 is a tie -> even (1.0); 1 + 3*2**-8 is a tie -> even (1 + 2**-6 = 0x3F82)
    assert float32_to_bf16(x).tolist() == [0x3F80, 0x3F80, 0x3F82, 0x3F81, 0xC000, 0x7F80]
    assert float32_to_bf16(np.array([np.nan], np.float32))[0] == 0x7FC0


def test_bf16_save_keeps_a_0d_shape(tmp_path):
    """Regression: np.ascontiguousarray made a 0-d tensor shape (1,) when converting to BF16."""
    save_safetensors(tmp_path / "s.safetensors", {"s": np.array(1.5, np.float32)}, bf16=True)
    assert load_safetensors(tmp_path / "s.safetensors")["s"].shape == ()


def test_reads_the_reference_file():
    """Reference: safetensors 0.8 (torch) wrote the fixture; values checked against torch there."""
    t = load_safetensors(REFERENCE)
    assert {k: (v.dtype.name, v.shape) for k, v in t.items()} == {
        "f32": ("float32", (3, 5)), "f16": ("float32", (4,)), "bf16": ("float32", (2, 3)),
        "i32": ("int32", (6,)), "i64": ("int64", (2,)), "scalar": ("float32", ()),
        "empty": ("float32", (0, 7))}
    assert t["i32"].tolist() == list(range(6)) and t["i64"].tolist() == [-1, 2**40]
    assert t["scalar"] == 3.5 and load_safetensors_metadata(REFERENCE) == {"format": "pt"}


def test_save_is_byte_identical_to_the_reference(tmp_path):
    """Re-saving what we read (F16 as float16, BF16 via bf16=) reproduces the reference's bytes."""
    t = load_safetensors(REFERENCE)
    t["f16"] = t["f16"].astype(np.float16)
    save_safetensors(tmp_path / "ours.safetensors", t, metadata={"format": "pt"}, bf16={"bf16"})
    assert (tmp_path / "ours.safetensors").read_bytes() == REFERENCE.read_bytes()


def test_mmap_f32_is_a_read_only_view():
    t = load_safetensors(REFERENCE, mmap=True)
    assert not t["f32"].flags.writeable
    assert load_safetensors(REFERENCE, mmap=False)["f32"].flags.writeable


def build(header, data=b"", length=None):
    """A safetensors file from a header (dict or raw bytes) and a data buffer."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def entry(dtype="F32", shape=(2,), offsets=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


MALFORMED = {
    "too short": (b"\x01\x00", "need at least 8"),
    "absurd header length": (build(b"{}", length=2**40), "exceeds the bound"),
    "truncated header": (build(b"{}", length=100), "truncated"),
    "truncated data": (build({"a": entry()}, b"\0" * 4), "truncated"),
    "not JSON": (build(b"{nope"), "not valid UTF-8 JSON"),
    "not UTF-8": (build(b'{"\xff":1}'), "not valid UTF-8 JSON"),
    "header not an object": (build(b"[1, 2]"), "must be a JSON object"),
    "entry not an object": (build({"a": 3}), "exactly the keys"),
    "missing key": (build({"a": {"dtype": "F32", "shape": [2]}}, b"\0" * 8), "exactly the keys"),
    "unknown dtype": (build({"a": entry("F8_E4M3")}, b"\0" * 8), "unknown dtype 'F8_E4M3'"),
    "shape not ints": (build({"a": entry(shape=(2.0,))}, b"\0" * 8), "shape must be"),
    "negative dim": (build({"a": entry(shape=(-2,))}, b"\0" * 8), "shape must be"),
    "offsets not ints": (build({"a": entry(offsets=("0", 8))}, b"\0" * 8), "data_offsets"),
    "offsets bool": (build({"a": entry(offsets=(False, 8))}, b"\0" * 8), "data_offsets"),
    "negative offset": (build({"a": entry(offsets=(-8, 0))}, b"\0" * 8), "data_offsets"),
    "end before begin": (build({"a": entry(offsets=(8, 0))}, b"\0" * 8), "data_offsets"),
    "three offsets": (build({"a": entry(offsets=(0, 4, 8))}, b"\0" * 8), "data_offsets"),
    "size/shape mismatch": (build({"a": entry(shape=(3,))}, b"\0" * 8), "needs 12"),
    "out of range": (build({"a": entry(offsets=(8, 16))}, b"\0" * 8), "gap"),
    "overlapping": (build({"a": entry(), "b": entry(offsets=(4, 12))}, b"\0" * 12), "overlaps"),
    "trailing bytes": (build({"a": entry()}, b"\0" * 12), "cover 8"),
    "duplicate name": (build(b'{"a":{},"a":{}}'), "repeats the key 'a'"),
    "bad metadata": (build({"__metadata__": {"k": 1}}), "string -> string"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_file_is_a_clear_value_error(tmp_path, case):
    data, message = MALFORMED[case]
    (tmp_path / "bad.safetensors").write_bytes(data)
    for mmap in (True, False):
        with pytest.raises(ValueError, match=message):
            load_safetensors(tmp_path / "bad.safetensors", mmap=mmap)


@pytest.mark.parametrize("tensors, metadata, error, message", [
    ({"x": np.zeros(2, np.float64)}, None, TypeError, "float64 cannot be written"),
    ({"x": np.zeros(2, np.uint8)}, None, TypeError, "allowed: float32"),
    ({"__metadata__": np.zeros(2, np.float32)}, None, ValueError, "reserved"),
    ({"x": np.zeros(2, np.float32)}, {"k": 1}, TypeError, "str -> str"),
    ([np.zeros(2, np.float32)], None, TypeError, "dict of str"),
])
def test_save_rejects_what_it_cannot_write(tmp_path, tensors, metadata, error, message):
    with pytest.raises(error, match=message):
        save_safetensors(tmp_path / "x.safetensors", tensors, metadata=metadata)
