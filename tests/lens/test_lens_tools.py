"""The lens tools (minillm/lens/): each one's defining identity, on tiny random models of both
variants (GPT-2: LayerNorm, biases, tied head; Llama: RMSNorm, RoPE, grouped-query attention,
untied heads, q/k norms)."""
import copy

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from minillm import GPT
from minillm.functional import softmax
from minillm.lens import (ablate_heads, copying_scores, direct_logit_attribution, lens_table,
                          logit_lens, patch_activations, patch_residual, prefix_matching_score,
                          prefix_matching_scores, repeated_random_tokens)

from tests.model.strategies import random_model, tiny_configs



def model_and_ids(config, seed, T):
    model = random_model(config, seed)
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, size=min(T, config.n_ctx))
    return model, ids


@given(config=tiny_configs(), seed=st.integers(0, 100), T=st.integers(1, 8))
def test_the_logit_lens_at_the_last_layer_is_the_models_logits(config, seed, T):
    model, ids = model_and_ids(config, seed, T)
    lens = logit_lens(model, ids)                                   # [L + 1, T, V]
    assert lens.shape == (config.n_layers + 1, len(ids), config.vocab_size)
    assert lens.dtype == np.float32
    np.testing.assert_allclose(lens[-1], model(ids), rtol=0, atol=1e-5)
    np.testing.assert_allclose(logit_lens(model, ids, probs=True), softmax(lens), atol=1e-6)


@given(config=tiny_configs(), seed=st.integers(0, 100), T=st.integers(1, 8))
def test_the_lens_table_is_the_top_token_of_each_row(config, seed, T):
    model, ids = model_and_ids(config, seed, T)
    top, prob = lens_table(model, ids)                              # [L + 1, T] each
    p = logit_lens(model, ids, probs=True)
    np.testing.assert_array_equal(top, p.argmax(-1))
    np.testing.assert_allclose(prob, p.max(-1), atol=1e-7)
    np.testing.assert_array_equal(top[-1], model(ids).argmax(-1))


@given(config=tiny_configs(), seed=st.integers(0, 100), T=st.integers(1, 8),
       data=st.data())
def test_direct_logit_attribution_sums_to_the_logit(config, seed, T, data):
    """With the final norm's scale frozen at the clean run's value the readout is linear, so the
    embedding's, every attention's and every FFN's shares (and the norm's bias) sum to the logit;
    each attention's heads (and its W_O bias) sum to that attention's share."""
    model, ids = model_and_ids(config, seed, T)
    token = data.draw(st.integers(0, config.vocab_size - 1))
    position = data.draw(st.integers(-len(ids), len(ids) - 1))
    a = direct_logit_attribution(model, ids, token, position)
    assert a.logit == pytest.approx(float(model(ids)[position, token]), abs=1e-5)
    scale = float(1 + abs(a.embed) + np.abs(a.attn).sum() + np.abs(a.ffn).sum() + abs(a.norm_bias))
    assert a.total() == pytest.approx(a.logit, abs=1e-5 * scale)
    np.testing.assert_allclose(a.heads.sum(1) + a.attn_bias, a.attn, atol=1e-5 * scale)
    assert a.heads.shape == (config.n_layers, config.n_heads)


def test_direct_logit_attribution_refuses_a_soft_capped_readout():
    from minillm.config import ModelConfig
    config = ModelConfig(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_layers=1, final_softcap=30.0)
    with pytest.raises(ValueError, match="soft-caps"):
        direct_logit_attribution(GPT(config), np.array([1, 2]), token=3)


def with_head_rewritten(model, layer, head, bias_from=None):
    """A copy of ``model`` whose head writes nothing (its rows of W_O zero), plus optionally a
    constant: W_O's bias grows by ``bias_from`` [D] · the head's old rows."""
    params = copy.deepcopy(model.params)
    D = model.config.d_head
    attn = params.blocks[layer].attn
    rows = attn.wo[head * D:(head + 1) * D].copy()                  # [D, C]
    attn.wo[head * D:(head + 1) * D] = 0.0
    if bias_from is not None:
        extra = bias_from @ rows                                    # [D] @ [D, C] -> [C]
        attn.bo = attn.bo + extra
    return GPT(model.config, params)


@given(config=tiny_configs(), seed=st.integers(0, 100), T=st.integers(1, 8), data=st.data())
def test_zero_ablating_a_head_is_zeroing_its_rows_of_the_output_projection(config, seed, T, data):
    model, ids = model_and_ids(config, seed, T)
    layer = data.draw(st.integers(0, config.n_layers - 1))
    head = data.draw(st.integers(0, config.n_heads - 1))
    np.testing.assert_allclose(ablate_heads(model, ids, [(layer, head)]),
                               with_head_rewritten(model, layer, head)(ids), atol=1e-5)


@given(config=tiny_configs(), seed=st.integers(0, 100), T=st.integers(1, 8), data=st.data())
def test_mean_ablating_a_head_is_a_constant_output_of_its_mean(config, seed, T, data):
    """Mean ablation writes the head's average output (over the reference's rows and positions)
    at every position: the same as a model whose head is silent and whose W_O bias adds it
    (GPT-2's variant: W_O has a bias to hold it)."""
    model, ids = model_and_ids(config, seed, T)
    assume(model.params.blocks[0].attn.bo is not None)
    layer = data.draw(st.integers(0, config.n_layers - 1))
    head = data.draw(st.integers(0, config.n_heads - 1))
    reference = np.random.default_rng(seed + 7).integers(0, config.vocab_size, size=(2, 5))
    _, acts = model.run_with_cache(reference, names=[f"blocks.{layer}.attn.hook_z"])
    mean = acts[f"blocks.{layer}.attn.hook_z"][:, :, head].mean(axis=(0, 1))   # [D]
    np.testing.assert_allclose(
        ablate_heads(model, ids, [(layer, head)], kind="mean", reference=reference),
        with_head_rewritten(model, layer, head, bias_from=mean)(ids), atol=1e-4)


@given(config=tiny_configs(), seed=st.integers(0, 100), T=st.integers(1, 8))
def test_patching_every_activation_gives_the_clean_logits(config, seed, T):
    model, clean = model_and_ids(config, seed, T)
    corrupt = np.random.default_rng(seed + 1).integers(0, config.vocab_size, size=clean.shape)
    np.testing.assert_array_equal(patch_activations(model, clean, corrupt)[0], model(clean))


@given(config=tiny_configs(), seed=st.integers(0, 100), T=st.integers(1, 8))
def test_patching_nothing_gives_the_corrupted_logits(config, seed, T):
    model, clean = model_and_ids(config, seed, T)
    corrupt = np.random.default_rng(seed + 1).integers(0, config.vocab_size, size=clean.shape)
    np.testing.assert_array_equal(patch_activations(model, clean, corrupt, names=[])[0],
                                  model(corrupt))


@given(config=tiny_configs(), seed=st.integers(0, 100), T=st.integers(2, 8), data=st.data())
def test_residual_patching_at_layer_0_is_exact_where_the_prompts_agree_and_differ(config, seed, T, data):
    """Prompts that differ at one position p: at layer 0 the streams are the embeddings, so
    patching position p gives the clean run whole, and patching any other position changes
    nothing. Later layers' cells lie between (not checked: they are the finding, not a law)."""
    model, clean = model_and_ids(config, seed, T)
    T = len(clean)
    assume(T >= 2)
    p = data.draw(st.integers(0, T - 1))
    corrupt = clean.copy()
    corrupt[p] = (clean[p] + data.draw(st.integers(1, config.vocab_size - 1))) % config.vocab_size
    token = data.draw(st.integers(0, config.vocab_size - 1))
    grid = patch_residual(model, clean, corrupt, token, layers=[0])  # [1, T]
    assert grid.shape == (1, T)
    assert grid[0, p] == pytest.approx(float(model(clean)[-1, token]), abs=1e-5)
    others = np.delete(grid[0], p)
    np.testing.assert_allclose(others, float(model(corrupt)[-1, token]), atol=1e-5)


@given(config=tiny_configs(), seed=st.integers(0, 100), T=st.integers(1, 6), chunk=st.booleans())
def test_residual_patching_batched_equals_one_patched_run_per_cell(config, seed, T, chunk):
    """The T runs of a layer go as rows of one batch (or chunks of it): each cell equals its own
    run with that one (layer, position) patched, so batching changes nothing."""
    import minillm.lens.patching as patching
    model, clean = model_and_ids(config, seed, T)
    corrupt = np.random.default_rng(seed + 1).integers(0, config.vocab_size, size=clean.shape)
    _, acts = model.run_with_cache(clean)
    metric = lambda logits: float(logits[0, -1].max() - logits[0, -1, 0])   # a logit difference
    rows = patching.ROWS_CELLS
    patching.ROWS_CELLS = 1 if chunk else rows                      # one position per forward
    try:
        grid = patch_residual(model, clean, corrupt, metric)
    finally:
        patching.ROWS_CELLS = rows
    for l in range(config.n_layers):
        name = f"blocks.{l}.hook_resid_pre"
        for t in range(len(clean)):
            def patch(x, _name, t=t):
                x = x.copy()
                x[:, t] = acts[name][:, t]
                return x
            one = model.run_with_hooks(corrupt[None], {name: patch})  # [1, T, V]
            assert grid[l, t] == pytest.approx(metric(one), abs=1e-4)


@given(n=st.integers(1, 10), offset=st.integers(0, 3), extra=st.integers(0, 3))
def test_a_perfect_induction_pattern_scores_one_and_a_uniform_one_its_mean_weight(n, offset, extra):
    T = offset + 2 * n + extra
    perfect = np.zeros((T, T), np.float32)
    perfect[np.arange(T), 0] = 1.0                                  # (rows outside the repeat)
    t = np.arange(offset + n, offset + 2 * n)
    perfect[t] = 0.0
    perfect[t, t - n + 1] = 1.0                                     # the key after the first copy
    assert prefix_matching_score(perfect, n, offset) == pytest.approx(1.0)
    uniform = np.tril(np.ones((T, T), np.float32)) / np.arange(1, T + 1)[:, None]
    assert prefix_matching_score(uniform, n, offset) == pytest.approx(float(np.mean(1 / (t + 1))))


@given(config=tiny_configs(), seed=st.integers(0, 100), n=st.integers(1, 4))
def test_prefix_matching_scores_are_each_heads_mean_weight_in_0_1(config, seed, n):
    model = random_model(config, seed)
    assume(2 * n <= config.n_ctx)
    ids = repeated_random_tokens(config.vocab_size, n, batch=2, seed=seed)
    scores = prefix_matching_scores(model, ids, n)
    assert scores.shape == (config.n_layers, config.n_heads)
    assert np.all((scores >= 0) & (scores <= 1 + 1e-6))
    _, w = model(ids, return_weights=True)                          # L × [B, H, T, S]
    np.testing.assert_allclose(scores, [prefix_matching_score(x, n).mean(0) for x in w], atol=1e-6)


def test_repeated_random_tokens_repeat_after_the_prefix():
    ids = repeated_random_tokens(50, 6, batch=3, seed=4, prefix=[49])
    assert ids.shape == (3, 13) and ids.dtype == np.int64
    np.testing.assert_array_equal(ids[:, 1:7], ids[:, 7:])
    assert (ids[:, 0] == 49).all() and ids.min() >= 0 and ids.max() < 50
    np.testing.assert_array_equal(ids, repeated_random_tokens(50, 6, batch=3, seed=4, prefix=[49]))


@given(config=tiny_configs(), seed=st.integers(0, 100), data=st.data(),
       factor=st.floats(0.1, 10.0))
def test_negating_a_heads_output_negates_its_copying_score(config, seed, data, factor):
    """The OV circuit is linear in W_O: −W_O negates every eigenvalue (so the score), a positive
    factor scales them all (the score is unchanged); the score lies in [−1, 1]."""
    model = random_model(config, seed)
    layer = data.draw(st.integers(0, config.n_layers - 1))
    head = data.draw(st.integers(0, config.n_heads - 1))
    scores = copying_scores(model)
    assert scores.shape == (config.n_layers, config.n_heads)
    assert np.all(np.abs(scores) <= 1 + 1e-6)
    D = config.d_head
    for k, expected in ((-1.0, -scores[layer, head]), (factor, scores[layer, head])):
        params = copy.deepcopy(model.params)
        params.blocks[layer].attn.wo[head * D:(head + 1) * D] *= np.float32(k)
        assert copying_scores(GPT(config, params))[layer, head] == pytest.approx(expected, abs=1e-4)


def test_a_head_whose_ov_circuit_is_the_identity_copies():
    """W_E W_V W_O W_U = identity-like (orthonormal embeddings, W_V W_O = I): score 1."""
    from minillm.config import ModelConfig
    config = ModelConfig(vocab_size=4, n_ctx=8, d_model=4, n_heads=1, n_layers=1, arch="llama")
    model = GPT(config, seed=0)
    p = model.params
    p.wte[...] = np.eye(4, dtype=np.float32)
    for g in (p.norm_f.weight, p.blocks[0].norm1.weight):
        g[...] = 1.0
    p.blocks[0].attn.wv[...] = np.eye(4, dtype=np.float32)
    p.blocks[0].attn.wo[...] = np.eye(4, dtype=np.float32)
    assert copying_scores(model)[0, 0] == pytest.approx(1.0)


@pytest.mark.parametrize("call, message", [
    (lambda m: logit_lens(m, np.array([[0.5]])), "integer token ids"),
    (lambda m: lens_table(m, np.zeros((2, 3), int)), "one sequence"),
    (lambda m: direct_logit_attribution(m, np.array([1, 2]), token=99), "token must be"),
    (lambda m: direct_logit_attribution(m, np.array([1, 2]), token=1, position=2), "position must"),
    (lambda m: ablate_heads(m, np.array([1, 2]), [(0, 5)]), "head must be"),
    (lambda m: ablate_heads(m, np.array([1, 2]), [(0, 0)], kind="max"), "kind must be"),
    (lambda m: ablate_heads(m, np.array([1, 2]), [0]), r"\(layer, head\) pairs"),
    (lambda m: patch_activations(m, np.array([1, 2]), np.array([1, 2, 3])), "same shape"),
    (lambda m: patch_activations(m, np.array([1]), np.array([2]), names=["blocks.9.x"]), "no hook point"),
    (lambda m: patch_residual(m, np.array([1]), np.array([2]), 1, layers=[3]), "layers must"),
    (lambda m: patch_residual(m, np.array([1]), np.array([2]), "x"), "metric must"),
    (lambda m: prefix_matching_scores(m, np.arange(4), 3), "offset"),
    (lambda m: repeated_random_tokens(0, 3), "vocab_size"),
])
def test_bad_arguments_are_clear_errors(call, message):
    from minillm.config import ModelConfig
    model = GPT(ModelConfig(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_layers=2))
    with pytest.raises((ValueError, TypeError), match=message):
        call(model)
