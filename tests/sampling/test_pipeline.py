"""The Sampler: presets from the explainer articles' table, validation, order, history handling, batching."""
import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.sampling import PRESETS, Sampler, apply_temperature, min_p, top_k, top_p
from tests.sampling.strategies import logits, probs64


def test_presets_match_the_explainer_articles_table():
    """任务 Temperature Top-K Top-P: 代码生成 0.2 50 0.9 · 事实问答 0.7 40 0.85 ·
    日常对话 0.8 50 0.9 · 创意写作 1.0 0 0.95 (top-k 0 = off)."""
    table = {"code": (0.2, 50, 0.9), "qa": (0.7, 40, 0.85), "chat": (0.8, 50, 0.9),
             "creative": (1.0, 0, 0.95)}
    got = {name: (s.temperature, s.top_k, s.top_p) for name, s in PRESETS.items()}
    assert got == table
    s = Sampler.from_preset("chat", top_k=20, min_p=0.05)
    assert (s.temperature, s.top_k, s.top_p, s.min_p) == (0.8, 20, 0.9, 0.05)
    assert PRESETS["chat"].top_k == 50                                     # preset untouched


@pytest.mark.parametrize("kwargs, message", [
    ({"temperature": -0.5}, "temperature"), ({"top_p": 0.0}, "top_p"), ({"top_p": 1.2}, "top_p"),
    ({"top_k": -1}, "top_k"), ({"min_p": 1.5}, "min_p"), ({"min_p": -0.01}, "min_p"),
    ({"repetition_penalty": 0.0}, "repetition_penalty"), ({"allowed_ids": ()}, "allowed_ids"),
    ({"frequency_penalty": float("inf")}, "frequency_penalty"),
    ({"logit_bias": {0: float("nan")}}, "logit_bias"),
])
def test_bad_settings_raise_at_construction(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Sampler(**kwargs)
    with pytest.raises(ValueError, match=message):
        Sampler.from_preset("code", **kwargs)


def test_unknown_preset_names_the_choices():
    with pytest.raises(ValueError, match="chat"):
        Sampler.from_preset("poetry")


@pytest.mark.parametrize("bad", [[0.0, np.nan, 1.0], [0.0, np.inf, 1.0], [-np.inf] * 3])
def test_bad_logits_raise(bad):
    z = np.array(bad, np.float32)
    with pytest.raises(ValueError):
        Sampler().probs(z)
    with pytest.raises(ValueError):
        Sampler().sample(z, np.random.default_rng(0))


def test_everything_masked_by_the_allowed_set_raises():
    z = np.array([0.0, -np.inf, 1.0], np.float32)
    with pytest.raises(ValueError, match="-inf"):
        Sampler(allowed_ids=(1,)).probs(z)


@given(logits(batch=True), st.integers(0, 6), st.floats(0.05, 1.0), st.floats(0.0, 0.9),
       st.sampled_from([0.0, 0.3, 1.0, 1.7]))
def test_pipeline_is_the_documented_composition(z, k, p, m, T):
    s = Sampler(temperature=T, top_k=k, top_p=p, min_p=m)
    want = min_p(top_p(top_k(apply_temperature(z, T), k), p), m)
    np.testing.assert_array_equal(s.process(z), want)



@given(logits(batch=True), st.sampled_from([0.5, 1.0, 2.0]), st.integers(0, 1_000))
def test_top_k_1_keeps_the_argmax_alone_at_any_temperature(z, T, seed):
    """Sampler(top_k=1) keeps one token per row, the lowest-id argmax (top_k's rule), and draws it."""
    s = Sampler(temperature=T, top_k=1)
    kept = np.isfinite(s.process(z))                                   # [B, V]
    assert (kept.sum(axis=-1) == 1).all()
    np.testing.assert_array_equal(kept.argmax(axis=-1), z.argmax(axis=-1))
    np.testing.assert_array_equal(s.sample(z, np.random.default_rng(seed)), z.argmax(axis=-1))

@given(logits(batch=True), st.integers(0, 6), st.floats(0.05, 1.0), st.floats(0.0, 0.9))
def test_kept_probabilities_stay_proportional(z, k, p, m):
    probs = Sampler(top_k=k, top_p=p, min_p=m).probs(z).astype(np.float64)     # [B, V]
    ref = probs64(z)                                                            # [B, V]
    keep = probs > 0
    renorm = np.where(keep, ref, 0) / np.where(keep, ref, 0).sum(-1, keepdims=True)
    np.testing.assert_allclose(probs, renorm, rtol=1e-5, atol=1e-7)


@given(logits(batch=True), st.sampled_from(list(PRESETS)), st.integers(0, 2**32 - 1))
def test_batched_sample_equals_row_by_row(z, name, seed):
    s = PRESETS[name]
    batched = s.sample(z, np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    np.testing.assert_array_equal(batched, [s.sample(row, rng) for row in z])
    np.testing.assert_array_equal(batched, s.sample(z, np.random.default_rng(seed)))


def test_temperature_zero_is_greedy_and_uses_no_randomness():
    z = np.array([[1.0, 3.0, 3.0], [0.0, -1.0, 5.0]], np.float32)
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    np.testing.assert_array_equal(Sampler(temperature=0).sample(z, rng), [1, 2])
    assert rng.bit_generator.state == before
    assert Sampler.from_preset("code", temperature=0).sample(z[0], None) == 1


def test_penalties_count_the_prompt_as_documented():
    """history [0, 1 | 2, 2] (prompt_len 2): repetition sees {0, 1, 2}; frequency sees [2, 2]."""
    z = np.full(4, 2.0, np.float32)
    s = Sampler(repetition_penalty=2.0)
    out = s.process(z, [0, 1, 2, 2], prompt_len=2) + 2.0            # undo temperature's shift
    np.testing.assert_array_equal(out, [1, 1, 1, 2])
    out = dataclasses.replace(s, repetition_includes_prompt=False).process(z, [0, 1, 2, 2], 2)
    np.testing.assert_array_equal(out + 2.0, [2, 2, 1, 2])
    f = Sampler(frequency_penalty=0.5)
    np.testing.assert_array_equal(f.process(z, [0, 1, 2, 2], 2), [0, 0, -1, 0])
    f = Sampler(frequency_penalty=0.5, frequency_includes_prompt=True)
    np.testing.assert_array_equal(f.process(z, [0, 1, 2, 2], 2), [-0.5, -0.5, -1, 0])


def test_prompt_longer_than_the_history_raises():
    with pytest.raises(ValueError, match="prompt_len"):
        Sampler(presence_penalty=1.0).process(np.zeros(3, np.float32), [0, 1], prompt_len=3)


def test_batched_histories_and_per_row_prompt_lengths():
    z = np.zeros((2, 3), np.float32)
    s = Sampler(presence_penalty=1.0)
    out = s.process(z, [[0, 1], [2, 2, 1]], prompt_len=[1, 0])
    np.testing.assert_array_equal(out, [[0, -1, 0], [0, -1, -1]])   # row 0 sees [1]; row 1 [2, 2, 1]


def test_logit_bias_and_allowed_ids_in_the_pipeline():
    z = np.zeros(4, np.float32)
    probs = Sampler(allowed_ids=(1, 3), logit_bias={3: np.log(3.0)}).probs(z)
    np.testing.assert_allclose(probs, [0, 0.25, 0, 0.75], rtol=1e-6)
    assert probs.dtype == np.float32
