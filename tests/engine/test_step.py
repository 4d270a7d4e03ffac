"""The engine's one-token step (minillm/engine/step.py) computes the readable model's logits, runs
for exactly the calls and configs it says, and is what the default ``generate`` runs.

Tolerance as tests/engine/test_engine_equals_model.py: |step − model| ≤ 1e-4 · max(1, max |model
logits|) elementwise (other float32 summation orders: a dot product for Σx², the plan's forms).
"""
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import KVCache
from minillm.config import ModelConfig
from minillm.engine import step
from minillm.engine.plan import use
from tests.engine.test_plan_forms import synthetic_plan
from tests.model.strategies import llama3_scalings, random_model
from tests.engine.test_engine_equals_model import assert_close_logits, assert_same_padded_decode
from tests.test_map_by_edits import GPT2, GREEDY, LLAMA, copy, modes  # noqa: F401 (copy: a fixture)

FORMS = st.sampled_from(["matmul", "matmul_t", "einsum", "rows", "tiles:32", "tiles:3"])


@st.composite
def covered_configs(draw):
    """GPT-2 and Llama shapes with every switch the step covers: GPT-2's biases, biases on Q, K,
    V (Qwen2), grouped-query heads, a head_dim apart from C / H, Llama 3's RoPE scaling, tied or
    untied heads."""
    arch = draw(st.sampled_from(["gpt2", "llama"]))
    n_kv = draw(st.sampled_from([1, 2]))
    n_heads = n_kv * draw(st.sampled_from([1, 2, 3])) if arch == "llama" else draw(st.sampled_from([1, 2, 4]))
    d_head = draw(st.sampled_from([2, 4, 8]))
    extra = {}
    if arch == "llama":
        extra = dict(n_kv_heads=n_kv, head_dim=draw(st.sampled_from([None, 2 * d_head])),
                     rope_scaling=draw(st.none() | llama3_scalings()),
                     attn_bias=draw(st.booleans()))
    return ModelConfig(vocab_size=draw(st.integers(5, 40)), n_ctx=draw(st.integers(8, 20)),
                       d_model=n_heads * d_head, n_heads=n_heads, n_layers=draw(st.integers(1, 2)),
                       d_ff=draw(st.sampled_from([8, 16])), arch=arch,
                       tie_embeddings=draw(st.booleans()), **extra)


@given(covered_configs(), st.integers(0, 100), st.sampled_from(["rows", "decode", "by_width", "plan"]),
       st.lists(FORMS, min_size=1, max_size=6), st.data())
def test_one_token_steps_give_the_models_logits(config, seed, layout, picks, data):
    """B rows (row 0 left-padded: a mask that hides slots), a prompt, then one token at a time
    to the end of the context: every step's logits equal the readable model's. "plan": a plan
    whose forms (einsum among them) and layouts are drawn."""
    plan = synthetic_plan(config, data.draw(st.lists(st.sampled_from(["cn", "nc"]), min_size=1,
                                                     max_size=5)), picks)
    fast = random_model(config, seed, plan if layout == "plan" else layout)
    plain = random_model(config, seed)
    assert fast._lanes is not None                                   # the step is what runs
    B, T = data.draw(st.integers(1, 3)), data.draw(st.integers(1, config.n_ctx - 1))
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (B, config.n_ctx))
    valid = np.ones((B, config.n_ctx), dtype=bool)
    valid[0, :data.draw(st.integers(0, T - 1))] = False
    use(plan if layout == "plan" else None)
    try:
        assert_same_padded_decode(fast, plain, ids, valid, [(0, T)])
    finally:
        use(None)


LLAMA_CONFIG = ModelConfig(arch="llama", vocab_size=32, n_ctx=16, d_model=16, n_heads=4,
                           n_kv_heads=2, n_layers=2, d_ff=32)


@pytest.mark.parametrize("change", [dict(qk_norm=True), dict(sliding_window=4),
                                    dict(post_norms=True), dict(sandwich_norms=True),
                                    dict(embed_scale=True), dict(query_pre_attn_scalar=8.0),
                                    dict(attn_softcap=50.0), dict(final_softcap=30.0),
                                    dict(nope_layers=(1,)),
                                    dict(n_experts=4, n_experts_used=2)],
                         ids=lambda c: ",".join(c))
def test_what_the_step_does_not_cover_takes_the_general_forward(change):
    """Each variant the step leaves out: ``covers`` says no, and the model still decodes (the
    general forward) with the readable model's logits."""
    config = replace(LLAMA_CONFIG, **change)
    fast, plain = random_model(config, 3, "by_width"), random_model(config, 3)
    assert fast._lanes is None and not step.covers(config, fast.arena)
    caches = [KVCache(config, 1, 8) for _ in range(2)]
    for model, cache in zip((fast, plain), caches):
        model(np.array([1, 2, 3]), cache=cache)
    assert_close_logits(fast(np.array([4]), cache=caches[0]), plain(np.array([4]), cache=caches[1]))


CALLS = """
import numpy as np
from minillm import KVCache
from minillm.config import ModelConfig
from minillm.engine import to_engine
from minillm.model import GPT
config = ModelConfig(arch="llama", vocab_size=32, n_ctx=16, d_model=16, n_heads=4, n_kv_heads=2,
                     n_layers=2, d_ff=32)
fast = to_engine(GPT(config, seed=0))
cache = KVCache(config, 1, 8)
calls = {"prompt": fast(np.array([1, 2, 3]), cache=cache, last_only=True),   # T = 3
         "no_cache": fast(np.array([4])),
         "weights": fast(np.array([4]), cache=KVCache(config, 1, 8), return_weights=True)[0],
         "one_token": fast(np.array([5]), cache=cache)}
print(" ".join(f"{name}={float(np.abs(v).sum()) * np.sign(v.ravel()[0]):.6f}" for name, v in calls.items()))
"""


def run_calls(where) -> dict:
    """{call: its logits' signed sum} printed by CALLS run on the package at ``where``."""
    env = dict(os.environ, PYTHONPATH=str(where), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", CALLS], cwd=where, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(item.split("=") for item in done.stdout.split())


def negated_step(where):
    """step.py's returned logits negated in the copy ``where`` (restored afterwards)."""
    path = where / "minillm" / "engine" / "step.py"
    source = path.read_text(encoding="utf-8")
    old = "    return logits[:, None, :]"
    assert source.count(old) == 1
    path.write_text(source.replace(old, "    return -logits[:, None, :]"), encoding="utf-8")
    return path, source


@pytest.mark.parametrize("model", [GPT2, LLAMA], ids=["gpt2", "llama"])
def test_the_default_generate_runs_the_step_and_reference_does_not(copy, model):
    """The package copied, step.py's logits negated there: ``generate`` (the engine) changes,
    ``generate --reference`` (model/'s code) does not — the step is the code that runs."""
    before = modes(copy, model, GREEDY)
    path, source = negated_step(copy)
    try:
        after = modes(copy, model, GREEDY)
    finally:
        path.write_text(source, encoding="utf-8")
    assert after[0] != before[0] and after[1] == before[1]


def test_only_one_token_calls_with_a_cache_run_the_step(copy):
    """In the same edited copy: a prompt (T = 3), a call without a cache and one asking for the
    attention weights give what they gave before the edit (the general forward ran); a one-token
    call with a cache gives the negated logits (the step ran)."""
    before = run_calls(copy)
    path, source = negated_step(copy)
    try:
        after = run_calls(copy)
    finally:
        path.write_text(source, encoding="utf-8")
    assert [after[k] == before[k] for k in ("prompt", "no_cache", "weights")] == [True] * 3
    assert float(after["one_token"]) == -float(before["one_token"]) != 0
