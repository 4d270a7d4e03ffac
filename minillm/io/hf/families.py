"""The parts of ``config.json`` that ``config.py`` reads and writes for several families at once: a
mixture of experts' keys (read as each family's ``experts`` declares them: minillm/families/),
Gemma 2 / 3's keys written back, OLMoE's names. Each family's own reading (its switches, defaults
and refusals) is its module in minillm/families/."""
from __future__ import annotations

import reprlib

from minillm.config import ModelConfig
from minillm.families import families
from minillm.families.gemma2 import LAYER_TYPES, read_hf, write_hf


GEMMA_LAYER_TYPES = LAYER_TYPES        # (its home: minillm/families/gemma2.py)


def _gemma(d: dict, model_type: str) -> ModelConfig:
    """Deprecated: ``minillm.families.gemma2.read_hf`` reads Gemma 2 / 3's config.json."""
    return read_hf({**d, "model_type": model_type})


def _experts(d: dict, model_type: str, spec: dict | None) -> dict:
    """A mixture of experts' ModelConfig fields from config.json ({} for a dense family), as the
    family's ``experts`` declares them (families/mixtral.py, qwen3_moe.py, olmoe.py):
    ``num_experts`` (or ``num_local_experts``: Mixtral's name, which transformers 5 writes for
    both), ``num_experts_per_tok``, the experts' F (``spec["d_ff"]``, else intermediate_size),
    ``norm_topk_prob`` unless the family always renormalises. Layers with a dense FFN
    (``decoder_sparse_step`` > 1, ``mlp_only_layers``) are refused."""
    if spec is None:
        return {}
    if "num_experts" not in d and "num_local_experts" in d:   # (either name, in transformers 5)
        d = {**d, "num_experts": d["num_local_experts"]}
    names = ("num_experts", "num_experts_per_tok") + ((spec["d_ff"],) if spec["d_ff"] else ())
    for key in names + ("decoder_sparse_step",):
        if key in d and (type(d[key]) is not int or d[key] <= 0):
            raise ValueError(f"config.json: {key} must be an integer > 0, got {reprlib.repr(d[key])}")
    if d.get("norm_topk_prob") is not None and not isinstance(d["norm_topk_prob"], bool):
        raise ValueError(f"config.json: norm_topk_prob must be true or false, got "
                         f"{reprlib.repr(d['norm_topk_prob'])}")
    missing = [k for k in names if k not in d]
    if missing:
        raise ValueError(f"a {model_type} config.json needs {missing}, which are missing")
    if d.get("decoder_sparse_step", 1) != 1 or d.get("mlp_only_layers"):
        raise ValueError(f"config.json decoder_sparse_step {d.get('decoder_sparse_step')!r}, "
                         f"mlp_only_layers {d.get('mlp_only_layers')!r}: minillm supports a mixture "
                         f"of experts on every layer only (decoder_sparse_step 1, no mlp_only_layers)")
    return {"n_experts": d[names[0]], "n_experts_used": d["num_experts_per_tok"],
            "norm_topk_prob": True if spec["always_renormalise"] else d.get("norm_topk_prob", False),
            **({"d_ff": d[spec["d_ff"]]} if spec["d_ff"] else {})}


def _olmoe_family(config: ModelConfig) -> tuple[str, str]:
    """OLMoE's names, or a ValueError for what its config.json cannot say (its q_norm is
    hidden_size wide: H·D = C)."""
    if config.d_head * config.n_heads != config.d_model or config.sliding_window is not None \
            or config.fused_projections or config.nope_layers:
        raise ValueError("Hugging Face's olmoe has H·D = C, no sliding window, no fused "
                         "projections and RoPE on every layer: this config cannot be saved as one")
    own = _experts_family(config)                   # (families/olmoe.py)
    return own.hf_model_types[0], own.hf_architecture


def _gemma_dict(c: ModelConfig) -> dict:
    """Deprecated: ``minillm.families.gemma2.write_hf`` writes Gemma 2 / 3's config.json."""
    return write_hf(c)


def _experts_hf(config: ModelConfig) -> dict:
    """Deprecated: each mixture-of-experts family's ``write_hf`` (families/olmoe.py,
    qwen3_moe.py, mixtral.py) writes its config.json keys."""
    return _experts_family(config).write_hf(config)


def _experts_family(config: ModelConfig):
    """The mixture-of-experts family that writes ``config`` (OLMoE, Qwen3-MoE or Mixtral)."""
    return next(f for f in families().values() if f.experts is not None and f.hf_marks(config))
