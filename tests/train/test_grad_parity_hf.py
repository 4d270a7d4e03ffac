"""The Llama family's gradients equal torch autograd through Hugging Face transformers.

References: tests/fixtures/grads_llama (``LlamaForCausalLM``, 6 heads / 2 KV heads: G = 3, untied
head) and grads_qwen2 (``Qwen2ForCausalLM``, 4 / 2: G = 2, Q, K, V biases, tied), both 2 layers,
made by scripts/make_grad_fixtures.py with torch 2.13.0 / transformers 5.24.0: the mean next-token
cross-entropy of a [2, 9] batch differentiated by autograd in float64 (stored as float32).

Relative error of a tensor = max |ours − torch| / max |torch|; bound 1e-4 for every tensor.
Worst measured per tensor kind (this comparison, the largest over the tensors of a kind; float32 run /
float64 run, both fixtures):

    wte 8.9e-7 / 3.7e-7      lm_head 5.5e-7 / 1.5e-7     norm_f 3.1e-7 / 1.7e-7
    norm1 7.2e-7 / 8.2e-7    norm2 1.4e-6 / 6.8e-7
    wq 7.8e-7 / 4.6e-7       wk 7.3e-7 / 3.8e-7          wv 6.1e-7 / 3.1e-7     wo 6.0e-7 / 2.9e-7
    bq 2.0e-6 / 1.1e-6       bk 1.9e-6 / 4.1e-7          bv 7.4e-7 / 2.1e-7     (Qwen2)
    w_gate 8.3e-7 / 4.0e-7   w_up 7.6e-7 / 3.5e-7        w_down 6.4e-7 / 3.6e-7

subtle: even minillm in float64 is ~1e-7 from torch, not 1e-15: transformers computes the RoPE
angles m·θ in float32 whatever the model's dtype (minillm: float64), and the stored reference is
rounded to float32 (≤ 6e-8).
"""
import numpy as np
import pytest

from minillm import GPT
from minillm.io.hf_names import hf_table
from minillm.io.safetensors import load_safetensors
from minillm.model.params import GPTParams
from minillm.train.grad_model import loss_and_grads
from tests.conftest import FIXTURES

TOLERANCE = 1e-4
CASES = [pytest.param((name, dtype), id=f"{name}-{dtype.__name__}")
         for name in ("grads_llama", "grads_qwen2") for dtype in (np.float32, np.float64)]


def relative_error(ours: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(ours.astype(np.float64) - ref).max() / np.abs(ref).max())


@pytest.mark.parametrize("case", CASES)
def test_gradients_equal_torch_autograd(case):
    name, dtype = case
    model = GPT.from_pretrained(FIXTURES / name)
    config = model.config
    assert config.arch == "llama" and config.n_heads // config.n_kv_heads >= 2
    ref = load_safetensors(FIXTURES / name / "grads.safetensors")
    params = GPTParams.from_named({k: v.astype(dtype) for k, v in model.params.named().items()},
                                  config)
    loss, grads = loss_and_grads(params, config, ref["input_ids"], ref["targets"])
    assert abs(loss - float(ref["loss"][0])) <= 1e-6 * float(ref["loss"][0])
    table = hf_table(config)
    assert {"grad." + table[k][0] for k in grads} == {k for k in ref if k.startswith("grad.")}
    errors = {}
    for k, g in grads.items():
        assert g.dtype == dtype
        hf, transpose = table[k]
        want = ref["grad." + hf].astype(np.float64)             # [out, in] for nn.Linear weights
        errors[k] = relative_error(g, want.T if transpose else want)
    worst = max(errors, key=errors.get)
    assert errors[worst] <= TOLERANCE, f"{worst}: relative error {errors[worst]:.2e}"


def test_the_fixtures_exercise_every_llama_tensor_kind():
    """Untied head (Llama), tied head and Q, K, V biases (Qwen2): every kind is compared."""
    kinds = set()
    for name in ("grads_llama", "grads_qwen2"):
        kinds |= {k.split(".")[-1] for k in GPT.from_pretrained(FIXTURES / name).params.named()}
    assert kinds >= {"wte", "lm_head", "weight", "wq", "wk", "wv", "wo", "bq", "bk", "bv",
                     "w_gate", "w_up", "w_down"}
