"""OLMo 2: a Llama whose block normalises each sub-layer's OUTPUT (``post_norms``:
x + N(A(x)), not x + A(N(x))) and whose q/k norms span all heads at once (``qk_norm_whole``:
q_norm [H·D], k_norm [KV·D]); both are there to keep training stable.

HF names: ``model_type`` "olmo2"; ``post_attention_layernorm`` and ``post_feedforward_layernorm``
are minillm's norm1 and norm2 (after the sub-layers), ``self_attn.{q,k}_norm.weight``.
GGUF: ``general.architecture`` "olmo2", ``post_attention_norm`` / ``post_ffw_norm`` (no
attn_norm / ffn_norm), rotate-half RoPE; llama.cpp requires ``output.weight``.
Refused: ``attention_bias`` true; OLMo 3's ``olmo2.attention.sliding_window``.
"""
from __future__ import annotations

from minillm.families import Family


def gguf_switches(meta: dict, n_layers: int, d_model: int, n_heads: int) -> dict:
    """OLMo 3's sliding window (written as olmo2) is refused."""
    if meta.get("olmo2.attention.sliding_window"):
        raise ValueError("olmo2.attention.sliding_window (OLMo 3's) is not supported")
    return {}


def gguf_problems(c) -> list:
    """What llama.cpp's olmo2 cannot run (io/gguf/families.py's family_arch refuses it)."""
    return [("a head width other than C / H", c.head_dim is not None),
            ("per-head q/k norms", not c.qk_norm_whole),
            ("tied embeddings (llama.cpp's olmo2 needs output.weight)", c.tie_embeddings),
            ("layers without RoPE", bool(c.nope_layers))]


def o_proj_bias(c) -> str | None:
    """Writing: OLMo 2's and SmolLM3's attention_bias puts an o_proj bias too (minillm has none)."""
    if (c.post_norms or c.nope_layers) and c.attn_bias:
        return ("Hugging Face's olmo2 and smollm3 models with Q, K, V biases have an "
                "o_proj bias too: this config cannot be saved as one")
    return None


FAMILY = Family(
    name="olmo2", base="llama",
    hf_refusals=((100, o_proj_bias),),   # (SmolLM3's too: one message names both)
    summary="Llama with norms after the sub-layers and whole-width q/k norms",
    hf_model_types=("olmo2",), hf_architecture="Olmo2ForCausalLM",
    switches={"post_norms": True, "qk_norm": True, "qk_norm_whole": True},
    refuses_attention_bias=True, tensor_switch="post_norms", hf_marks=lambda c: c.post_norms,
    hf_tensors={"norm1.weight": ("model.layers.{i}.post_attention_layernorm.weight", False),
                "norm2.weight": ("model.layers.{i}.post_feedforward_layernorm.weight", False)},
    gguf_architectures=("olmo2",), gguf_switches=gguf_switches, gguf_problems=gguf_problems,
    gguf_marks=lambda c: c.post_norms, gguf_rank=20,
    gguf_tensors={"norm1.weight": ("post_attention_norm.weight", False),
                  "norm2.weight": ("post_ffw_norm.weight", False)},
    chat_formats=("olmo2",),
    refuses=("attention_bias=true", "a sliding window (OLMo 3)",
             "in GGUF: tied embeddings, per-head q/k norms"))
