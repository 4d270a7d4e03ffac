"""Gemma 3: Gemma 2's block (gemma2.py) with per-head q/k norms (``qk_norm``) in place of the
scores' soft-cap, five sliding layers in six (all but 5, 11, 17, …) and a RoPE base of its own
on the sliding layers (``rope_local_theta``, 10,000; the full layers' 1,000,000).

HF names: ``model_type`` "gemma3_text" (the text model of Gemma 3), Gemma 2's keys plus
``sliding_window_pattern`` and ``rope_local_base_freq`` (or transformers 5's ``rope_parameters``
per layer type); Gemma 2's tensors with ``self_attn.{q,k}_norm``. GGUF: ``general.architecture``
"gemma3", ``rope.freq_base_swa``; llama.cpp fixes the full layers to every 6th (io/gguf/gemma.py).
"""
from __future__ import annotations

from minillm.families import Family
from minillm.families import gemma2

def not_all_three(c) -> str | None:
    """Writing (Gemma 2 and 3 alike): transformers' Gemma has sandwich norms, embeddings × √C and GeGLU together, and
    only a Gemma's config.json says soft-caps, query_pre_attn_scalar and rope_local_theta."""
    gemma = (c.sandwich_norms, c.embed_scale, c.ffn) == (True, True, "geglu")
    if gemma != (c.sandwich_norms or c.embed_scale or c.ffn == "geglu"):
        return ("Hugging Face's gemma models have sandwich norms, embeddings × √C and "
                "GeGLU together: a config with only some of them cannot be saved as one")
    if not gemma and (c.attn_softcap, c.final_softcap, c.query_pre_attn_scalar,
                      c.rope_local_theta) != (None,) * 4:
        return ("soft-capping, query_pre_attn_scalar and rope_local_theta are Gemma's: "
                "a Llama-family config.json cannot say them")
    return None


FAMILY = Family(
    name="gemma3", base="llama",
    hf_refusals=((40, not_all_three),),   # (Gemma 2's too)
    summary="Gemma 2 with q/k norms, 5 sliding layers in 6 and a local RoPE base",
    hf_model_types=("gemma3_text",), hf_architecture="Gemma3ForCausalLM",
    switches={**gemma2.FAMILY.switches, "qk_norm": True},
    hf_keys=gemma2.FAMILY.hf_keys + ("sliding_window_pattern", "rope_local_base_freq"),
    read_hf=gemma2.read_hf, write_hf=gemma2.write_hf,
    hf_marks=lambda c: c.arch == "llama" and c.sandwich_norms and c.qk_norm,
    tensor_switch="sandwich_norms", hf_tensors=gemma2.HF_TENSORS,
    gguf_architectures=("gemma3",), gguf_switches=gemma2.gguf_switches,
    gguf_tensors=gemma2.GGUF_TENSORS,   # llama.cpp's: every 6th layer full, the sliding RoPE 10,000
    gguf_fixed={"full_every": 6, "big_layers": 62, "caps": (None, None), "local_theta": 10000.0,
                "needs_window": False},
    gguf_keys=("attention.sliding_window", "rope.freq_base_swa", "final_logit_softcapping",
               "attention.sliding_window_pattern", "attention.query_pre_attn_scalar"),
    chat_formats=("gemma3",),
    refuses=gemma2.FAMILY.refuses[:3] + ("RoPE scaling on the sliding layers",
                                         "in GGUF: fewer than 6 layers run in llama.cpp"))
