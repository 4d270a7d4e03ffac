"""Dequantisation: parity with the gguf package (fixtures), hand-computed blocks, properties."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

from minillm.io.gguf.dequant import BF16, F16, F32, Q4_0, Q4_1, Q8_0, dequantize
from tests.conftest import FIXTURES
from tests.io.gguf_writer import quantize

TYPES = {"Q8_0": Q8_0, "Q4_0": Q4_0, "Q4_1": Q4_1, "BF16": BF16, "F16": F16}


def half_bytes(*values):
    return list(np.array(values, dtype="<f2").view(np.uint8))


@pytest.mark.parametrize("name", sorted(TYPES))
def test_dequantize_matches_gguf_package(name):
    """Reference: gguf 0.19 gguf.quants.dequantize on its own quantised bytes; tolerance: exact."""
    with np.load(FIXTURES / "dequant" / "quants.npz", allow_pickle=False) as z:
        raw, expected, shape = z[f"{name}_raw"], z[f"{name}_expected"], tuple(z[f"{name}_shape"])
    out = dequantize(raw, TYPES[name], shape)
    assert out.dtype == np.float32 and out.shape == shape
    np.testing.assert_array_equal(out, expected)


def test_q8_0_hand_block():
    """x = d * q with d = 0.5 (f16 0x3800) and q = 2, -3, 127, -128, 0, ..."""
    q = np.array([2, -3, 127, -128] + [0] * 28, dtype=np.int8)
    raw = np.array(half_bytes(0.5) + list(q.view(np.uint8)), dtype=np.uint8)
    out = dequantize(raw, Q8_0, (32,))
    np.testing.assert_array_equal(out[:4], [1.0, -1.5, 63.5, -64.0])
    assert not out[4:].any()


def test_q4_0_low_nibbles_are_first_half():
    """byte 0x9A: low nibble 0xA -> element 0 = 2 * (10 - 8) = 4; high 0x9 -> element 16 = 2."""
    raw = np.array(half_bytes(2.0) + [0x9A] + [0x88] * 15, dtype=np.uint8)
    out = dequantize(raw, Q4_0, (32,))
    assert out[0] == 4.0 and out[16] == 2.0
    assert not np.delete(out, [0, 16]).any()  # nibble 8 means zero


def test_q4_1_hand_block():
    """x = d * q + m with d = 0.5, m = -1: byte 0x3F -> x[0] = 6.5, x[16] = 0.5; q = 0 -> m."""
    raw = np.array(half_bytes(0.5, -1.0) + [0x3F] + [0x00] * 15, dtype=np.uint8)
    out = dequantize(raw, Q4_1, (1, 32))
    assert out[0, 0] == 6.5 and out[0, 16] == 0.5
    np.testing.assert_array_equal(np.delete(out[0], [0, 16]), -1.0)


def test_bf16_is_the_top_half_of_float32():
    raw = np.array([0x3F80, 0xC000, 0x7F80, 0x0001], dtype="<u2").view(np.uint8)
    out = dequantize(raw, BF16, (4,))
    assert out[:3].tolist() == [1.0, -2.0, np.inf]
    assert out[3] == np.array([0x00010000], np.uint32).view(np.float32)[0]  # a subnormal


def test_f32_is_a_view_of_the_bytes():
    x = np.array([[1.5, -2.0], [3.0, 0.25]], np.float32)
    np.testing.assert_array_equal(dequantize(x.reshape(-1).view(np.uint8), F32, (2, 2)), x)


@given(arrays(np.float32, st.tuples(st.integers(1, 3), st.sampled_from([32, 64])),
              elements=st.floats(-100, 100, width=32)),
       st.sampled_from([Q8_0, Q4_0, Q4_1]))
def test_dequantize_inverts_quantize_within_half_a_step(x, ggml_type):
    """|x - deq(quant(x))| <= d/2 per block (plus float16 rounding of the scale and offset).

    subtle: for tiny blocks the float16 scale d is subnormal (below 2**-14), where float16 rounds
    to a fixed 2**-24 grid: d is then off by up to 2**-25 absolute, times |q| <= q_max (found by
    the thorough profile: a block of 1e-5 under Q8_0, d = 7.9e-8 stored as 6.0e-8). llama.cpp's
    format has the same limit."""
    out = dequantize(quantize(x, ggml_type), ggml_type, x.shape)
    assert out.dtype == np.float32 and out.shape == x.shape
    blocks, got = x.reshape(-1, 32), out.reshape(-1, 32)
    spread = blocks.max(1) - blocks.min(1)
    # subtle: Q4_0 maps the largest |x| to q = 0; its negation would need q = 16, clipped to 15,
    # one whole step off: so its "half step" bound is d, not d / 2
    step = {Q8_0: np.abs(blocks).max(1) / 127, Q4_0: np.abs(blocks).max(1) / 4,
            Q4_1: spread / 15}[ggml_type]
    q_max = {Q8_0: 127, Q4_0: 8, Q4_1: 15}[ggml_type]
    bound = (step / 2 + 1e-2 * np.abs(blocks).max(1)   # f16 scale: ~2**-11 relative, times q
             + q_max * 2.0**-24 + 1e-6)                # f16 subnormal scale (and offset)
    assert (np.abs(got - blocks).max(1) <= bound).all()


@pytest.mark.parametrize("raw_size, ggml_type, shape, message", [
    (33, Q8_0, (32,), "need 34"),
    (18, Q4_0, (16,), "multiple of 32"),
    (20, Q4_1, (2, 16), "multiple of 32"),
    (8, F32, (3,), "need 12"),
    (4, 6, (32,), "cannot dequantise GGML type 6"),
])
def test_bad_input_is_a_clear_value_error(raw_size, ggml_type, shape, message):
    with pytest.raises(ValueError, match=message):
        dequantize(np.zeros(raw_size, np.uint8), ggml_type, shape)


def test_raw_must_be_uint8():
    with pytest.raises(TypeError, match="uint8"):
        dequantize(np.zeros(8, np.float32), F32, (8,))
