"""GGUF reader: round trips through the test writer, malformed files, the real SmolLM2 file."""
import collections
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from minillm.io.gguf.dequant import BF16, F16, F32, Q4_0, Q4_1, Q8_0, dequantize
from minillm.io.gguf.read import read_gguf
from tests.conftest import FIXTURES, shared_file
from tests.io import gguf_writer as w

INT_RANGES = {w.UINT8: (0, 2**8 - 1), w.INT8: (-2**7, 2**7 - 1), w.UINT16: (0, 2**16 - 1),
              w.INT16: (-2**15, 2**15 - 1), w.UINT32: (0, 2**32 - 1), w.INT32: (-2**31, 2**31 - 1),
              w.UINT64: (0, 2**64 - 1), w.INT64: (-2**63, 2**63 - 1)}
tmp_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


def scalar(vtype):
    if vtype in INT_RANGES:
        return st.integers(*INT_RANGES[vtype])
    return {w.FLOAT32: st.floats(width=32, allow_nan=False), w.FLOAT64: st.floats(allow_nan=False),
            w.BOOL: st.booleans(), w.STRING: st.text(max_size=8)}[vtype]


SCALAR_TYPES = [*INT_RANGES, w.FLOAT32, w.FLOAT64, w.BOOL, w.STRING]
typed_scalar = st.sampled_from(SCALAR_TYPES).flatmap(lambda t: scalar(t).map(lambda v: (t, v)))
typed_array = st.sampled_from(SCALAR_TYPES).flatmap(
    lambda t: st.lists(scalar(t), max_size=4).map(lambda vs: (w.ARRAY, (t, vs))))
nested_array = st.lists(typed_array.map(lambda a: a[1]), max_size=3).map(
    lambda items: (w.ARRAY, (w.ARRAY, items)))  # e.g. an array of arrays of strings
typed_value = st.one_of(typed_scalar, typed_array, nested_array)


def plain(vtype, v):
    """What the reader should return: Python values, arrays as lists."""
    if vtype != w.ARRAY:
        return v
    etype, items = v
    return [plain(*item) if etype == w.ARRAY else item for item in items]


def write(tmp_path, data, name="t.gguf"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@tmp_ok
@given(st.dictionaries(st.text(min_size=1, max_size=12), typed_value, max_size=6),
       st.sampled_from([2, 3]))
def test_read_inverts_write_for_metadata(tmp_path, metadata, version):
    g = read_gguf(write(tmp_path, w.gguf_bytes(metadata, version=version)))
    assert g.version == version and g.tensors == {}
    assert g.metadata == {k: plain(t, v) for k, (t, v) in metadata.items()}


def encode(x, ggml_type):  # [.., n] float32 -> raw uint8, and what decoding must give back
    if ggml_type == F32:
        return x.reshape(-1).view(np.uint8), x
    if ggml_type == F16:
        return x.astype("<f2").reshape(-1).view(np.uint8), x.astype(np.float16).astype(np.float32)
    if ggml_type == BF16:
        top = (x.view(np.uint32) >> 16).astype("<u2")  # truncation: exact, whatever the rounding
        return top.reshape(-1).view(np.uint8), (top.astype(np.uint32) << 16).view(np.float32)
    raw = w.quantize(x, ggml_type)
    return raw, None  # checked against the dequantiser's own (parity-tested) output


tensor_spec = st.tuples(st.sampled_from([F32, F16, BF16, Q8_0, Q4_0, Q4_1]),
                        st.lists(st.integers(1, 3), max_size=2), st.integers(1, 2))


@tmp_ok
@given(st.lists(tensor_spec, min_size=1, max_size=4), st.sampled_from([1, 8, 32, 64]),
       st.integers(0, 2**32 - 1))
def test_read_inverts_write_for_tensors(tmp_path, specs, alignment, seed):
    rng, tensors, expected = np.random.default_rng(seed), {}, {}
    for i, (ggml_type, outer, row_blocks) in enumerate(specs):
        shape = (*outer, 32 * row_blocks)                                # NumPy order
        x = rng.standard_normal(shape).astype(np.float32)
        raw, expected[f"t{i}"] = encode(x, ggml_type)
        tensors[f"t{i}"] = (ggml_type, shape, raw)
    meta = {"general.alignment": (w.UINT32, alignment)}
    g = read_gguf(write(tmp_path, w.gguf_bytes(meta, tensors, alignment=alignment)))
    assert g.data_offset % alignment == 0
    for name, (ggml_type, shape, raw) in tensors.items():
        info = g.tensors[name]
        assert (info.shape, info.ggml_type, info.nbytes) == (shape, ggml_type, raw.size)
        np.testing.assert_array_equal(g.raw(name), raw)
        out = g.tensor(name)
        assert out.dtype == np.float32 and out.shape == shape
        want = expected[name] if expected[name] is not None else dequantize(raw, ggml_type, shape)
        np.testing.assert_array_equal(out, want)


def test_shape_is_ne_reversed(tmp_path):
    """ne = [in=32, out=3] in the file is NumPy [out, in] = (3, 32); row 1 is bytes 128..255."""
    x = np.arange(96, dtype=np.float32).reshape(3, 32)
    data = w.header(1, 0) + w.tensor_info("w", [32, 3], F32, 0)
    data += w.pad(len(data), 32) + x.tobytes()
    g = read_gguf(write(tmp_path, data))
    assert g.tensors["w"].shape == (3, 32)
    np.testing.assert_array_equal(g.tensor("w"), x)


# a small valid file that the malformed cases below break one way each
GOOD_META = {"general.architecture": (w.STRING, "llama"), "n": (w.UINT32, 7)}
GOOD_TENSORS = {"a": (F32, (2, 4), np.zeros(32, np.uint8)),
                "b": (Q8_0, (1, 32), np.zeros(34, np.uint8))}


def test_the_good_file_reads(tmp_path):
    g = read_gguf(write(tmp_path, w.gguf_bytes(GOOD_META, GOOD_TENSORS)))
    assert g.metadata == {"general.architecture": "llama", "n": 7} and list(g.tensors) == ["a", "b"]


def test_every_truncation_is_a_value_error(tmp_path):
    data = w.gguf_bytes(GOOD_META, GOOD_TENSORS)
    for cut in range(len(data)):
        with pytest.raises(ValueError):
            read_gguf(write(tmp_path, data[:cut], f"cut{cut}.gguf"))


def kv_raw(key, vtype, body):  # a metadata entry with an arbitrary (possibly bad) body
    return w.string(key) + struct.pack("<I", vtype) + body


MALFORMED = {
    "bad magic": (b"GGUG" + w.gguf_bytes()[4:], "not a GGUF file"),
    "version 1": (w.header(0, 0, version=1) + b"\0" * 8, "unsupported GGUF version 1"),
    "version 4": (w.header(0, 0, version=4), "unsupported GGUF version 4"),
    "big-endian": (b"GGUF" + struct.pack(">IQQ", 3, 0, 0), "big-endian"),
    "absurd tensor count": (w.header(2**60, 0), "absurd tensor count"),
    "absurd metadata count": (w.header(0, 2**40), "absurd metadata count"),
    "absurd string length": (w.header(0, 1) + struct.pack("<Q", 2**62) + b"k" * 16, "absurd"),
    "absurd array length": (w.header(0, 1)
                            + kv_raw("k", w.ARRAY, struct.pack("<IQ", w.UINT64, 2**61)),
                            "absurd k array length"),
    "unknown value type": (w.header(0, 1) + kv_raw("k", 13, b"\0" * 8), "unknown value type 13"),
    "unknown array type": (w.header(0, 1) + kv_raw("k", w.ARRAY, struct.pack("<IQ", 99, 1))
                           + b"\0" * 8, "unknown array element type 99"),
    "bool not 0 or 1": (w.header(0, 1) + kv_raw("k", w.BOOL, b"\x02"), "0 or 1"),
    "duplicate key": (w.header(0, 2) + w.kv("k", w.UINT8, 1) + w.kv("k", w.UINT8, 2), "duplicate"),
    "key not UTF-8": (w.header(0, 1) + w.kv(b"\xff\xfe", w.UINT8, 1), "not UTF-8"),
    "too deeply nested": (w.header(0, 1) + w.string("k") + struct.pack("<I", w.ARRAY)
                          + struct.pack("<IQ", w.ARRAY, 1) * 9 + struct.pack("<IQ", w.UINT8, 0),
                          "nested deeper"),
    "alignment not a power of two": (w.gguf_bytes({"general.alignment": (w.UINT32, 24)}),
                                     "power of two"),
    "alignment a string": (w.gguf_bytes({"general.alignment": (w.STRING, "32")}), "power of two"),
    "unknown ggml type": (w.gguf_bytes(tensors={"a": (99, (32,), b"")}), "unknown ggml type 99"),
    "five dims": (w.header(1, 0) + w.tensor_info("a", [1] * 5, F32, 0), "1 to 4"),
    "row not whole blocks": (w.gguf_bytes(tensors={"a": (Q8_0, (2, 16), np.zeros(34, np.uint8))}),
                             "not a multiple of the Q8_0 block size 32"),
    "misaligned offset": (w.gguf_bytes(tensors=GOOD_TENSORS, offsets={"b": 33}), "alignment"),
    "offset out of range": (w.gguf_bytes(tensors=GOOD_TENSORS, offsets={"b": 1024}),
                            "past the end"),
    "overlapping tensors": (w.gguf_bytes(tensors=GOOD_TENSORS, offsets={"b": 0}) + b"\0" * 32,
                            "overlaps"),
    "duplicate tensor": (w.header(2, 0) + w.tensor_info("a", [4], F32, 0)
                         + w.tensor_info("a", [4], F32, 32) + b"\0" * 64, "duplicate tensor"),
    "empty file": (b"", "header alone takes 24"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_file_is_a_clear_value_error(tmp_path, case):
    data, message = MALFORMED[case]
    with pytest.raises(ValueError, match=message):
        read_gguf(write(tmp_path, data))


def test_unsupported_type_says_which(tmp_path):
    q6_k = {"k": (14, (256,), np.zeros(210, np.uint8))}  # ggml type 14: one 210-byte block
    g = read_gguf(write(tmp_path, w.gguf_bytes(tensors=q6_k)))
    assert g.tensors["k"].type_name == "Q6_K" and g.raw("k").size == 210
    with pytest.raises(ValueError, match="'k' is Q6_K, which minillm cannot dequantise"):
        g.tensor("k")


def test_unknown_tensor_name_is_a_key_error(tmp_path):
    g = read_gguf(write(tmp_path, w.gguf_bytes(GOOD_META, GOOD_TENSORS)))
    with pytest.raises(KeyError, match="no tensor 'c'"):
        g.tensor("c")


def test_reads_smollm2_q4_1_gguf():
    """Reference: gguf 0.19 GGUFReader + quants.dequantize (fixture slices); tolerance: exact."""
    g = read_gguf(shared_file("models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    assert g.version == 3 and len(g.tensors) == 272
    assert collections.Counter(t.type_name for t in g.tensors.values()) == {
        "Q4_1": 210, "F32": 61, "Q8_0": 1}
    m = g.metadata
    assert (m["general.architecture"], m["llama.block_count"], m["llama.embedding_length"],
            m["llama.attention.head_count"], m["llama.attention.head_count_kv"],
            m["llama.feed_forward_length"], m["llama.rope.freq_base"]) == (
        "llama", 30, 576, 9, 3, 1536, 100000.0)
    tokens = m["tokenizer.ggml.tokens"]
    assert len(tokens) == 49152 and tokens[:3] == ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    assert g.tensors["token_embd.weight"].shape == (49152, 576)
    assert g.tensors["blk.0.attn_k.weight"].shape == (192, 576)  # HF k_proj [out, in]
    with np.load(FIXTURES / "dequant" / "smollm2_slices.npz", allow_pickle=False) as z:
        q = g.tensor("blk.0.attn_q.weight")
        assert q.dtype == np.float32
        np.testing.assert_array_equal(q[:2], z["attn_q_rows"])
        np.testing.assert_array_equal(g.tensor("token_embd.weight")[:2], z["token_embd_rows"])
