"""The recorded activations are transformers': for every family's tiny model, the residual stream
at each layer's input (``blocks.{l}.hook_resid_pre``) and after the final norm
(``ln_final.hook_normalized``) equal ``output_hidden_states``, and each layer's attention weights
(``blocks.{l}.attn.hook_pattern``) equal ``output_attentions`` with eager attention, within 1e-4
of the largest value. The references are stored (tests/fixtures/lens/, made by
scripts/make_lens_fixtures.py from the committed family fixtures): no torch needed.

subtle: transformers' last hidden state is after the final norm; its others are each layer's
input, so hidden_states[l] is ``hook_resid_pre`` of layer l, not ``hook_resid_post`` of l − 1
(the two are the same array here, but the last one is not).
"""
from pathlib import Path

import numpy as np
import pytest

from minillm import GPT

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FAMILIES = ("gpt2_tiny", "llama_tiny", "llama3_tiny", "qwen2_tiny", "qwen3_tiny", "qwen3_moe_tiny",
            "mixtral_tiny", "olmoe_tiny", "phi3_tiny", "olmo2_tiny", "smollm3_tiny", "gemma2_tiny",
            "gemma3_tiny", "mistral_window_tiny")
TOLERANCE = 1e-4     # of the largest |value| of the reference


def recorded(family: str):
    """(transformers' arrays, minillm's logits and activations on the same ids)."""
    with np.load(FIXTURES / "lens" / f"{family}.npz", allow_pickle=False) as f:
        ref = {name: f[name] for name in f.files}
    model = GPT.from_pretrained(FIXTURES / family)
    logits, acts = model.run_with_cache(ref["ids"])
    return ref, logits, acts, model.config.n_layers


def close(got: np.ndarray, want: np.ndarray) -> float:
    """max |got − want| as a fraction of max |want|."""
    assert got.shape == want.shape
    return float(np.abs(got - want).max() / np.abs(want).max())


@pytest.mark.parametrize("family", FAMILIES)
def test_the_recorded_residual_streams_equal_transformers_hidden_states(family):
    ref, logits, acts, L = recorded(family)
    hidden = ref["hidden_states"]                                     # [L + 1, B, T, C]
    assert hidden.shape[0] == L + 1
    for layer in range(L):
        assert close(acts[f"blocks.{layer}.hook_resid_pre"], hidden[layer]) < TOLERANCE, layer
    assert close(acts["ln_final.hook_normalized"], hidden[L]) < TOLERANCE
    assert close(logits, ref["logits"]) < TOLERANCE


@pytest.mark.parametrize("family", FAMILIES)
def test_the_recorded_attention_patterns_equal_transformers_attentions(family):
    ref, _, acts, L = recorded(family)
    attentions = ref["attentions"]                                    # [L, B, H, T, T]
    assert attentions.shape[0] == L
    for layer in range(L):
        assert close(acts[f"blocks.{layer}.attn.hook_pattern"], attentions[layer]) < TOLERANCE, layer
