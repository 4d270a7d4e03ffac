"""Make the mixture-of-experts reference fixtures (tests/fixtures/qwen3_moe_tiny, mixtral_tiny) with
HF transformers, and check llama.cpp on minillm's GGUF export of each.

Dev-only script (torch, transformers, safetensors, cyllama; see scripts/README.md). No downloads:
tiny ``Qwen3MoeForCausalLM`` / ``MixtralForCausalLM`` models built from configs, randomly
initialised with a fixed torch seed:

- qwen3_moe_tiny: 8 experts, top-2, norm_topk_prob true (as the released Qwen3-MoE models), q/k
  norms with random gains, head_dim 8 with hidden 32 and 4 heads / 2 kv heads, 2 layers,
  moe_intermediate_size 8, tied embeddings;
- mixtral_tiny: 4 experts, top-2 (Mixtral always renormalises), hidden 32, 4 heads / 2 kv heads,
  2 layers, intermediate 16, untied head.

The routers are drawn N(0, 0.3²) (router logits of std ~1.7: the second expert's weight matters)
and every router decision the references make (logits, greedy, beam) is recorded: the smallest
gap between the k-th and the (k+1)-th router logit is printed and must be >= 1e-4, so float32
rounding cannot
send a token to another expert (``torch.topk`` documents no order for ties; minillm takes the
lower index, model/moe.py). Then, like scripts/make_family_fixtures.py: minillm reads each fixture
and writes it back (transformers reads that folder to the same logits), and exports it to GGUF
(F32), which llama.cpp (cyllama 0.2.18) loads: max |Δ logits| against minillm and 16 greedy
tokens, stored in the fixture's generation.json under "llama_cpp".

    PYTHONPATH=$PWD .venv-dev/bin/python scripts/make_moe_fixtures.py [qwen3_moe_tiny] [mixtral_tiny]
"""
import json
import math
import sys
from pathlib import Path

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_family_fixtures import check_llama_cpp, check_minillm_writes_what_hf_reads  # noqa: E402
from make_gpt2_fixtures import FIXTURES, SEED, write_fixture  # noqa: E402

SHAPE = dict(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, head_dim=8, max_position_embeddings=128, rms_norm_eps=1e-6,
             bos_token_id=None, eos_token_id=None, num_experts_per_tok=2)
MIN_ROUTER_GAP = 1e-4          # in router logits


def randomize_moe_(model, embed_std, head_std=None, gain_std=0.3, router_std=0.3):
    """Every parameter redrawn: matrices N(0, 1/fan_in) (experts: each expert's fan-in), the
    routers N(0, router_std²), embeddings N(0, embed_std²), norm gains 1 + N(0, gain_std²)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or "layernorm" in name:
                p.copy_(1.0 + gain_std * torch.randn_like(p))
            elif name.endswith("embed_tokens.weight"):
                p.normal_(0.0, embed_std)
            elif name == "lm_head.weight":
                p.normal_(0.0, head_std or embed_std)
            elif name.endswith("mlp.gate.weight"):
                p.normal_(0.0, router_std)
            elif p.ndim in (2, 3):                          # [out, in] or experts [E, out, in]
                p.normal_(0.0, 1.0 / math.sqrt(p.shape[-1]))
            else:
                raise RuntimeError(f"no init rule for {name} {tuple(p.shape)}")


class RouterGaps:
    """Forward hooks on every router: the smallest gap between the k-th and (k+1)-th largest
    router logit (the probabilities' order) over every token routed while the hooks are on."""

    def __init__(self, model, k):
        self.k, self.smallest, self.hooks = k, math.inf, []
        for name, module in model.named_modules():
            if name.endswith("mlp.gate"):
                self.hooks.append(module.register_forward_hook(self.record))

    def record(self, module, inputs, output):
        logits = output[0] if isinstance(output, tuple) else output     # [N, E]
        z = logits.float().sort(dim=-1, descending=True).values            # [N, E]
        self.smallest = min(self.smallest, float((z[:, self.k - 1] - z[:, self.k]).min()))

    def close(self):
        for h in self.hooks:
            h.remove()


def build_qwen3_moe():
    cfg = transformers.Qwen3MoeConfig(num_experts=8, moe_intermediate_size=8,
                                      intermediate_size=48, norm_topk_prob=True,
                                      decoder_sparse_step=1, mlp_only_layers=[],
                                      tie_word_embeddings=True, attention_bias=False,
                                      rope_parameters={"rope_type": "default", "rope_theta": 1e6},
                                      **SHAPE)
    model = transformers.Qwen3MoeForCausalLM(cfg).eval()
    randomize_moe_(model, embed_std=2.5 / math.sqrt(32))
    return model


def build_mixtral():
    cfg = transformers.MixtralConfig(num_local_experts=4, intermediate_size=16,
                                     tie_word_embeddings=False, sliding_window=None,
                                     rope_parameters={"rope_type": "default", "rope_theta": 1e4},
                                     **SHAPE)
    model = transformers.MixtralForCausalLM(cfg).eval()
    randomize_moe_(model, embed_std=1.0, head_std=2.5 / math.sqrt(32))
    return model


def make(name, seed, description, build, model_class):
    torch.manual_seed(SEED + seed)
    model = build()
    gaps = RouterGaps(model, model.config.num_experts_per_tok)
    write_fixture(name, description, model, batch=2, seq_len=24, prompt_len=18)
    gaps.close()
    if gaps.smallest < MIN_ROUTER_GAP:
        raise RuntimeError(f"{name}: a router gap of {gaps.smallest:.2g} (< {MIN_ROUTER_GAP}): "
                           f"change the seed")
    print(f"  smallest router gap (k-th vs (k+1)-th router logit): {gaps.smallest:.2g}")
    check_minillm_writes_what_hf_reads(name, model_class)
    check_llama_cpp(name)                   # llama.cpp on minillm's F32 GGUF: generation.json
    meta_path = FIXTURES / name / "generation.json"
    meta = json.loads(meta_path.read_text())
    meta["router_smallest_gap"] = gaps.smallest
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")


def main(names=("qwen3_moe_tiny", "mixtral_tiny")):
    if "qwen3_moe_tiny" in names:
        make("qwen3_moe_tiny", 30, "Random Qwen3-MoE (vocab 64, hidden 32, 4 heads / 2 kv heads, "
             "head_dim 8, RMSNorm on each head's q and k with random gains, 2 layers, 8 experts, "
             "top-2, norm_topk_prob true, moe_intermediate_size 8, routers N(0, 0.3²), rope_theta "
             "1e6, tied). ids/logits: 2 x 24; prompts 18 tokens.",
             build_qwen3_moe, transformers.Qwen3MoeForCausalLM)
    if "mixtral_tiny" in names:
        make("mixtral_tiny", 31, "Random Mixtral (vocab 64, hidden 32, 4 heads / 2 kv heads, "
             "2 layers, 4 experts, top-2 (renormalised), intermediate 16, routers N(0, 0.3²), "
             "untied head). ids/logits: 2 x 24; prompts 18 tokens.",
             build_mixtral, transformers.MixtralForCausalLM)


if __name__ == "__main__":
    main(sys.argv[1:] or ("qwen3_moe_tiny", "mixtral_tiny"))
