"""The Llama family end to end: generation, beam search, option scoring, batching and the cache
run unchanged on Llama / Qwen2 models (RMSNorm, RoPE, SwiGLU, grouped-query attention).

References: Hugging Face transformers 5.24.0 ``LlamaForCausalLM`` / ``Qwen2ForCausalLM`` /
``Qwen3ForCausalLM`` outputs in tests/fixtures/{llama_tiny,llama_untied,qwen2_tiny}
(scripts/make_llama_fixtures.py) and {llama3_tiny,qwen3_tiny} (scripts/make_family_fixtures.py:
Llama 3's RoPE scaling, Qwen3's q/k norms and head_dim): greedy ids
identical, beam scores ≤ 1e-4. Logits (≤ 1e-4) and loss parity are in tests/model/test_parity_hf.py.
"""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from minillm.loading import model_class
from minillm import KVCache
from minillm.decoding.batch import generate_batch
from minillm.functional import log_softmax
from minillm.decoding.generate import generate
from minillm.io.safetensors import load_safetensors
from minillm.loading import load_model
from minillm.decoding.options import score_options
from tests.conftest import FIXTURES
from tests.model.family_parity import assert_beam4_matches

NAMES = ["llama_tiny", "llama_untied", "qwen2_tiny", "llama3_tiny", "qwen3_tiny"]
# every check on the model of plain arrays (fast=False: model/ code only) and the engine's (default)
CASES = [pytest.param((name, fast), id=f"{name}-{'engine' if fast else 'plain'}")
         for name in NAMES for fast in (False, True)]
MODELS = {(name, fast): model_class(fast).from_pretrained(FIXTURES / name)
          for name in NAMES for fast in (False, True)}
EXPECTED = {name: load_safetensors(FIXTURES / name / "expected.safetensors") for name in NAMES}


@pytest.mark.parametrize("case", CASES)
def test_load_model_reads_hf_llama_directories(case):
    name, fast = case
    """One entry point: ``load_model(dir)`` dispatches to the HF checkpoint loader."""
    model, tokenizer = load_model(FIXTURES / name, fast=fast)
    assert model.config == MODELS[case].config and model.config.arch == "llama"
    assert model.config.n_kv_heads < model.config.n_heads            # the fixtures use GQA
    assert tokenizer is None                                          # the fixtures carry none
    ids = EXPECTED[name]["ids"][:1, :16]
    np.testing.assert_array_equal(model(ids), MODELS[case](ids))


@pytest.mark.parametrize("case", CASES)
def test_generate_greedy_matches_hf_greedy_ids(case):
    name, fast = case
    prompt, want = EXPECTED[name]["greedy_prompt"][0], EXPECTED[name]["greedy_ids"][0]
    got = [s.id for s in generate(MODELS[case], prompt, len(want), temperature=0)]
    assert got == want.tolist()


@pytest.mark.parametrize("case", CASES)
def test_beam_search_matches_hf_beam4_within_1e_4(case):
    name, fast = case
    assert_beam4_matches(MODELS[case], EXPECTED[name])


@pytest.mark.parametrize("case", CASES)
def test_score_options_equals_summed_logprobs(case):
    name, fast = case
    """P(option | prompt) from score_options = Σ log p of the option's tokens, by hand."""
    model, prompt = MODELS[case], [5, 17, 3]
    options = [[7], [8, 9], [10, 11, 12]]
    scores = score_options(model, None, prompt, options)
    for option, got in zip(options, scores.logprobs):
        logp = log_softmax(model(np.array(prompt + option)))          # [T, V]
        want = sum(logp[len(prompt) - 1 + i, t] for i, t in enumerate(option))
        assert abs(got - want) <= 1e-4
    assert abs(scores.probs.sum() - 1) <= 1e-5


@pytest.mark.parametrize("case", CASES)
def test_sampling_presets_run_and_repeat_with_a_seed(case):
    name, fast = case
    model, prompt = MODELS[case], [1, 2, 3]
    runs = [[s.id for s in generate(model, prompt, 12, preset="chat", seed=7)] for _ in range(2)]
    assert runs[0] == runs[1] and len(runs[0]) == 12
    assert all(0 <= i < model.config.vocab_size for i in runs[0])


@pytest.mark.parametrize("case", CASES)
def test_left_padded_batch_equals_each_prompt_alone(case):
    name, fast = case
    """RoPE positions skip the padding: a short prompt in a batch continues as it would alone."""
    model, prompts = MODELS[case], [[4, 5, 6, 7, 8], [9, 10]]
    batch = generate_batch(model, prompts, 6, temperature=0)
    alone = [[s.id for s in generate(model, p, 6, temperature=0)] for p in prompts]
    assert batch == alone


@given(name=st.sampled_from(NAMES), fast=st.booleans(),
       cuts=st.lists(st.integers(1, 8), min_size=1, max_size=5))
def test_cache_equals_recompute(name, fast, cuts):
    """Feeding a sequence in chunks through the KV cache gives the logits of one full pass."""
    assume(sum(cuts) <= EXPECTED[name]["ids"].shape[1])         # (llama3/qwen3 rows: 24 ids)
    model, ids = MODELS[name, fast], EXPECTED[name]["ids"][0, :sum(cuts)]
    cache, start, got = KVCache(model.config, capacity=len(ids)), 0, []
    for n in cuts:
        got.append(model(ids[start:start + n], cache=cache))          # [n, V]
        start += n
    np.testing.assert_allclose(np.concatenate(got), model(ids), atol=1e-5)
