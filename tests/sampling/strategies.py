"""Hypothesis strategies shared by the sampling tests: logits with ties and masked entries."""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# A few repeated values make ties common; -inf entries are "already masked" tokens.
_values = st.one_of(st.floats(-8.0, 8.0, width=32), st.sampled_from([0.0, 1.0, 2.5, -np.inf]))


@st.composite
def logits(draw, batch: bool = False, max_v: int = 10):
    """float32 logits [V] (or [B, V]) with at least one finite entry per row."""
    v = draw(st.integers(1, max_v))
    shape = (draw(st.integers(1, 3)), v) if batch else (v,)
    z = draw(hnp.arrays(np.float32, shape, elements=_values))
    finite = np.isfinite(z).any(axis=-1, keepdims=True)           # [..., 1]
    return np.where(finite, z, np.float32(0.0))                    # rows all -inf -> zeros


def probs64(z: np.ndarray) -> np.ndarray:
    """Reference softmax in float64 (kept tokens' probabilities)."""
    z = z.astype(np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def order_desc(z: np.ndarray) -> list[int]:
    """Ids by logit descending, ties by lower id: written independently of the module."""
    return sorted(range(len(z)), key=lambda i: (-float(z[i]), i))
