"""Make the Llama-family reference fixtures (tests/fixtures/llama_*, qwen2_tiny) with HF transformers.

Dev-only script (torch, transformers, safetensors; see scripts/README.md). No downloads: tiny
``LlamaForCausalLM`` / ``Qwen2ForCausalLM`` models built from configs (GQA, plain RoPE with no
``rope_scaling``), randomly initialised with a fixed torch seed -- RMSNorm gains and Qwen2's q/k/v
biases included. Run from the repository root:

    .venv-dev/bin/python scripts/make_llama_fixtures.py        # or /work/venv/bin/python

Same outputs as scripts/make_gpt2_fixtures.py (whose helpers it reuses): config.json and
model.safetensors as ``save_pretrained`` writes them, expected.safetensors (ids, logits, loss,
greedy and beam references) and generation.json.
"""
import math
import sys
from pathlib import Path

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_gpt2_fixtures import SEED, randomize_, write_fixture  # noqa: E402


def build(config_class, model_class, hidden, heads, tied, **kwargs):
    """A random model whose logits are O(1..10): embed/head std 2.5/sqrt(hidden)."""
    cfg = config_class(hidden_size=hidden, num_attention_heads=heads, head_dim=hidden // heads,
                       tie_word_embeddings=tied, num_hidden_layers=2, max_position_embeddings=64,
                       **kwargs)
    model = model_class(cfg).eval()
    randomize_(model, embed_std=2.5 / math.sqrt(hidden), head_std=2.5 / math.sqrt(hidden))
    rope = model.config.rope_parameters
    # transformers 5.x folds the old rope_theta/rope_scaling into rope_parameters (rope_scaling is
    # an alias of it): plain RoPE means exactly {rope_type: default, rope_theta}.
    if set(rope) != {"rope_type", "rope_theta"} or rope["rope_type"] != "default":
        raise RuntimeError(f"expected plain RoPE, got {rope}")
    if not tied and torch.equal(model.lm_head.weight, model.model.embed_tokens.weight):
        raise RuntimeError("untied lm_head equals embed_tokens")
    return model


def main():
    llama = (transformers.LlamaConfig, transformers.LlamaForCausalLM)
    torch.manual_seed(SEED + 10)
    write_fixture("llama_tiny", "Random Llama (vocab 101, hidden 32, 4 heads / 2 kv heads, head_dim 8, "
                  "2 layers, intermediate 64, rope_theta 1e4, rms_norm_eps 1e-6, tied), RMSNorm gains "
                  "randomised. ids/logits: 2 x 64.",
                  build(*llama, hidden=32, heads=4, tied=True, vocab_size=101,
                                      num_key_value_heads=2, intermediate_size=64, rope_theta=10000.0),
                  batch=2, seq_len=64, prompt_len=6)
    torch.manual_seed(SEED + 11)
    write_fixture("llama_untied", "Random Llama (vocab 113, hidden 48, 6 heads / 2 kv heads -> groups of "
                  "3, head_dim 8, 2 layers, intermediate 80, rope_theta 1e5, rms_norm_eps 1e-5, untied "
                  "lm_head). ids/logits: 2 x 64.",
                  build(*llama, hidden=48, heads=6, tied=False, vocab_size=113,
                                        num_key_value_heads=2, intermediate_size=80,
                                        rope_theta=100000.0, rms_norm_eps=1e-5),
                  batch=2, seq_len=64, prompt_len=6)
    torch.manual_seed(SEED + 12)
    write_fixture("qwen2_tiny", "Random Qwen2 (vocab 101, hidden 32, 4 heads / 2 kv heads, head_dim 8, "
                  "q/k/v biases, 2 layers, intermediate 64, rope_theta 1e6, rms_norm_eps 1e-6, tied). "
                  "ids/logits: 2 x 64.",
                  build(transformers.Qwen2Config, transformers.Qwen2ForCausalLM,
                                      hidden=32, heads=4, tied=True, vocab_size=101,
                                      num_key_value_heads=2, intermediate_size=64,
                                      rope_theta=1000000.0, rms_norm_eps=1e-6),
                  batch=2, seq_len=64, prompt_len=6)


if __name__ == "__main__":
    main()
