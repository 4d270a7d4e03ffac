"""Llama 3's RoPE scaling in GGUF: the ``rope_freqs.weight`` tensor.

llama.cpp's converter does not store Llama 3's four scaling numbers; it stores what they do, one
divisor per rotated pair (``model/rope.py``'s ``llama3_frequencies``):

    rope_freqs.weight [D/2] float32,   f_i = θ_i / θ'_i      (1: kept, factor: stretched)

and llama.cpp rotates pair i by m·θ_i / f_i. ``freq_divisors(config)`` writes it. Reading it back
into a config's ``rope_scaling`` (``llama3_scaling``) needs the numbers, and the divisors fix only
``factor`` (the largest one) and the two wavelength bounds L / high_freq_factor and
L / low_freq_factor: every Llama 3.x release uses low_freq_factor 1 and high_freq_factor 4, and
L (original_max_position_embeddings) is ``{arch}.rope.scaling.original_context_length`` when the
file has it (minillm writes it; llama.cpp reads it for YaRN only, which these files do not use),
else 8192, Llama 3's. The recovered scaling must give back the file's divisors, or the file is
refused: minillm would rotate other angles than llama.cpp.

Example: theta 500, D = 8, factor 8, L = 64 -> f = [1, 2.1665, 8, 8].
"""
from __future__ import annotations

import numpy as np

from minillm.model.rope import rope_frequencies

LLAMA3_DEFAULTS = {"low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192}


def freq_divisors(config) -> np.ndarray:
    """f_i = θ_i / θ'_i, float32 [D/2]: ``rope_freqs.weight`` as llama.cpp's converter writes it.
    A scaling whose low/high_freq_factor ``llama3_scaling`` could not read back is refused."""
    given = {k: config.rope_scaling[k] for k in ("low_freq_factor", "high_freq_factor")}
    if given != {k: LLAMA3_DEFAULTS[k] for k in given}:
        raise ValueError(f"GGUF stores Llama 3's RoPE scaling as divisors, read back for "
                         f"low_freq_factor 1 and high_freq_factor 4 (every Llama 3.x's); this "
                         f"config has {given}: not exported")
    plain = rope_frequencies(config.d_head, config.rope_theta)                        # [D/2]
    scaled = rope_frequencies(config.d_head, config.rope_theta, config.rope_scaling)  # [D/2]
    return (plain / scaled).astype(np.float32)


def read_divisors(g) -> np.ndarray | None:
    """A GGUF file's ``rope_freqs.weight`` [D/2] (None without one), its shape checked first."""
    info = g.tensors.get("rope_freqs.weight")
    if info is None:
        return None
    if len(info.shape) != 1 or info.shape[0] > 1 << 16:       # one per pair: a few dozen values
        raise ValueError(f"rope_freqs.weight has shape {info.shape}: one divisor per rotated "
                         f"pair expected")
    return g.tensor("rope_freqs.weight")


def llama3_scaling(divisors: np.ndarray, d_head: int, theta: float,
                   original_context_length: int | None) -> dict:
    """A GGUF file's ``rope_freqs.weight`` [D/2] -> the ``rope_scaling`` that gives it (see the
    module docstring), or a ValueError saying why none does."""
    divisors = np.asarray(divisors, dtype=np.float64)
    if divisors.shape != (d_head // 2,) or not np.all(np.isfinite(divisors)) \
            or divisors.min() < 1:
        raise ValueError(f"rope_freqs.weight must hold {d_head // 2} divisors >= 1 (one per "
                         f"rotated pair), got shape {divisors.shape}")
    scaling = {"rope_type": "llama3", "factor": float(np.float32(divisors.max())), **LLAMA3_DEFAULTS}
    if original_context_length is not None:
        scaling["original_max_position_embeddings"] = original_context_length
    if scaling["factor"] > 1:
        plain = rope_frequencies(d_head, theta)
        again = plain / rope_frequencies(d_head, theta, scaling)           # [D/2]
        if np.allclose(again, divisors, rtol=1e-5, atol=0):
            return scaling
    raise ValueError(f"rope_freqs.weight {np.round(divisors, 4).tolist()} is not Llama 3's RoPE "
                     f"scaling with low_freq_factor 1, high_freq_factor 4 and "
                     f"original_max_position_embeddings "
                     f"{scaling['original_max_position_embeddings']}: not supported")
