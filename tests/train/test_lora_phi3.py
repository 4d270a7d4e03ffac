"""Phi-3 adapters in PEFT's layout (issue 46, defect 11): PEFT's Phi-3 LoRA adapts the fused
qkv_proj and gate_up_proj, so minillm reads those (split exactly into per-projection updates) and
writes those (rank k·r, block-diagonal B, when its A's differ: train/lora/fused.py). Fixtures:
tests/fixtures/lora_phi3 (scripts/make_phi3_lora_fixtures.py, peft 0.22.0, which also checks that
PEFT applies all seven projections of minillm's file)."""
import json

import numpy as np
import pytest

from minillm import GPT
from minillm.io.safetensors import load_safetensors, write_safetensors
from minillm.train.lora.adapters import init_lora, merged_params
from minillm.train.lora.files import load_adapter, save_adapter
from tests.conftest import FIXTURES

PHI3 = FIXTURES / "phi3_tiny"
LORA = FIXTURES / "lora_phi3"


@pytest.fixture(scope="module")
def base():
    return GPT.from_pretrained(PHI3)


def random_lora(base, rank, seed, targets=None):
    rng = np.random.default_rng(seed)
    lora = init_lora(base.params, rank, rng, alpha=4.0, **({"targets": targets} if targets else {}))
    lora.adapters = {k: (A, rng.normal(0, 0.5, B.shape).astype(np.float32))
                     for k, (A, B) in lora.adapters.items()}
    return lora


def merged(base, lora):
    return merged_params(base.params, lora)


def rewrite(folder, tensors):
    (folder / "adapter_model.safetensors").unlink()        # (the writer creates a new file only)
    write_safetensors(folder / "adapter_model.safetensors", tensors)


def named(params):
    return dict(params.named())


@pytest.mark.parametrize("which, key", [("peft_adapter", "peft_logits"),
                                        ("minillm_adapter", "minillm_logits")])
def test_phi3_adapters_give_pefts_logits(base, which, key):
    """PEFT's own fused Phi-3 adapter (rank 2), and minillm's file as PEFT ran it, give PEFT's
    logits when minillm merges them: max |Δ| ≤ 1e-4 · max(1, max |logit|) (measured when the
    fixtures were made: 1.4e-5 for minillm's file in PEFT, max |logit| 9.5)."""
    lora = load_adapter(LORA / which, base.config)
    assert len(lora.adapters) == 2 * 7                       # every projection of both layers
    q, k = lora.adapters["blocks.0.attn.wq"][0], lora.adapters["blocks.0.attn.wk"][0]
    assert np.array_equal(q, k) and not np.shares_memory(q, k)   # (each trains on its own)
    expected = load_safetensors(LORA / "expected.safetensors")
    want = expected[key]
    got = GPT(base.config, merged(base, lora))(expected["input_ids"])
    assert np.abs(got - want).max() <= 1e-4 * max(1.0, float(np.abs(want).max()))
    assert np.abs(base(expected["input_ids"]) - want).max() > 1.0   # the adapter matters


def test_a_phi3_adapter_is_written_fused_as_pefts_phi3_model_names_it(base, tmp_path):
    """The stored keys are PEFT's Phi-3 modules (qkv_proj, o_proj, gate_up_proj, down_proj), no
    q_proj … up_proj (which PEFT would silently skip); a rank-2 LoRA with one A per projection is
    stored at rank 6 with lora_alpha scaled to keep α / r."""
    save_adapter(tmp_path, random_lora(base, 2, seed=5), base.config)
    tensors = load_safetensors(tmp_path / "adapter_model.safetensors")
    modules = ("self_attn.qkv_proj", "self_attn.o_proj", "mlp.gate_up_proj", "mlp.down_proj")
    assert set(tensors) == {f"base_model.model.model.layers.{i}.{m}.lora_{x}.weight"
                            for i in range(2) for m in modules for x in "AB"}
    qkv = "base_model.model.model.layers.0.self_attn.qkv_proj"
    assert tensors[qkv + ".lora_A.weight"].shape == (6, 32)                  # [3r, C]
    assert tensors[qkv + ".lora_B.weight"].shape == ((4 + 2 * 2) * 8, 6)     # [H·D + 2·KV·D, 3r]
    settings = json.loads((tmp_path / "adapter_config.json").read_text())
    assert (settings["r"], settings["lora_alpha"]) == (6, 12.0)
    assert settings["target_modules"] == ["down_proj", "gate_up_proj", "o_proj", "qkv_proj"]
    stored = load_safetensors(LORA / "minillm_adapter" / "adapter_model.safetensors")
    assert set(stored) == set(tensors)                       # the fixture PEFT ran: same layout


@pytest.mark.parametrize("targets", [None, ("wq", "wv"), ("w_up", "wo")])
def test_a_phi3_adapter_round_trips_every_update_and_saves_again_at_its_rank(base, tmp_path, targets):
    """save -> load gives the same merged weights (to float32 rounding: 1e-6 · max |W|); the loaded
    LoRA shares one A per fused group, so it saves again at the file's rank, not 3× it."""
    lora = random_lora(base, 3, seed=11, targets=targets)
    save_adapter(tmp_path / "a", lora, base.config)
    back = load_adapter(tmp_path / "a", base.config)
    want, got, before = (named(p) for p in (merged(base, lora), merged(base, back), base.params))
    for name in want:
        assert np.abs(got[name] - want[name]).max() <= 1e-6 * max(1.0, float(np.abs(want[name]).max()))
    assert sum(np.abs(want[n] - before[n]).max() > 0.1 for n in want) == len(lora.adapters)
    save_adapter(tmp_path / "b", back, base.config)
    first, again = (json.loads((tmp_path / d / "adapter_config.json").read_text()) for d in "ab")
    assert again["r"] == first["r"] == back.rank and again["lora_alpha"] == first["lora_alpha"]


def test_per_projection_names_on_a_phi3_are_refused(base, tmp_path):
    """minillm's old Phi-3 files named q_proj … up_proj, which PEFT's Phi-3 model lacks (it
    applied 2 of the 7 projections): such a file is refused, naming the tensor."""
    save_adapter(tmp_path, random_lora(base, 2, seed=1), base.config)
    tensors = load_safetensors(tmp_path / "adapter_model.safetensors")
    stem = "base_model.model.model.layers.0.self_attn."
    tensors[stem + "q_proj.lora_A.weight"] = tensors.pop(stem + "qkv_proj.lora_A.weight")
    tensors[stem + "q_proj.lora_B.weight"] = tensors.pop(stem + "qkv_proj.lora_B.weight")[:32]
    rewrite(tmp_path, tensors)
    with pytest.raises(ValueError, match="q_proj.lora_A.weight.*not a LoRA tensor"):
        load_adapter(tmp_path, base.config)


def test_a_fused_b_of_the_wrong_height_is_refused(base, tmp_path):
    save_adapter(tmp_path, random_lora(base, 2, seed=1), base.config)
    tensors = load_safetensors(tmp_path / "adapter_model.safetensors")
    key = "base_model.model.model.layers.1.mlp.gate_up_proj.lora_B.weight"
    tensors[key] = tensors[key][:40]                         # 40 rows, not 2F = 64
    rewrite(tmp_path, tensors)
    with pytest.raises(ValueError, match=r"lora_B \[64, 6\]"):
        load_adapter(tmp_path, base.config)
