"""Make the Gemma 2, Gemma 3 and Mistral sliding-window reference fixtures (tests/fixtures/
gemma2_tiny, gemma3_tiny, mistral_window_tiny) with HF transformers, and check llama.cpp on
minillm's GGUF export of them.

Dev-only script (torch, transformers, safetensors, cyllama 0.2.18; see scripts/README.md). No
downloads: tiny models built from configs, randomly initialised with a fixed torch seed, every
feature of the family switched on, eager attention (transformers' reference path):

- gemma2_tiny: embeddings × √C, RMSNorm (1 + w), four norms a block, GeGLU (gelu_pytorch_tanh),
  query_pre_attn_scalar 12 (≠ head_dim 8), attention soft-cap 2 and final soft-cap 10 (small, so
  both bend the numbers), sliding window 4 on layers 0 and 2 of 3, grouped-query attention, tied.
- gemma3_tiny: Gemma 2's pieces without soft-caps, plus RMSNorm (1 + w) on each head's q and k,
  query_pre_attn_scalar 16, sliding window 6 on layers 0, 1 and 3 of 4 (layer_types), the
  sliding layers' own RoPE base (rope_local_base_freq 10, the global one 10,000).
- mistral_window_tiny: a Mistral whose sliding_window (5) is shorter than the prompts.

Prompts are 18 tokens and the greedy runs make 20 more: far past every window. Run from the
repository root with minillm importable (the write-direction and llama.cpp checks need it):

    PYTHONPATH=$PWD python scripts/make_gemma_fixtures.py [--llama-cpp-only] [gemma2_tiny] [gemma3_tiny] [mistral_window_tiny]

llama.cpp check (``llama_cpp_check``): minillm exports the fixture to GGUF (F32), llama.cpp
(cyllama 0.2.18) loads it: 16 greedy tokens and the prompt's logits against minillm reading the
same file. llama.cpp fixes some of Gemma's numbers itself (query scale 1/√head_dim, Gemma 3's
sliding pattern 6 and local RoPE base 10,000, no attention soft-cap in Gemma 3) and ignores a
llama file's sliding window, so the model it is given is the fixture with those numbers (the
weights are the fixture's; Gemma 3's 4 layers are repeated to 6, 0-3 then 0-1, so that llama.cpp's
pattern has its full layer): the figures land in the fixture's ``llama_cpp.json``.
"""
import dataclasses
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_gpt2_fixtures import FIXTURES, SEED, randomize_, write_fixture  # noqa: E402
from make_family_fixtures import check_minillm_writes_what_hf_reads  # noqa: E402

SHAPE = dict(vocab_size=64, hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
             head_dim=8, intermediate_size=16, max_position_embeddings=128,
             rms_norm_eps=1e-6, bos_token_id=None, eos_token_id=None, pad_token_id=None,
             attn_implementation="eager")
GEMMA2 = dict(SHAPE, num_hidden_layers=3, query_pre_attn_scalar=12, sliding_window=4,
              attn_logit_softcapping=2.0, final_logit_softcapping=10.0,
              hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
              rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
GEMMA3 = dict(SHAPE, num_hidden_layers=4, query_pre_attn_scalar=16, sliding_window=6,
              layer_types=["sliding_attention", "sliding_attention", "full_attention",
                           "sliding_attention"],
              hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
              rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 10000.0},
                               "sliding_attention": {"rope_type": "default", "rope_theta": 10.0}})
MISTRAL = dict(SHAPE, num_hidden_layers=2, sliding_window=5, tie_word_embeddings=True,
               rope_theta=10000.0)


def gemma_gains_(model, std=0.3):
    """Gemma's norms multiply by 1 + w: draw w ~ N(0, std) (randomize_ drew 1 + N(0, 0.1))."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(std * torch.randn_like(p))


def build(cls_config, cls_model, kwargs, gemma=True):
    model = cls_model(cls_config(**kwargs)).eval()
    randomize_(model, embed_std=2.5 / math.sqrt(32))
    if gemma:
        gemma_gains_(model)
    return model


@torch.no_grad()
def check_feature_matters(model, cls_config, cls_model, kwargs, feature):
    """The same weights with ``kwargs`` changed give other logits: the fixture exercises it."""
    other = cls_model(cls_config(**kwargs)).eval()
    other.load_state_dict(model.state_dict())
    ids = torch.arange(24).view(1, 24) % 64
    diff = float((model(ids).logits - other(ids).logits).abs().max())
    if diff < 0.05:
        raise RuntimeError(f"{feature} changes the logits by only {diff}")
    print(f"  without {feature}: logits differ by up to {diff:.2f}")


FAMILIES = {
    "gemma2_tiny": (transformers.Gemma2Config, transformers.Gemma2ForCausalLM, GEMMA2, True, 30, {
        "the window": {"sliding_window": 64}, "the attention soft-cap": {"attn_logit_softcapping": None},
        "the final soft-cap": {"final_logit_softcapping": None},
        "query_pre_attn_scalar": {"query_pre_attn_scalar": 8}},
        "Random Gemma 2 (vocab 64, hidden 32, 4 heads / 2 kv heads, head_dim 8, 3 layers, "
        "intermediate 16, tied): embeddings × √32, RMSNorm (1 + w) with w ~ N(0, 0.3), four norms a "
        "block, GeGLU (gelu_pytorch_tanh), query_pre_attn_scalar 12, attn_logit_softcapping 2, "
        "final_logit_softcapping 10, sliding_window 4 on layers 0 and 2. ids/logits: 2 x 24; "
        "prompts 18 tokens."),
    "gemma3_tiny": (transformers.Gemma3TextConfig, transformers.Gemma3ForCausalLM, GEMMA3, True, 31, {
        "the window": {"sliding_window": 64},
        "the local RoPE base": {"rope_parameters": {**GEMMA3["rope_parameters"], "sliding_attention":
                                                    {"rope_type": "default", "rope_theta": 10000.0}}},
        "query_pre_attn_scalar": {"query_pre_attn_scalar": 8}},
        "Random Gemma 3 text (vocab 64, hidden 32, 4 heads / 2 kv heads, head_dim 8, 4 layers, "
        "intermediate 16, tied): Gemma 2's pieces without soft-caps, RMSNorm (1 + w) on each "
        "head's q and k, query_pre_attn_scalar 16, sliding_window 6 on layers 0, 1, 3, the "
        "sliding layers' RoPE base 10 (global 10,000). ids/logits: 2 x 24; prompts 18 tokens."),
    "mistral_window_tiny": (transformers.MistralConfig, transformers.MistralForCausalLM, MISTRAL,
                            False, 32, {"the window": {"sliding_window": None}},
        "Random Mistral (vocab 64, hidden 32, 4 heads / 2 kv heads, head_dim 8, 2 layers, "
        "intermediate 16, tied) with sliding_window 5: every layer attends to the last 5 "
        "positions. ids/logits: 2 x 24; prompts 18 tokens."),
}


def make(name):
    cls_config, cls_model, kwargs, gemma, seed, features, description = FAMILIES[name]
    torch.manual_seed(SEED + seed)
    model = build(cls_config, cls_model, kwargs, gemma)
    for feature, change in features.items():
        check_feature_matters(model, cls_config, cls_model, {**kwargs, **change}, feature)
    write_fixture(name, description, model, batch=2, seq_len=24, prompt_len=18)
    (FIXTURES / name / "generation_config.json").unlink(missing_ok=True)
    check_minillm_writes_what_hf_reads(name, cls_model)


def llama_cpp_config(config):
    """The fixture's config with the numbers llama.cpp fixes for itself (module docstring)."""
    if not config.sandwich_norms:         # Mistral: llama.cpp's llama ignores the window
        return dataclasses.replace(config, sliding_window=None, layer_types=None)
    change = {"query_pre_attn_scalar": None}
    if config.qk_norm:                    # Gemma 3: pattern 6, local base 10,000, no attention cap
        change |= {"layer_types": tuple("full" if (i + 1) % 6 == 0 else "sliding"
                                        for i in range(config.n_layers)),
                   "rope_local_theta": 10000.0, "attn_softcap": None}
    return dataclasses.replace(config, **change)


def six_layers(config, params):
    """The fixture's blocks 0, 1, …, then 0, 1, … again up to six (the same weights): with only
    sliding layers llama.cpp's gemma3 has no full-attention cache and aborts."""
    from minillm.model.params import GPTParams
    named = params.named()
    out = {k: v for k, v in named.items() if not k.startswith("blocks.")}
    for i in range(6):
        j = i % config.n_layers
        out |= {k.replace(f"blocks.{j}.", f"blocks.{i}.", 1): v for k, v in named.items()
                if k.startswith(f"blocks.{j}.")}
    config = dataclasses.replace(config, n_layers=6, layer_types=None)
    return config, GPTParams.from_named(out, config)


def llama_cpp_check(name, n_new=16):
    """llama.cpp reads minillm's GGUF export; figures into <fixture>/llama_cpp.json."""
    from minillm import GPT
    from minillm.decoding.generate import generate
    from minillm.loading import load_model
    from minillm.tokenizer import Tokenizer
    from llama_cpp_ref import LlamaCpp
    plain = GPT.from_pretrained(FIXTURES / name)
    config, params = plain.config, plain.params
    if config.qk_norm and config.n_layers < 6:   # llama.cpp's gemma3 needs a full layer (the 6th)
        config, params = six_layers(config, params)
    model = GPT(llama_cpp_config(config), params)
    tok = Tokenizer({bytes([i]): i for i in range(model.config.vocab_size)}, {})
    prompt = [int(i) % model.config.vocab_size for i in range(1, 55, 3)]     # 18 tokens
    with tempfile.TemporaryDirectory() as d:
        path = model.save_gguf(Path(d) / "m.gguf", tok)
        back, _ = load_model(path)
        with LlamaCpp(path, n_ctx=len(prompt) + n_new + 8) as ref:
            theirs_logits = ref.logits(prompt)                                 # [T, V]
            theirs, margins = ref.greedy(prompt, n_new)
    ours_logits = back(np.array(prompt))
    diff = float(np.abs(theirs_logits - ours_logits).max())
    top = float(np.abs(theirs_logits).max())
    ours = [s.id for s in generate(back, prompt, n_new, temperature=0, stop_at_eos=False)]
    figures = {"llama_cpp": "cyllama 0.2.18 (llama.cpp b9190), F32 file, F32 KV cache, no flash "
                            "attention",
               "config_changes": {k: v for k, v in dataclasses.asdict(model.config).items()
                                  if v != dataclasses.asdict(plain.config)[k]},
               "prompt": prompt, "max_abs_diff_logits": diff, "max_abs_logit": top,
               "relative": diff / top, "greedy_equal": ours == theirs, "greedy": theirs,
               "min_margin": min(margins)}
    (FIXTURES / name / "llama_cpp.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"  llama.cpp: max|Δlogits| {diff:.2e} (max|logit| {top:.2f}, {diff / top:.1e}), "
          f"{n_new} greedy tokens {'equal' if ours == theirs else 'DIFFER'}")
    if ours != theirs or diff > 1e-3 * top:
        raise RuntimeError(f"{name}: llama.cpp disagrees with minillm")


if __name__ == "__main__":
    only_llama_cpp = "--llama-cpp-only" in sys.argv
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or list(FAMILIES)
    for fixture in names:
        if not only_llama_cpp:
            make(fixture)
        llama_cpp_check(fixture)
