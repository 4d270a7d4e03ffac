"""Parity with Hugging Face transformers on randomly initialised models.

Fixtures: tests/fixtures/{gpt2_*,llama_*,qwen2_*}/ made by scripts/make_gpt2_fixtures.py and
scripts/make_llama_fixtures.py (transformers 5.24.0, torch 2.13.0 CPU; every bias and norm gain
random). Tolerances: logits max |Δ| ≤ 1e-4, loss |Δ| ≤ 1e-5, greedy ids identical. Every
check runs on the model of plain arrays (``fast=False``: only model/ code) and on the engine's
(the default).
"""
import numpy as np
import pytest

from minillm.loading import model_class
from minillm import GPT, KVCache
from minillm.io.safetensors import load_safetensors
from tests.conftest import FIXTURES

NAMES = ["gpt2_tiny", "gpt2_small", "gpt2_untied", "llama_tiny", "llama_untied", "qwen2_tiny"]


@pytest.fixture(scope="module", params=[(name, fast) for name in NAMES for fast in (False, True)],
                ids=lambda p: f"{p[0]}-{'engine' if p[1] else 'plain'}")
def case(request):
    name, fast = request.param
    path = FIXTURES / name
    return model_class(fast).from_pretrained(path), load_safetensors(path / "expected.safetensors")


def test_logits_match_hf_within_1e_4(case):
    model, expected = case
    ids, want = expected["ids"], expected["logits"]
    got = model(ids[:want.shape[0]])                   # the fixture may store fewer logit rows
    assert got.dtype == np.float32
    assert np.abs(got - want).max() <= 1e-4


def test_loss_matches_hf_within_1e_5(case):
    model, expected = case
    assert abs(model.loss(expected["ids"]) - float(expected["loss"])) <= 1e-5


def test_greedy_20_tokens_match_hf_exactly(case):
    model, expected = case
    ids = list(expected["greedy_prompt"][0])
    cache = KVCache(model.config, capacity=len(ids) + 20)
    logits = model(np.array(ids), cache=cache, last_only=True)
    new = []
    for _ in range(20):
        new.append(int(np.argmax(logits[-1])))          # greedy: the most likely next token
        logits = model(np.array(new[-1:]), cache=cache, last_only=True)
    assert new == list(expected["greedy_ids"][0])


def test_save_pretrained_round_trips_hf_layout(case, tmp_path):
    model, expected = case
    model.save_pretrained(tmp_path)
    again = type(model).from_pretrained(tmp_path)
    assert type(again) is type(model) and again.config == model.config
    np.testing.assert_array_equal(again(expected["ids"][:1]), model(expected["ids"][:1]))


@pytest.mark.parametrize("name", NAMES)
def test_saved_names_are_exactly_hf_names(name, tmp_path):
    """save_pretrained writes the tensor names (and shapes) HF itself wrote."""
    GPT.from_pretrained(FIXTURES / name).save_pretrained(tmp_path)
    ours = {k: v.shape for k, v in load_safetensors(tmp_path / "model.safetensors").items()}
    theirs = {k: v.shape for k, v in load_safetensors(FIXTURES / name / "model.safetensors").items()}
    assert ours == theirs


@pytest.mark.parametrize("block", [1, 7, 16])
def test_logits_match_hf_within_1e_4_with_query_blocks(case, block, monkeypatch):
    """The prefill path (attention computed a block of queries at a time, masked keys skipped)
    matches HF as the full formula does; the fixtures' 64 positions are one block by default.
    (The engine's path: the model of plain arrays has no query blocks.)"""
    monkeypatch.setattr("minillm.engine.layers.QUERY_BLOCK", block)
    model, expected = case
    ids, want = expected["ids"], expected["logits"]
    got = model(ids[:want.shape[0]])
    assert np.abs(got - want).max() <= 1e-4
