"""Make the Llama 3.x and Qwen3 reference fixtures (tests/fixtures/llama3_tiny, qwen3_tiny) with HF
transformers.

Dev-only script (torch, transformers, safetensors; see scripts/README.md). No downloads: tiny
``LlamaForCausalLM`` / ``Qwen3ForCausalLM`` models built from configs, randomly initialised with a
fixed torch seed, every feature of the family switched on:

- llama3_tiny: RoPE scaling rope_type "llama3" chosen so the head's four frequency pairs fall in
  all three of its regions (theta 500, head_dim 8 -> wavelengths 6.3, 29.7, 140, 664 positions;
  original_max_position_embeddings 64, low/high_freq_factor 1/4 -> bounds 16 and 64: one pair
  kept, one smoothed, two stretched by factor 8); grouped-query attention; tied embeddings.
- qwen3_tiny: RMSNorm on each head's q and k (gains random), head_dim 8 with hidden 24 and 4
  heads (H·D = 32 ≠ C), grouped-query attention, no q/k/v bias, tied embeddings.

Prompts are 18 tokens (longer than 16). Run from the repository root:

    .venv-dev/bin/python scripts/make_family_fixtures.py [llama3_tiny] [qwen3_tiny]

Same outputs as scripts/make_gpt2_fixtures.py (whose helpers it reuses). When minillm is
importable (PYTHONPATH=$PWD) the script also checks the write direction: minillm reads each
fixture, saves it with ``save_pretrained``, and transformers reads that folder back to the same
logits (config.json's ``rope_scaling`` / ``model_type: qwen3`` as minillm writes them).
"""
import math
import sys
import tempfile
from pathlib import Path

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_gpt2_fixtures import FIXTURES, SEED, randomize_, write_fixture  # noqa: E402

LLAMA3_ROPE = {"rope_type": "llama3", "rope_theta": 500.0, "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
SHAPE = dict(vocab_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
             intermediate_size=32, max_position_embeddings=128, tie_word_embeddings=True,
             rms_norm_eps=1e-6, bos_token_id=None, eos_token_id=None)   # no id of 64 ends a text


LLAMA3_SHAPE = dict(SHAPE, intermediate_size=16)      # (the fixture stays under 80 KB)


def build_llama3():
    cfg = transformers.LlamaConfig(hidden_size=32, head_dim=8, rope_parameters=dict(LLAMA3_ROPE),
                                   **LLAMA3_SHAPE)
    model = transformers.LlamaForCausalLM(cfg).eval()
    randomize_(model, embed_std=2.5 / math.sqrt(32))
    if model.config.rope_parameters != LLAMA3_ROPE:
        raise RuntimeError(f"expected llama3 RoPE scaling, got {model.config.rope_parameters}")
    plain = dict(LLAMA3_ROPE, rope_type="default")
    for k in ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"):
        plain.pop(k)
    check_feature_matters(model, transformers.LlamaForCausalLM(
        transformers.LlamaConfig(hidden_size=32, head_dim=8, rope_parameters=plain, **LLAMA3_SHAPE)),
        "llama3 RoPE scaling")
    return model


def build_qwen3():
    cfg = transformers.Qwen3Config(hidden_size=24, head_dim=8, attention_bias=False,
                                   rope_parameters={"rope_type": "default", "rope_theta": 1e6},
                                   **SHAPE)
    model = transformers.Qwen3ForCausalLM(cfg).eval()
    randomize_(model, embed_std=2.5 / math.sqrt(24), gain_std=0.3)
    attn = model.model.layers[0].self_attn
    if attn.q_proj.weight.shape != (32, 24) or attn.q_proj.bias is not None:
        raise RuntimeError("expected q_proj [H·D = 32, C = 24] without bias")
    if attn.q_norm.weight.shape != (8,):
        raise RuntimeError("expected q_norm over head_dim 8")
    return model


@torch.no_grad()
def check_feature_matters(model, other, feature):
    """The same weights without ``feature`` give other logits: the fixture exercises it."""
    other.load_state_dict(model.state_dict())
    ids = torch.arange(24).view(1, 24) % model.config.vocab_size
    diff = float((model(ids).logits - other.eval()(ids).logits).abs().max())
    if diff < 0.1:
        raise RuntimeError(f"{feature} changes the logits by only {diff}")
    print(f"  without {feature}: logits differ by up to {diff:.2f}")


@torch.no_grad()
def check_minillm_writes_what_hf_reads(name, model_class):
    """minillm reads the fixture, writes it back; transformers reads minillm's folder."""
    try:
        from minillm import GPT
    except ImportError:
        print("  (minillm not importable: write-direction check skipped; PYTHONPATH=$PWD)")
        return
    from safetensors.torch import load_file
    exp = load_file(FIXTURES / name / "expected.safetensors")
    with tempfile.TemporaryDirectory() as tmp:
        GPT.from_pretrained(FIXTURES / name).save_pretrained(tmp)
        again = model_class.from_pretrained(tmp).eval()
        rows = exp["logits"].shape[0]
        err = float((again(exp["ids"][:rows]).logits - exp["logits"]).abs().max())
    if err > 1e-5:
        raise RuntimeError(f"{name}: transformers reading minillm's folder differs by {err}")
    print(f"  transformers reads minillm's save_pretrained folder: max |Δlogits| {err:.2e}")


def main(names=("llama3_tiny", "qwen3_tiny")):
    if "llama3_tiny" in names:
        make_llama3()
    if "qwen3_tiny" in names:
        make_qwen3()


def make_llama3():
    torch.manual_seed(SEED + 20)
    write_fixture("llama3_tiny", "Random Llama 3.x (vocab 64, hidden 32, 4 heads / 2 kv heads, "
                  "head_dim 8, 2 layers, intermediate 16, tied) with RoPE scaling rope_type "
                  "llama3 (rope_theta 500, factor 8, low/high_freq_factor 1/4, "
                  "original_max_position_embeddings 64: the four frequency pairs kept, smoothed, "
                  "stretched, stretched). ids/logits: 2 x 24; prompts 18 tokens.",
                  build_llama3(), batch=2, seq_len=24, prompt_len=18)
    check_minillm_writes_what_hf_reads("llama3_tiny", transformers.LlamaForCausalLM)


def make_qwen3():
    torch.manual_seed(SEED + 21)
    write_fixture("qwen3_tiny", "Random Qwen3 (vocab 64, hidden 24, 4 heads / 2 kv heads, head_dim "
                  "8 (H·D = 32 ≠ hidden), RMSNorm on each head's q and k with random gains, no "
                  "q/k/v bias, 2 layers, intermediate 32, rope_theta 1e6, tied). ids/logits: "
                  "2 x 24; prompts 18 tokens.",
                  build_qwen3(), batch=2, seq_len=24, prompt_len=18)
    check_minillm_writes_what_hf_reads("qwen3_tiny", transformers.Qwen3ForCausalLM)


if __name__ == "__main__":
    main(sys.argv[1:] or ("llama3_tiny", "qwen3_tiny"))
