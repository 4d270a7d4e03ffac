"""The sliding window (Mistral; Gemma's local layers): its mask is the definition, generation past
W tokens through the cache equals recomputing, the engine equals the model (a step, a prefill in
query blocks, a padded batch), and the engine's decode step reads at most W keys of a sliding
layer, whatever the length. Parity with transformers: tests/model/test_gemma.py."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import KVCache
from minillm.config import ModelConfig
from minillm.decoding.batch import generate_batch
from minillm.decoding.generate import generate
from minillm.engine import layers as engine_layers
from minillm.io.hf.config import from_hf_dict
from minillm.model.attention import causal_mask
from minillm.model.variants import window_mask, window_start
from tests.model.strategies import random_model


def config_with(W, types, **more):
    return ModelConfig(vocab_size=32, n_ctx=64, d_model=16, n_heads=4, n_kv_heads=2,
                       n_layers=len(types), arch="llama", sliding_window=W, layer_types=types,
                       **more)


GEMMA = dict(ffn="geglu", sandwich_norms=True, embed_scale=True, qk_norm=True, head_dim=8,
             query_pre_attn_scalar=12.0, attn_softcap=3.0, final_softcap=5.0,
             rope_local_theta=100.0)
layer_types = st.lists(st.sampled_from(["sliding", "full"]), min_size=1, max_size=3)


@given(st.integers(1, 12), st.integers(1, 12), st.integers(0, 12))
def test_window_mask_is_the_definition(W, T, cached):
    """Query t at slot p = cached + t sees key s iff p − W < s ≤ p (transformers' boundary)."""
    S = cached + T
    got = causal_mask(T, S) & window_mask(T, S, W)
    want = np.array([[cached + t - W < s <= cached + t for s in range(S)] for t in range(T)])
    np.testing.assert_array_equal(got, want)
    assert got.sum(axis=1).max() == min(W, S)                   # never more than W keys
    start = window_start(S, T, W)
    assert not got[:, :start].any() and (start == 0 or got[0, start])


@given(st.integers(1, 6), layer_types, st.booleans(), st.integers(0, 50))
def test_decoding_past_the_window_equals_recomputing(W, types, gemma, seed):
    config = config_with(W, tuple(types), **(GEMMA if gemma else {}))
    model = random_model(config, seed)
    ids = np.random.default_rng(seed).integers(0, 32, (2, 20))
    want = model(ids)                                                # [2, 20, V] no cache
    bound = 1e-4 * float(np.abs(want).max())
    for m in (model, random_model(config, seed, "rows")):            # the model, the engine
        assert np.abs(m(ids) - want).max() <= bound
        cache = KVCache(config, batch_size=2, capacity=20)
        steps = [m(ids[:, :3], cache=cache)] + [m(ids[:, t:t + 1], cache=cache)
                                                for t in range(3, 20)]
        assert np.abs(np.concatenate(steps, axis=1) - want).max() <= bound


@pytest.mark.parametrize("gemma", [False, True])
def test_the_engines_query_blocks_skip_only_keys_out_of_the_window(gemma, monkeypatch):
    config = config_with(5, ("sliding", "full", "sliding"), **(GEMMA if gemma else {}))
    ids = np.random.default_rng(0).integers(0, 32, (1, 40))
    want = random_model(config, 3)(ids)
    monkeypatch.setattr(engine_layers, "QUERY_BLOCK", 4)             # 10 blocks of 4 queries
    got = random_model(config, 3, "rows")(ids)
    assert np.abs(got - want).max() <= 1e-4 * float(np.abs(want).max())


def test_a_decode_step_reads_at_most_w_keys_of_a_sliding_layer(monkeypatch):
    """The cost of a step stays flat past W: a sliding layer's scores are [.., 1, ≤ W], a full
    layer's grow with the length."""
    config = config_with(4, ("sliding", "full"))
    model = random_model(config, 0, "rows")
    seen = []
    real = engine_layers.scaled_dot_product
    monkeypatch.setattr(engine_layers, "scaled_dot_product",
                        lambda q, k, *a: seen.append(k.shape[2]) or real(q, k, *a))
    cache = KVCache(config, batch_size=1, capacity=30)
    model(np.arange(10)[None], cache=cache)
    seen.clear()
    for t in range(10, 30):
        model(np.array([[t]]), cache=cache)
    sliding, full = seen[0::2], seen[1::2]
    assert sliding == [4] * 20 and full == list(range(11, 31))


def test_a_padded_batch_slides_as_each_row_alone():
    """Left padding shifts slots and positions alike: a row's window is the same in a batch."""
    model = random_model(config_with(3, ("sliding", "sliding")), 5, "rows")
    prompts = [[1, 2, 3, 4, 5, 6, 7], [8, 9], [10, 11, 12, 13]]
    batch = generate_batch(model, prompts, 8, temperature=0, stop_at_eos=False)
    alone = [[s.id for s in generate(model, p, 8, temperature=0, stop_at_eos=False)]
             for p in prompts]
    assert batch == alone


def test_mistral_reads_its_window_as_a_window_not_a_context_limit():
    d = {"model_type": "mistral", "vocab_size": 64, "hidden_size": 32, "num_attention_heads": 4,
         "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 32,
         "max_position_embeddings": 128, "sliding_window": 16}
    config = from_hf_dict(d)
    assert (config.n_ctx, config.sliding_window, config.layer_types) == (128, 16, ("sliding",) * 2)
    assert from_hf_dict({**d, "sliding_window": None}).sliding_window is None


@pytest.mark.parametrize("change, message", [
    (dict(sliding_window=0), "sliding_window must be an integer >= 1"),
    (dict(layer_types=("sliding",)), "once per layer"),
    (dict(layer_types=("local", "full")), "once per layer"),
    (dict(sliding_window=None, layer_types=("sliding", "full")), "sliding_window is None"),
    (dict(attn_softcap=0.0), "attn_softcap must be a finite number > 0"),
    (dict(sandwich_norms=1), "sandwich_norms must be True or False"),
    (dict(arch="gpt2"), "need norm='rmsnorm' and RoPE"),
])
def test_bad_window_and_gemma_settings_are_value_errors(change, message):
    kwargs = dict(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_layers=2, arch="llama",
                  sliding_window=4)
    with pytest.raises(ValueError, match=message):
        ModelConfig(**{**kwargs, **change})


@pytest.mark.parametrize("gemma", [False, True])
def test_training_refuses_what_it_has_no_backward_for(gemma):
    from minillm.train.grad_model import check_trainable
    with pytest.raises(ValueError, match="training has no backward for"):
        check_trainable(config_with(4, ("sliding", "full"), **(GEMMA if gemma else {})))
