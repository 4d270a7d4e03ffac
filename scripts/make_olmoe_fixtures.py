"""Make the OLMoE reference fixture (tests/fixtures/olmoe_tiny) with HF transformers, and check
llama.cpp on minillm's GGUF export of it.

Dev-only script (torch, transformers, safetensors, cyllama; see scripts/README.md). No downloads:
a tiny ``OlmoeForCausalLM`` built from a config, randomly initialised with a fixed torch seed,
every feature of the family on: Llama's pre-norms, q_norm over H·D = 32 and k_norm over KV·D = 16
(whole width, random gains), grouped-query attention (4 heads / 2 kv heads), 4 experts, top-2,
norm_topk_prob false (OLMoE's releases: the two weights are NOT rescaled to sum to 1; checked to
change the logits), untied head, clip_qkv null.

As scripts/make_moe_fixtures.py (whose helpers it reuses): routers N(0, 0.3²), the smallest gap
between the k-th and (k+1)-th router logit over every token the references route must be >= 1e-4;
minillm reads the fixture and writes it back (transformers reads that folder to the same logits);
llama.cpp (cyllama 0.2.18) runs minillm's F32 GGUF export: 16 greedy tokens and max |Δ logits|
against minillm, stored in generation.json under "llama_cpp".

subtle: llama.cpp's olmoe loads ``attn_k_norm`` as C wide, so it runs no grouped-query attention
(minillm refuses to export one). Its check is therefore made on the fixture's sibling with 4 kv
heads (same seed and recipe, not stored): transformers -> minillm (logits within 1e-4 · max|logit|,
recorded) -> minillm's F32 GGUF -> llama.cpp.

norm_topk_prob true is honoured too: the same weights under a config.json saying true, read by
minillm, against transformers' logits on the fixture's ids (recorded under "norm_topk_prob_true").

    PYTHONPATH=$PWD .venv-dev/bin/python scripts/make_olmoe_fixtures.py
"""
import json
import math
import sys
import tempfile
from pathlib import Path

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_family_fixtures import (check_feature_matters, check_llama_cpp,  # noqa: E402
                                  check_minillm_writes_what_hf_reads)
from make_gpt2_fixtures import FIXTURES, SEED, write_fixture  # noqa: E402
from make_moe_fixtures import MIN_ROUTER_GAP, RouterGaps, randomize_moe_  # noqa: E402

NAME = "olmoe_tiny"
SHAPE = dict(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, intermediate_size=16, max_position_embeddings=128,
             rms_norm_eps=1e-5, bos_token_id=None, eos_token_id=None, pad_token_id=None,
             num_experts=4, num_experts_per_tok=2, tie_word_embeddings=False, clip_qkv=None,
             rope_parameters={"rope_type": "default", "rope_theta": 1e4})


def build_olmoe(norm_topk_prob=False, **change):
    cfg = transformers.OlmoeConfig(norm_topk_prob=norm_topk_prob, **{**SHAPE, **change})
    return transformers.OlmoeForCausalLM(cfg).eval()


@torch.no_grad()
def check_renormalised(model):
    """The fixture's weights with norm_topk_prob true: minillm reading that folder against
    transformers (the routing decisions are the fixture's: renormalising changes no choice)."""
    import numpy as np
    from minillm.loading import load_model
    from safetensors.torch import load_file
    other = build_olmoe(norm_topk_prob=True)
    other.load_state_dict(model.state_dict())
    ids = load_file(FIXTURES / NAME / "expected.safetensors")["ids"]
    want = other(ids).logits.numpy()                                  # [B, T, V]
    with tempfile.TemporaryDirectory() as tmp:
        other.save_pretrained(tmp)
        ours = load_model(tmp, fast=False)[0]
        if not ours.config.norm_topk_prob:
            raise RuntimeError("minillm read norm_topk_prob true as false")
        diff = float(np.abs(ours(ids.numpy()) - want).max())
    scale = float(np.abs(want).max())
    if diff > 1e-4 * scale:
        raise RuntimeError(f"norm_topk_prob true: minillm differs from transformers by {diff}")
    print(f"  norm_topk_prob true: max |Δlogits| {diff:.2e} (max|logit| {scale:.2f})")
    return {"max_abs_diff_logits": diff, "max_abs_logit": scale}


@torch.no_grad()
def check_llama_cpp_on_the_mha_sibling():
    """The recipe with 4 kv heads (llama.cpp's olmoe has no GQA): minillm reads transformers'
    folder (logits compared), then check_llama_cpp runs llama.cpp on minillm's GGUF export."""
    import numpy as np
    from minillm.loading import load_model
    torch.manual_seed(SEED + 33)
    sibling = build_olmoe(num_key_value_heads=4)
    randomize_moe_(sibling, embed_std=1.0, head_std=2.5 / math.sqrt(32))
    prompt = list(range(1, 60, 3))                            # check_llama_cpp's 20 ids
    with tempfile.TemporaryDirectory() as tmp:
        sibling.save_pretrained(tmp)
        (Path(tmp) / "generation.json").write_text("{}\n")   # check_llama_cpp records here
        gaps = RouterGaps(sibling, 2)
        ids = sibling.generate(torch.tensor([prompt]), max_new_tokens=16, do_sample=False,
                               eos_token_id=None, pad_token_id=0)
        want = sibling(ids).logits[0].numpy()                 # [36, V]
        gaps.close()
        ours = load_model(tmp, fast=False)[0](ids[0].numpy())
        check_llama_cpp(tmp)                 # (FIXTURES / an absolute path is that path)
        result = json.loads((Path(tmp) / "generation.json").read_text())["llama_cpp"]
    if gaps.smallest < MIN_ROUTER_GAP:
        raise RuntimeError(f"the sibling's router gap {gaps.smallest:.2g} < {MIN_ROUTER_GAP}")
    diff, scale = float(np.abs(ours - want).max()), float(np.abs(want).max())
    if diff > 1e-4 * scale:
        raise RuntimeError(f"the sibling: minillm differs from transformers by {diff}")
    return {"model": "olmoe_tiny's recipe with 4 kv heads (torch seed "
                     f"{SEED + 33}; llama.cpp's olmoe has no grouped-query attention)",
            "minillm_vs_transformers_max_abs_diff": diff, "transformers_max_abs_logit": scale,
            "router_smallest_gap": gaps.smallest, **result}


def main():
    torch.manual_seed(SEED + 32)
    model = build_olmoe()
    randomize_moe_(model, embed_std=1.0, head_std=2.5 / math.sqrt(32))
    attn = model.model.layers[0].self_attn
    if attn.q_norm.weight.shape != (32,) or attn.k_norm.weight.shape != (16,):
        raise RuntimeError("expected q_norm over H·D = 32 and k_norm over KV·D = 16")
    check_feature_matters(model, build_olmoe(norm_topk_prob=True), "norm_topk_prob false")
    gaps = RouterGaps(model, model.config.num_experts_per_tok)
    write_fixture(NAME, "Random OLMoE (vocab 64, hidden 32, 4 heads / 2 kv heads, 2 layers, "
                  "pre-norms, q_norm over H·D = 32 and k_norm over KV·D = 16 with random gains, "
                  "4 experts, top-2, norm_topk_prob false, intermediate 16, routers N(0, 0.3²), "
                  "rope_theta 1e4, untied head). ids/logits: 2 x 24; prompts 18 tokens.",
                  model, batch=2, seq_len=24, prompt_len=18)
    gaps.close()
    if gaps.smallest < MIN_ROUTER_GAP:
        raise RuntimeError(f"{NAME}: a router gap of {gaps.smallest:.2g} (< {MIN_ROUTER_GAP}): "
                           f"change the seed")
    print(f"  smallest router gap (k-th vs (k+1)-th router logit): {gaps.smallest:.2g}")
    check_minillm_writes_what_hf_reads(NAME, transformers.OlmoeForCausalLM)
    meta_path = FIXTURES / NAME / "generation.json"
    meta = json.loads(meta_path.read_text())
    meta["router_smallest_gap"] = gaps.smallest
    meta["norm_topk_prob_true"] = check_renormalised(model)
    meta["llama_cpp"] = check_llama_cpp_on_the_mha_sibling()
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")


if __name__ == "__main__":
    main()
