"""Mistral: a Llama whose every layer attends to the last ``sliding_window`` positions only
(``model/variants.py``), so attention's cost per token stays bounded however long the text;
information from further back still travels up through the layers.

HF names: ``model_type`` "mistral", Llama's keys and tensors plus ``sliding_window`` (null: no
window). GGUF: no architecture of its own: llama.cpp runs Mistral files as ``llama`` (without a
window); minillm's exporter writes ``llama.attention.sliding_window``, read back by llama.py.
"""
from __future__ import annotations

from minillm.families import Family


def hf_switches(d: dict) -> dict:
    """Every layer's window (config.json ``sliding_window``; null: none)."""
    return {"sliding_window": d.get("sliding_window")}


def write_hf(config) -> dict:
    return {"sliding_window": config.sliding_window}


def slides_everywhere(c) -> str | None:
    """Writing: transformers' Mistral slides on every layer, with no q/k norms or biases (a
    Gemma's window is its own: families/gemma2.py)."""
    if not c.sandwich_norms and c.sliding_window is not None and \
            (c.qk_norm or c.attn_bias or "full" in c.layer_types):
        return ("Hugging Face's mistral models slide on every layer, with no q/k norms "
                "or biases: this sliding-window config cannot be saved as one")
    return None


FAMILY = Family(
    name="mistral", base="llama",
    hf_refusals=((60, slides_everywhere),),
    summary="Llama with a sliding window on every layer",
    hf_model_types=("mistral",), hf_architecture="MistralForCausalLM",
    hf_keys=("sliding_window",), hf_switches=hf_switches, write_hf=write_hf,
    hf_marks=lambda c: c.sliding_window is not None,
    chat_formats=("mistral", "mistral-tekken"),
    refuses=("layer_types other than full_attention (every layer slides alike)",))
