"""The engine (minillm/engine/) computes the model's (minillm/model/) logits and greedy tokens.

Tolerance: |engine − model| ≤ 1e-4 · max(1, max |model logits|) elementwise — the two sum the
same float32 terms in other orders (joined products, tiles, query blocks, in-place norms), which
moves a logit by a few float32 ulps of the logit scale (seen: ≤ 5e-6 relative). Greedy tokens are
compared exactly: random weights make a near-tie between the two best logits (closer than the
rounding) improbable (~1e-5 per step).

Shapes: ``tiny_configs`` (GPT-2: LayerNorm, GELU, learned positions; Llama: RMSNorm, SwiGLU, RoPE,
grouped-query heads, with or without Llama 3's RoPE scaling, Qwen3's q/k norms and a head_dim
apart from C / H; tied and untied heads) in both arena layouts, and ``tile_wide_configs`` (Llama
widths that are whole 32-output tiles: every product by 2-32 rows takes only tiles; the same
switches).
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import KVCache, load_model
from minillm.config import ModelConfig
from minillm.decoding.batch import padded_inputs
from minillm.engine import EngineGPT
from minillm.model import GPT as ModelGPT
from tests.conftest import FIXTURES
from tests.model.strategies import llama3_scalings, random_model, tiny_configs

LAYOUTS = st.sampled_from(["rows", "decode"])


@st.composite
def tile_wide_configs(draw):
    n_kv = draw(st.sampled_from([1, 2]))
    n_heads = n_kv * draw(st.sampled_from([1, 2]))
    return ModelConfig(arch="llama", vocab_size=draw(st.integers(5, 60)),
                       n_ctx=draw(st.integers(8, 24)), d_model=32 * n_heads, n_heads=n_heads,
                       n_kv_heads=n_kv, n_layers=draw(st.integers(1, 2)),
                       d_ff=draw(st.sampled_from([32, 64])), tie_embeddings=draw(st.booleans()),
                       qk_norm=draw(st.booleans()), head_dim=draw(st.sampled_from([None, 64])),
                       rope_scaling=draw(st.none() | llama3_scalings()))


CONFIGS = st.one_of(tiny_configs(), tile_wide_configs())


def assert_close_logits(fast, plain):
    assert fast.shape == plain.shape and fast.dtype == np.float32
    scale = max(1.0, float(np.abs(plain).max()))
    np.testing.assert_allclose(fast, plain, rtol=0, atol=1e-4 * scale)


def models(config, seed, layout):
    plain = random_model(config, seed)
    return random_model(config, seed, layout), plain


def greedy(model, prompt, n, cached: bool):
    """n greedy tokens after ``prompt`` [T]: with a KV cache, or re-running the whole prefix."""
    ids = list(prompt)
    cache = KVCache(model.config, 1, model.config.n_ctx) if cached else None
    step = np.array(ids)
    for _ in range(n):
        logits = model(step, cache=cache, last_only=True)[-1]           # [V]
        ids.append(int(np.argmax(logits)))
        step = np.array(ids[-1:] if cached else ids)
    return ids[len(prompt):]


@given(CONFIGS, st.integers(0, 100), LAYOUTS, st.data())
def test_the_engine_gives_the_models_logits_and_greedy_tokens(config, seed, layout, data):
    fast, plain = models(config, seed, layout)
    T = data.draw(st.integers(1, config.n_ctx // 2))
    prompt = np.array(data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=T, max_size=T)))
    assert_close_logits(fast(prompt), plain(prompt))
    n = config.n_ctx - T
    for cached in (True, False):
        assert greedy(fast, prompt, n, cached) == greedy(plain, prompt, n, cached)


@given(CONFIGS, st.integers(0, 100), LAYOUTS, st.data())
def test_the_engine_equals_the_model_on_a_left_padded_batch_with_a_cache(config, seed, layout, data):
    """B left-padded rows (decoding.batch.padded_inputs), prefilled in two parts then decoded one
    token at a time through a KV cache; query blocks of 1-4 queries so the prefill takes them."""
    fast, plain = models(config, seed, layout)
    B, T = data.draw(st.integers(1, 4)), data.draw(st.integers(2, config.n_ctx - 1))
    ids = np.array(data.draw(st.lists(st.integers(0, config.vocab_size - 1),
                                      min_size=B * config.n_ctx, max_size=B * config.n_ctx)))
    ids = ids.reshape(B, config.n_ctx)
    valid = np.ones((B, config.n_ctx), dtype=bool)
    valid[0, :data.draw(st.integers(0, T - 1))] = False                 # row 0 left-padded
    split = data.draw(st.integers(1, T - 1))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("minillm.engine.layers.QUERY_BLOCK", data.draw(st.integers(1, 4)))
        assert_same_padded_decode(fast, plain, ids, valid, [(0, split), (split, T)])


def assert_same_padded_decode(fast, plain, ids, valid, prompt_parts) -> None:
    """``ids`` [B, n_ctx] with ``valid`` [B, n_ctx] (False: left padding) through both models,
    each with its KV cache: the prompt in ``prompt_parts`` [(start, stop), …], then one token
    at a time to the end of the context; every call's logits equal."""
    B, n_ctx = ids.shape
    caches = [KVCache(plain.config, batch_size=B, capacity=n_ctx) for _ in range(2)]
    T = prompt_parts[-1][1]
    for start, stop in [*prompt_parts, *((t, t + 1) for t in range(T, n_ctx))]:
        positions, mask = padded_inputs(valid[:, :stop], stop - start)
        out = []
        for model, cache in zip((fast, plain), caches):
            cache.valid[:, :stop] = valid[:, :stop]
            out.append(model(ids[:, start:stop], cache=cache, positions=positions, mask=mask))
        assert_close_logits(*out)


def engine_called(*args, **kwargs):
    raise AssertionError("engine code ran in a model loaded with fast=False")


@pytest.mark.parametrize("path", ["gpt2_tiny", "llama_untied", "qwen2_tiny"])
def test_fast_false_gives_plain_float32_ndarrays_and_runs_only_model_code(path, monkeypatch):
    model, _ = load_model(FIXTURES / path, fast=False)
    assert isinstance(model, ModelGPT) and not isinstance(model, EngineGPT)
    assert type(model).forward is ModelGPT.forward
    for name, w in model.params.named().items():
        assert type(w) is np.ndarray and w.dtype == np.float32 and w.flags.c_contiguous, name
    for target in ["minillm.engine.gpt.EngineGPT.forward", "minillm.engine.layers.block",
                   "minillm.engine.ops.linear", "minillm.engine.rows.product",
                   "minillm.engine.ops.norm_fast"]:
        monkeypatch.setattr(target, engine_called)
    ids = np.arange(6) % model.config.vocab_size
    cache = KVCache(model.config, 1, 8)
    model(ids[:4], cache=cache)
    plain = model(ids[4:], cache=cache)                                 # runs: no engine code
    monkeypatch.undo()
    fast, _ = load_model(FIXTURES / path)
    assert isinstance(fast, EngineGPT)
    assert_close_logits(fast(ids)[4:], plain)
