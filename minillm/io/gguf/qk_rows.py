"""Q and K row order: Hugging Face's rotate-half RoPE vs llama.cpp's adjacent pairs.

RoPE rotates pairs of a head's dimensions. Hugging Face's Llama pairs dimension j with j + D/2
("rotate half"); llama.cpp pairs 2j with 2j + 1. The two are the same model once the rows of
W_q and W_k are reordered, which is what llama.cpp's converter does for ``llama`` (not for
``qwen2``, whose GGUF keeps Hugging Face's order). The loader undoes it (``unpermute_qk``), the
exporter redoes it (``permute_qk``).
"""
from __future__ import annotations

import numpy as np

from minillm.families import families

# the architectures whose converter permutes Q/K rows for adjacent-pair RoPE ("llama",
# "smollm3"): each family module says so (``gguf_permuted_qk``)
PERMUTED_QK = tuple(a for f in families().values() if f.gguf_permuted_qk
                    for a in f.gguf_architectures)


def permute_qk(w: np.ndarray, n_heads: int) -> np.ndarray:
    """HF rotate-half row order -> llama.cpp adjacent-pair order (what the converter writes).

    w: [n_heads·D, ...] (a weight [out, in] or a bias [out]); within each head row s·D/2 + j
    moves to 2j + s. Example, one head of D = 4: rows [a, b, c, d] -> [a, c, b, d].
    """
    D = _head_width(w, n_heads)
    heads = w.reshape(n_heads, 2, D // 2, *w.shape[1:])            # [h, s, j, ...]
    return heads.swapaxes(1, 2).reshape(w.shape)                    # [h, j, s, ...] -> [h·D, ...]


def unpermute_qk(w: np.ndarray, n_heads: int) -> np.ndarray:
    """llama.cpp adjacent-pair row order -> HF rotate-half order: the inverse of ``permute_qk``.

    Example, one head of D = 4: rows [a, c, b, d] -> [a, b, c, d].
    """
    D = _head_width(w, n_heads)
    heads = w.reshape(n_heads, D // 2, 2, *w.shape[1:])            # [h, j, s, ...]
    return heads.swapaxes(1, 2).reshape(w.shape)                    # [h, s, j, ...] -> [h·D, ...]


def _head_width(w: np.ndarray, n_heads: int) -> int:
    if w.shape[0] % n_heads or (w.shape[0] // n_heads) % 2:
        raise ValueError(f"{w.shape[0]} rows do not split into {n_heads} heads of even width")
    return w.shape[0] // n_heads
