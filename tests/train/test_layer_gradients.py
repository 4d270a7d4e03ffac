"""Each layer's hand-written backward vs central finite differences (float64, tiny random shapes).

Every test builds L = Σ y ⊙ R for a random R, so ∂L/∂y = R is what the backward receives.
Tolerance: relative error ≤ 1e-5 (see gradcheck.py).
"""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from minillm.model.attention import causal_mask
from minillm.model.ffn import gelu_tanh
from minillm.model.norm import layer_norm
from minillm.model.params import AttentionParams, FFNParams
from minillm.config import ModelConfig
from minillm.train.grad_attention import attention_backward, attention_forward, softmax_backward
from minillm.train.grad_ffn import gelu_mlp_backward, gelu_mlp_forward, gelu_tanh_backward
from minillm.train.grad_model import cross_entropy_with_grad
from minillm.train.grad_norm import layer_norm_backward
from minillm.functional import cross_entropy, softmax
from tests.train.gradcheck import check

seeds = st.integers(0, 2**31 - 1)


@given(seeds, st.integers(1, 3), st.integers(1, 4), st.integers(3, 8))
def test_layer_norm_backward_matches_finite_differences(seed, B, T, C):
    rng = np.random.default_rng(seed)
    x, w, b = rng.normal(size=(B, T, C)), rng.normal(size=C), rng.normal(size=C)
    R = rng.normal(size=(B, T, C))
    dx, dw, db = layer_norm_backward(R, x, w, 1e-5)
    check(lambda: float((layer_norm(x, w, b, 1e-5) * R).sum()), {"x": x, "w": w, "b": b},
          {"x": dx, "w": dw, "b": db}, rng)


@given(seeds, st.integers(1, 20))
def test_gelu_backward_matches_finite_differences(seed, n):
    rng = np.random.default_rng(seed)
    h = rng.uniform(-4, 4, size=n)     # subtle: beyond ~−5, 1 + tanh u cancels to noise in float64
    R = rng.normal(size=n)
    check(lambda: float((gelu_tanh(h) * R).sum()), {"h": h}, {"h": gelu_tanh_backward(R, h.copy())}, rng)


@given(seeds, st.integers(1, 5))
def test_softmax_backward_matches_finite_differences(seed, S):
    rng = np.random.default_rng(seed)
    s, R = rng.normal(size=(2, S)), rng.normal(size=(2, S))
    check(lambda: float((softmax(s) * R).sum()), {"s": s}, {"s": softmax_backward(R, softmax(s))}, rng)


@given(seeds, st.integers(1, 3), st.integers(1, 4), st.sampled_from([2, 4]), st.sampled_from([4, 8]))
def test_gelu_mlp_backward_matches_finite_differences(seed, B, T, C, F):
    rng = np.random.default_rng(seed)
    p = FFNParams(w_up=rng.normal(size=(C, F)), w_down=rng.normal(size=(F, C)),
                  b_up=rng.normal(size=F), b_down=rng.normal(size=C))
    x, R = rng.normal(size=(B, T, C)), rng.normal(size=(B, T, C))
    _, cache = gelu_mlp_forward(x, p)
    dx, grads = gelu_mlp_backward(R, cache, p)
    arrays = {"x": x, **{k: getattr(p, k) for k in grads}}
    check(lambda: float((gelu_mlp_forward(x, p)[0] * R).sum()), arrays, {"x": dx, **grads}, rng)


@given(seeds, st.integers(1, 2), st.integers(1, 5), st.sampled_from([1, 2]), st.sampled_from([2, 4]))
def test_attention_backward_matches_finite_differences(seed, B, T, H, D):
    """Softmax with the causal mask included: future positions must get exactly their true
    gradient, zero."""
    rng = np.random.default_rng(seed)
    C = H * D
    config = ModelConfig(vocab_size=5, n_ctx=8, d_model=C, n_heads=H, n_layers=1)
    p = AttentionParams(**{k: rng.normal(size=(C, C)) for k in ("wq", "wk", "wv", "wo")},
                        **{k: rng.normal(size=C) for k in ("bq", "bk", "bv", "bo")})
    mask = causal_mask(T, T)[None]
    x, R = rng.normal(size=(B, T, C)), rng.normal(size=(B, T, C))
    _, cache = attention_forward(x, p, config, mask)
    dx, grads = attention_backward(R, cache, p, config)
    arrays = {"x": x, **{k: getattr(p, k) for k in grads}}
    check(lambda: float((attention_forward(x, p, config, mask)[0] * R).sum()), arrays,
          {"x": dx, **grads}, rng)


def test_attention_gives_the_future_no_gradient():
    """Changing the last position's input cannot change earlier outputs: dx[:, -1] is 0 when only
    the earlier outputs carry a gradient."""
    rng = np.random.default_rng(0)
    C, T = 4, 5
    config = ModelConfig(vocab_size=5, n_ctx=8, d_model=C, n_heads=2, n_layers=1)
    p = AttentionParams(**{k: rng.normal(size=(C, C)) for k in ("wq", "wk", "wv", "wo")},
                        **{k: rng.normal(size=C) for k in ("bq", "bk", "bv", "bo")})
    x = rng.normal(size=(1, T, C))
    R = rng.normal(size=(1, T, C))
    R[:, -1] = 0
    _, cache = attention_forward(x, p, config, causal_mask(T, T)[None])
    dx, _ = attention_backward(R, cache, p, config)
    assert np.all(dx[:, -1] == 0)


@given(seeds, st.integers(1, 6), st.integers(2, 9))
def test_cross_entropy_grad_matches_finite_differences(seed, N, V):
    rng = np.random.default_rng(seed)
    logits, targets = rng.normal(size=(N, V)), rng.integers(0, V, N)
    loss, dlogits = cross_entropy_with_grad(logits, targets)
    assert abs(loss - cross_entropy(logits, targets)) < 1e-12     # the same number as the model's
    check(lambda: cross_entropy(logits, targets), {"logits": logits}, {"logits": dlogits}, rng)


def test_float32_stays_float32():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    w, b = np.ones(4, np.float32), np.zeros(4, np.float32)
    assert all(a.dtype == np.float32 for a in layer_norm_backward(x, x, w, 1e-5))
    assert gelu_tanh_backward(x, x.copy()).dtype == np.float32
