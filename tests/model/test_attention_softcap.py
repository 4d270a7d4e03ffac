"""Attention with its own scale and Gemma 2's logit soft-cap, in both forms (per head, all heads).

    weights = softmax(cap · tanh(scale · Q Kᵀ / cap) + M)

The scores are drawn large against a small cap, so the cap really bites: the test would fail for
the uncapped formula.
"""
import math

import numpy as np
from hypothesis import assume, given, strategies as st

from minillm.model.attention import attend_per_head, scaled_dot_product
from tests.model.strategies import attention_inputs


def capped_reference(q, k, v, mask, scale, cap):
    """The formula head by head in float64 (query head h uses KV head h // G): the output, the
    weights and the uncapped scores."""
    H, G = q.shape[1], q.shape[1] // k.shape[1]
    raw = np.stack([q[:, h].astype(np.float64) @ k[:, h // G].transpose(0, 2, 1)
                    for h in range(H)], axis=1) * scale                 # [B, H, T, S]
    scores = np.where(mask[:, None], cap * np.tanh(raw / cap), -np.inf)  # within (−cap, cap)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    weights = w / w.sum(-1, keepdims=True)                              # [B, H, T, S]
    kv = np.repeat(v.astype(np.float64), G, axis=1)     # [B, H, S, D]: head h gets v[:, h // G]
    return weights @ kv, weights, raw


@given(attention_inputs(), st.floats(0.5, 2.0), st.floats(0.25, 2.0))
def test_soft_capped_attention_is_cap_tanh_of_the_scaled_scores_in_both_forms(case, scale, cap):
    """Both forms give softmax(cap · tanh(scale · q·k / cap)) V (float64 reference, float32
    rounding allowed), and no two visible weights of a row differ by more than a factor e^(2·cap),
    which the uncapped scores of the same inputs do exceed."""
    q, k, v, mask, _ = case
    want, want_w, raw = capped_reference(q, k, v, mask, scale, cap)
    visible = np.broadcast_to(mask[:, None], raw.shape)
    spread = np.where(visible, raw, -np.inf).max(-1) + np.where(visible, -raw, -np.inf).max(-1)
    assume(spread.max() > 2 * cap + 1)        # uncapped, a row's weights differ by > e^(2·cap + 1)
    for form in (attend_per_head, scaled_dot_product):
        got, got_w = form(q, k, v, mask, scale=scale, softcap=cap)
        assert got.dtype == got_w.dtype == np.float32, form.__name__
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * np.abs(v).max(),
                                   err_msg=form.__name__)
        np.testing.assert_allclose(got_w, want_w, rtol=1e-5, atol=1e-7, err_msg=form.__name__)
        w = np.where(visible, got_w.astype(np.float64), np.nan)
        assert (np.nanmax(w, -1) <= np.nanmin(w, -1) * math.exp(2 * cap) * (1 + 1e-5)).all()
        assert not got_w[~visible].any()                                # the future: exactly 0
