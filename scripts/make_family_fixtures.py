"""Make the Llama 3.x, Qwen3, Phi-3, OLMo 2 and SmolLM3 reference fixtures (tests/fixtures/
llama3_tiny, qwen3_tiny, phi3_tiny, olmo2_tiny, smollm3_tiny) with HF transformers.

Dev-only script (torch, transformers, safetensors; see scripts/README.md). No downloads: tiny
``LlamaForCausalLM`` / ``Qwen3ForCausalLM`` models built from configs, randomly initialised with a
fixed torch seed, every feature of the family switched on:

- llama3_tiny: RoPE scaling rope_type "llama3" chosen so the head's four frequency pairs fall in
  all three of its regions (theta 500, head_dim 8 -> wavelengths 6.3, 29.7, 140, 664 positions;
  original_max_position_embeddings 64, low/high_freq_factor 1/4 -> bounds 16 and 64: one pair
  kept, one smoothed, two stretched by factor 8); grouped-query attention; tied embeddings.
- qwen3_tiny: RMSNorm on each head's q and k (gains random), head_dim 8 with hidden 24 and 4
  heads (H·D = 32 ≠ C), grouped-query attention, no q/k/v bias, tied embeddings.

- phi3_tiny: Q, K, V fused in qkv_proj and gate, up in gate_up_proj; GQA; tied.
- olmo2_tiny: RMSNorm after attention and after the MLP (none before), q_norm / k_norm over the
  whole projected width (H·D = 32, KV·D = 16; gains random); GQA; untied (llama.cpp's olmo2
  needs output.weight).
- smollm3_tiny: 4 layers, no_rope_layer_interval 4 -> no_rope_layers [1, 1, 1, 0] (layer 3
  without RoPE, the pattern llama.cpp's smollm3 fixes); GQA; tied.

For the last three the script also exports minillm's reading of the fixture to an F32 GGUF and
has llama.cpp (cyllama 0.2.18, scripts/llama_cpp_ref.py) read it: logits of a 20-id prompt
within 1e-3 · max|logit| of minillm's on the same file and 16 greedy tokens equal, recorded
in the fixture's generation.json under "llama_cpp".

Prompts are 18 tokens (longer than 16). Run from the repository root:

    PYTHONPATH=$PWD:$PWD/scripts .venv-dev/bin/python scripts/make_family_fixtures.py \
        [llama3_tiny] [qwen3_tiny] [phi3_tiny] [olmo2_tiny] [smollm3_tiny]

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


# ---- Phi-3, OLMo 2, SmolLM3 ----------------------------------------------------------------------
LATER = ("phi3_tiny", "olmo2_tiny", "smollm3_tiny")
LATER_SHAPE = dict(SHAPE, hidden_size=32)


def build_phi3():
    cfg = transformers.Phi3Config(rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                                  original_max_position_embeddings=128, sliding_window=None,
                                  pad_token_id=None, **LATER_SHAPE)
    model = transformers.Phi3ForCausalLM(cfg).eval()
    randomize_(model, embed_std=2.5 / math.sqrt(32), gain_std=0.3)
    layer = model.model.layers[0]
    if layer.self_attn.qkv_proj.weight.shape != (32 + 2 * 16, 32) \
            or layer.mlp.gate_up_proj.weight.shape != (64, 32):
        raise RuntimeError("expected fused qkv_proj [H·D + 2·KV·D = 64, 32], gate_up_proj [2F, 32]")
    return model


def build_olmo2():
    cfg = transformers.Olmo2Config(rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                                   pad_token_id=None, **dict(LATER_SHAPE, tie_word_embeddings=False))
    model = transformers.Olmo2ForCausalLM(cfg).eval()
    randomize_(model, embed_std=2.5 / math.sqrt(32), gain_std=0.3)
    attn = model.model.layers[0].self_attn
    if attn.q_norm.weight.shape != (32,) or attn.k_norm.weight.shape != (16,):
        raise RuntimeError("expected q_norm over H·D = 32 and k_norm over KV·D = 16")
    return model


SMOLLM3_SHAPE = dict(LATER_SHAPE, num_hidden_layers=4, intermediate_size=16)


def build_smollm3():
    cfg = transformers.SmolLM3Config(rope_parameters={"rope_type": "default", "rope_theta": 1000.0},
                                     pad_token_id=None, **SMOLLM3_SHAPE)
    model = transformers.SmolLM3ForCausalLM(cfg).eval()
    randomize_(model, embed_std=2.5 / math.sqrt(32), gain_std=0.3)
    if model.config.no_rope_layers != [1, 1, 1, 0]:
        raise RuntimeError(f"expected layer 3 without RoPE, got {model.config.no_rope_layers}")
    check_feature_matters(model, transformers.SmolLM3ForCausalLM(transformers.SmolLM3Config(
        rope_parameters={"rope_type": "default", "rope_theta": 1000.0}, pad_token_id=None,
        no_rope_layers=[1, 1, 1, 1], **SMOLLM3_SHAPE)), "the layer without RoPE")
    return model


def check_llama_cpp(name):
    """llama.cpp (cyllama 0.2.18, build b9190) reads minillm's F32 GGUF export of the fixture:
    the prompt's logits (max |Δ| against minillm reading the same file, bound 1e-3 · max|logit|)
    and 16 greedy tokens; the figures go into the fixture's generation.json ("llama_cpp")."""
    import json

    import numpy as np
    from llama_cpp_ref import LlamaCpp
    from minillm.decoding.generate import generate
    from minillm.loading import load_model
    from minillm.tokenizer import Tokenizer
    model, _ = load_model(FIXTURES / name)
    V = model.config.vocab_size
    prompt = list(range(1, 60, 3))                                # 20 ids, as check_gguf_export
    with tempfile.TemporaryDirectory() as tmp:
        path = model.save_gguf(Path(tmp) / "m.gguf", Tokenizer({bytes([i]): i for i in range(V)}, {}))
        back, _ = load_model(path)
        with LlamaCpp(path, n_ctx=len(prompt) + 32) as ref:
            theirs_logits = ref.logits(prompt)                      # [T, V]
            theirs, margins = ref.greedy(prompt, 16)
    diff = float(np.abs(theirs_logits - back(np.array(prompt))).max())
    scale = float(np.abs(theirs_logits).max())
    ours = [s.id for s in generate(back, prompt, 16, temperature=0, stop_at_eos=False)]
    result = {"build": "cyllama 0.2.18 (llama.cpp b9190)", "dtype": "f32", "prompt": prompt,
              "max_abs_diff_logits": diff, "max_abs_logit": scale, "bound": 1e-3 * scale,
              "greedy_16_equal": ours == theirs, "greedy_16": theirs,
              "smallest_margin": float(min(margins))}
    meta_path = FIXTURES / name / "generation.json"
    meta = json.loads(meta_path.read_text())
    meta["llama_cpp"] = result
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    print(f"  llama.cpp on minillm's GGUF: max |Δlogits| {diff:.2e} (bound {1e-3 * scale:.2e}), "
          f"greedy 16 equal: {ours == theirs}")
    if diff > 1e-3 * scale or ours != theirs:
        raise RuntimeError(f"{name}: llama.cpp disagrees with minillm's GGUF export")


def make_later(name):
    """phi3_tiny, olmo2_tiny, smollm3_tiny: build, write, check both directions and llama.cpp."""
    torch.manual_seed(SEED + 30 + LATER.index(name))
    build, cls, text = {
        "phi3_tiny": (build_phi3, transformers.Phi3ForCausalLM,
                      "Random Phi-3 (vocab 64, hidden 32, 4 heads / 2 kv heads, 2 layers, "
                      "intermediate 32, fused qkv_proj [64, 32] and gate_up_proj [64, 32], "
                      "rope_theta 1e4, no sliding window, tied)."),
        "olmo2_tiny": (build_olmo2, transformers.Olmo2ForCausalLM,
                       "Random OLMo 2 (vocab 64, hidden 32, 4 heads / 2 kv heads, 2 layers, "
                       "intermediate 32, RMSNorm after attention and after the MLP (no pre-norms), "
                       "q_norm over H·D = 32 and k_norm over KV·D = 16 with random gains, "
                       "rope_theta 1e4, untied)."),
        "smollm3_tiny": (build_smollm3, transformers.SmolLM3ForCausalLM,
                         "Random SmolLM3 (vocab 64, hidden 32, 4 heads / 2 kv heads, 4 layers, "
                         "intermediate 16, no_rope_layer_interval 4: no_rope_layers [1, 1, 1, 0], "
                         "layer 3 without RoPE, rope_theta 1e3, tied)."),
    }[name]
    write_fixture(name, text + " ids/logits: 2 x 24; prompts 18 tokens.", build(),
                  batch=2, seq_len=24, prompt_len=18)
    check_minillm_writes_what_hf_reads(name, cls)
    try:
        check_llama_cpp(name)
    except ImportError as exc:
        print(f"  (llama.cpp check skipped: {exc})")


if __name__ == "__main__":
    chosen = sys.argv[1:] or ("llama3_tiny", "qwen3_tiny") + LATER
    main([n for n in chosen if n not in LATER])
    for n in chosen:
        if n in LATER:
            make_later(n)
