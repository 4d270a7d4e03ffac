"""Finite-difference gradient checking shared by the training tests.

Central differences in float64: ∂f/∂θᵢ ≈ (f(θ + h eᵢ) − f(θ − h eᵢ)) / 2h, error O(h²) + O(ε/h);
with h = 1e-6 both terms are ~1e-10. The relative error of a tensor is
max |analytic − numeric| / max(max |numeric|, 0.01 · G, 1e-6) over its checked entries, G the largest
numeric gradient of the whole check: normalised by the tensor's gradient scale rather than entry by
entry, and never by less than a hundredth of the problem's scale, because some true gradients are
exactly 0 (the key bias: adding a constant to every key shifts a softmax row, which changes
nothing) and there the finite difference is pure rounding noise (~1e-16 · |f| / h).
"""
import numpy as np

H = 1e-6
TOLERANCE = 1e-5


def numeric_grad(f, array: np.ndarray, entries) -> np.ndarray:
    """Central differences of the scalar f() with respect to array[entries] (array changed in place)."""
    out = np.empty(len(entries))
    for n, idx in enumerate(entries):
        old = array[idx]
        array[idx] = old + H
        plus = f()
        array[idx] = old - H
        minus = f()
        array[idx] = old
        out[n] = (plus - minus) / (2 * H)
    return out


def sample_entries(shape, rng: np.random.Generator, k: int = 12) -> list[tuple]:
    """Up to k distinct multi-indices of an array of this shape."""
    size = int(np.prod(shape))
    flat = rng.choice(size, size=min(k, size), replace=False)
    return [np.unravel_index(i, shape) for i in flat]


def relative_error(analytic: np.ndarray, numeric: np.ndarray, scale: float) -> float:
    return float(np.abs(analytic - numeric).max() / max(np.abs(numeric).max(), 0.01 * scale, 1e-6))


def check(f, arrays: dict, grads: dict, rng: np.random.Generator, k: int = 12) -> None:
    """Assert that grads[name] matches finite differences of f for every array."""
    results = {}
    for name, array in arrays.items():
        entries = sample_entries(array.shape, rng, k)
        numeric = numeric_grad(f, array, entries)
        results[name] = (np.array([grads[name][idx] for idx in entries]), numeric)
    scale = max(np.abs(numeric).max() for _, numeric in results.values())
    for name, (analytic, numeric) in results.items():
        err = relative_error(analytic, numeric, scale)
        assert err <= TOLERANCE, f"{name}: relative error {err:.2e} > {TOLERANCE}"
