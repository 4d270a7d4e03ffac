"""LoRA: the adapters' gradients vs finite differences, the base left untouched, a fine-tuned
adapter lowering the loss, and PEFT's file layout (round trip, names, refusals)."""
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm import GPT
from minillm.config import ModelConfig
from minillm.io.safetensors import load_safetensors
from minillm.train.grad_model import loss_and_grads
from minillm.train.lora.adapters import LoRA, init_lora, lora_loss_and_grads, merged_params
from minillm.train.lora.files import load_adapter, save_adapter
from minillm.train.optim import AdamW
from tests.conftest import FIXTURES
from tests.model.strategies import random_model
from tests.train.gradcheck import check
from tests.train.test_llama_gradients import llama_configs
from tests.train.test_model_gradients import float64_params


def random_lora(params, rank: int, seed: int, dtype=np.float32) -> LoRA:
    """Adapters with B random too (init_lora's B = 0 would hide A's gradient)."""
    rng = np.random.default_rng(seed)
    lora = init_lora(params, rank, rng, alpha=3.0 * rank)
    lora.adapters = {k: (A.astype(dtype), rng.normal(0, 0.3, B.shape).astype(dtype))
                     for k, (A, B) in lora.adapters.items()}
    return lora


@given(llama_configs(), st.integers(0, 1000), st.sampled_from([1, 2, 3]), st.sampled_from([3, 5]))
def test_adapter_gradients_match_finite_differences(config, seed, rank, T):
    """∂L/∂A = s · G Bᵀ and ∂L/∂B = s · Aᵀ G, G = ∂L/∂W': relative error ≤ 1e-5 in float64."""
    params = float64_params(config, seed)
    lora = random_lora(params, rank, seed, np.float64)
    rng = np.random.default_rng(seed)
    ids, targets = (rng.integers(0, config.vocab_size, (2, T)) for _ in range(2))
    loss, grads = lora_loss_and_grads(params, config, lora, ids, targets)
    assert set(grads) == set(lora.named())
    check(lambda: lora_loss_and_grads(params, config, lora, ids, targets)[0], lora.named(), grads,
          rng, k=4)


def test_a_fresh_adapter_is_the_base_model_and_the_base_is_never_written():
    config = ModelConfig(vocab_size=20, n_ctx=16, d_model=16, n_heads=4, n_kv_heads=2,
                         n_layers=2, d_ff=24, arch="llama")
    model = GPT(config, seed=0)
    before = {k: v.copy() for k, v in model.params.named().items()}
    lora = init_lora(model.params, 4, np.random.default_rng(0))
    assert len(lora.adapters) == 2 * 7 and lora.scale == 2.0      # q k v o gate up down, 2 layers
    ids = np.random.default_rng(1).integers(0, 20, (2, 9))
    base_loss, _ = loss_and_grads(model.params, config, ids[:, :-1], ids[:, 1:])
    loss, grads = lora_loss_and_grads(model.params, config, lora, ids[:, :-1], ids[:, 1:])
    assert loss == base_loss                                      # B = 0: W' = W exactly
    assert all(np.all(g == 0) for k, g in grads.items() if k.endswith("lora_A"))   # B = 0
    opt = AdamW(lora.named(), weight_decay=0.0)
    for _ in range(3):
        opt.step(lora_loss_and_grads(model.params, config, lora, ids[:, :-1], ids[:, 1:])[1], 1e-2)
    for k, v in model.params.named().items():
        np.testing.assert_array_equal(v, before[k], err_msg=k)    # frozen
    merged = merged_params(model.params, lora).named()
    assert merged["wte"] is model.params.named()["wte"]           # not adapted: shared, not copied
    assert not np.array_equal(merged["blocks.0.attn.wq"], before["blocks.0.attn.wq"])


def test_fine_tuning_an_adapter_lowers_the_loss():
    """Rank 4 on every projection of a random tiny Llama, 40 AdamW steps on one batch of a short
    text: its loss falls below a tenth (4.3 -> 0.1 measured). subtle: the base needs weights of
    a trained model's size (random_model's, std 0.3): with GPT's small initial weights the frozen
    head cannot make confident logits, whatever the adapters learn."""
    config = ModelConfig(vocab_size=26, n_ctx=16, d_model=32, n_heads=4, n_kv_heads=2,
                         n_layers=1, d_ff=64, arch="llama")
    model = random_model(config, 0)
    text = np.array([ord(c) - 97 for c in "thequickbrownfoxjumpsoverthelazydog" * 2])
    ids = np.stack([text[i:i + 16] for i in (0, 5, 11)])                    # [3, 16]
    lora = init_lora(model.params, 4, np.random.default_rng(0))
    opt = AdamW(lora.named(), weight_decay=0.0)
    losses = []
    for _ in range(40):
        loss, grads = lora_loss_and_grads(model.params, config, lora, ids[:, :-1], ids[:, 1:])
        opt.step(grads, 1e-2)
        losses.append(loss)
    assert losses[-1] < 0.1 * losses[0], (losses[0], losses[-1])


def test_adapters_round_trip_in_peft_layout(tmp_path):
    config = ModelConfig(vocab_size=20, n_ctx=16, d_model=16, n_heads=4, n_kv_heads=2,
                         n_layers=2, d_ff=24, arch="llama", attn_bias=True)
    model = GPT(config, seed=0)
    lora = random_lora(model.params, 3, 0)
    save_adapter(tmp_path, lora, config, base_model="tiny")
    settings = json.loads((tmp_path / "adapter_config.json").read_text())
    assert (settings["peft_type"], settings["r"], settings["lora_alpha"]) == ("LORA", 3, 9.0)
    assert settings["target_modules"] == sorted(["q_proj", "k_proj", "v_proj", "o_proj",
                                                 "gate_proj", "up_proj", "down_proj"])
    back = load_adapter(tmp_path, config)
    assert (back.rank, back.alpha) == (3, 9.0) and set(back.adapters) == set(lora.adapters)
    for name, (A, B) in lora.adapters.items():
        np.testing.assert_array_equal(back.adapters[name][0], A)
        np.testing.assert_array_equal(back.adapters[name][1], B)
    stored = load_safetensors(tmp_path / "adapter_model.safetensors")
    key = "base_model.model.model.layers.1.mlp.down_proj.lora_B.weight"
    np.testing.assert_array_equal(stored[key], lora.adapters["blocks.1.ffn.w_down"][1].T)  # [out, r]


def test_bad_adapters_are_refused(tmp_path):
    config = ModelConfig(vocab_size=20, n_ctx=16, d_model=16, n_heads=4, n_kv_heads=2,
                         n_layers=1, d_ff=24, arch="llama")
    model = GPT(config, seed=0)
    with pytest.raises(ValueError, match="rank"):
        init_lora(model.params, 0, np.random.default_rng(0))
    for targets in (("c_attn",), "wq", (), ("wq", "wte")):
        with pytest.raises(ValueError, match="projections"):
            init_lora(model.params, 2, np.random.default_rng(0), targets=targets)
    only_q = init_lora(model.params, 2, np.random.default_rng(0), targets=("wq",))
    assert list(only_q.adapters) == ["blocks.0.attn.wq"]
    gpt2 = ModelConfig(vocab_size=20, n_ctx=16, d_model=16, n_heads=4, n_layers=1)
    with pytest.raises(ValueError, match="Llama family only"):
        save_adapter(tmp_path / "g", init_lora(GPT(gpt2).params, 2, np.random.default_rng(0)), gpt2)
    save_adapter(tmp_path, init_lora(model.params, 2, np.random.default_rng(0)), config)
    settings = json.loads((tmp_path / "adapter_config.json").read_text())
    (tmp_path / "adapter_config.json").write_text(json.dumps({**settings, "use_dora": True}))
    with pytest.raises(ValueError, match="use_dora"):
        load_adapter(tmp_path, config)
    (tmp_path / "adapter_config.json").write_text(json.dumps({**settings, "r": 3}))
    with pytest.raises(ValueError, match="r = 3"):
        load_adapter(tmp_path, config)


@pytest.mark.parametrize("which", ["peft_adapter", "minillm_adapter"])
def test_adapters_give_pefts_logits(which):
    """tests/fixtures/lora_llama (scripts/make_lora_fixtures.py, peft 0.21.2): an adapter PEFT
    wrote (rank 2, random A and B) read by minillm, and one minillm wrote (rank 3) read by
    ``PeftModel.from_pretrained``, give the logits of PEFT's model when merged into the base
    weights: max |Δ| ≤ 1e-4 · max(1, max |logit|) (measured: 4.5e-6 for minillm's, max |logit| 8.7)."""
    base = GPT.from_pretrained(FIXTURES / "grads_llama")
    lora = load_adapter(FIXTURES / "lora_llama" / which, base.config)
    assert len(lora.adapters) == 2 * 7                       # every projection of both layers
    expected = load_safetensors(FIXTURES / "lora_llama" / "expected.safetensors")
    want = expected["peft_logits" if which == "peft_adapter" else "minillm_logits"]
    got = GPT(base.config, merged_params(base.params, lora))(expected["input_ids"])
    assert np.abs(got - want).max() <= 1e-4 * max(1.0, float(np.abs(want).max()))
    assert np.abs(base(expected["input_ids"]) - want).max() > 1.0   # the adapter matters
