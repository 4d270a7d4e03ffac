"""LoRA adapters on disk in PEFT's layout: ``adapter_config.json`` + ``adapter_model.safetensors``,
the two files ``peft.PeftModel.from_pretrained(base_model, folder)`` reads.

PEFT wraps the transformers model, so a tensor's name is the adapted ``nn.Linear``'s name with
``base_model.model.`` in front and ``.lora_A.weight`` / ``.lora_B.weight`` in place of ``.weight``;
like every ``nn.Linear`` weight it is stored [out, in], the transpose of minillm's layout:

    minillm blocks.3.attn.wq.lora_A  A [in, r]   <->  base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight  Aᵀ [r, in]
    minillm blocks.3.attn.wq.lora_B  B [r, out]  <->  base_model.model.model.layers.3.self_attn.q_proj.lora_B.weight  Bᵀ [out, r]

(the HF names come from ``io/hf_names.py``'s table). adapter_config.json says ``"r"``,
``"lora_alpha"`` (so PEFT's scale α / r is minillm's s) and ``"target_modules"`` (the HF module
names: q_proj … down_proj). Only the Llama family's layout is written: GPT-2's Q, K and V are one
fused Conv1D matrix in Hugging Face's files, which one adapter per projection cannot describe.

Both files are replaced together or not at all (``io/commit.py``), as a model folder's are.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from minillm.io.atomic import write_new_text
from minillm.io.commit import atomic_files
from minillm.io.hf_names import hf_table
from minillm.io.safetensors import load_safetensors, write_safetensors
from minillm.model.params import param_shapes
from minillm.train.lora.adapters import LoRA

CONFIG, WEIGHTS = "adapter_config.json", "adapter_model.safetensors"
PREFIX = "base_model.model."
# PEFT settings that change what the adapter computes, which minillm does not implement
UNSUPPORTED = ("use_dora", "use_rslora", "lora_bias", "fan_in_fan_out", "use_qalora", "use_bdlora",
               "rank_pattern", "alpha_pattern", "modules_to_save", "trainable_token_indices",
               "target_parameters", "layer_replication")


def peft_names(config) -> dict[str, str]:
    """minillm matrix name -> the PEFT name stem of its adapter (``…q_proj``), Llama family only."""
    if config.arch != "llama":
        raise ValueError(f"LoRA adapters are written in PEFT's layout for the Llama family only; "
                         f"this model is {config.arch!r} (GPT-2 fuses Q, K, V into one matrix)")
    return {name: PREFIX + hf[:-len(".weight")] for name, (hf, _) in hf_table(config).items()
            if hf.endswith("_proj.weight")}


def save_adapter(folder: str | Path, lora: LoRA, config, base_model: str | None = None) -> None:
    """Write ``lora`` into ``folder`` as PEFT reads it (float32). ``base_model``: the base
    model's name or path, recorded as ``base_model_name_or_path``."""
    stems = peft_names(config)
    unknown = sorted(set(lora.adapters) - set(stems))
    if unknown:
        raise ValueError(f"no PEFT name for the adapted matrices {unknown[:3]}")
    tensors = {}
    for name, (A, B) in lora.adapters.items():
        tensors[stems[name] + ".lora_A.weight"] = np.ascontiguousarray(A.T, np.float32)   # [r, in]
        tensors[stems[name] + ".lora_B.weight"] = np.ascontiguousarray(B.T, np.float32)   # [out, r]
    modules = sorted({stems[name].rsplit(".", 1)[-1] for name in lora.adapters})
    settings = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": lora.rank,
                "lora_alpha": lora.alpha, "target_modules": modules, "lora_dropout": 0.0,
                "bias": "none", "fan_in_fan_out": False, "inference_mode": True,
                "init_lora_weights": True, "use_rslora": False, "use_dora": False,
                "modules_to_save": None, "base_model_name_or_path": base_model}
    with atomic_files(folder, (WEIGHTS, CONFIG)) as tmp:
        write_safetensors(tmp[WEIGHTS], tensors)
        write_new_text(tmp[CONFIG], json.dumps(settings, indent=2) + "\n")


def load_adapter(folder: str | Path, config) -> LoRA:
    """Read a PEFT LoRA adapter (minillm's or PEFT's own) for a model of this config. Settings it
    cannot honour (another method, DoRA, rsLoRA, bias training, extra saved modules) and tensors
    that name no projection of this model are ValueErrors."""
    folder = Path(folder)
    settings = json.loads((folder / CONFIG).read_text(encoding="utf-8"))
    wrong = {k: settings[k] for k in UNSUPPORTED if settings.get(k)}    # absent, null, {}, false: fine
    if settings.get("peft_type") != "LORA" or settings.get("bias", "none") != "none":
        wrong |= {k: settings.get(k) for k in ("peft_type", "bias")}
    if wrong:
        raise ValueError(f"{folder / CONFIG}: settings minillm's LoRA does not support: {wrong} "
                         f"(it reads plain LoRA: peft_type LORA, bias none, and none of "
                         f"{', '.join(UNSUPPORTED)})")
    rank, alpha = settings.get("r"), settings.get("lora_alpha")
    if isinstance(rank, bool) or not isinstance(rank, int) or rank <= 0 \
            or isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha <= 0:
        raise ValueError(f"{folder / CONFIG}: r must be a positive integer and lora_alpha a "
                         f"number > 0, got r={rank!r}, lora_alpha={alpha!r}")
    tensors = load_safetensors(folder / WEIGHTS, mmap=False)
    stems = {stem: name for name, stem in peft_names(config).items()}
    parts: dict[str, dict[str, np.ndarray]] = {}
    for key, t in tensors.items():
        stem, _, part = key.rpartition(".lora_")
        if part not in ("A.weight", "B.weight") or stem not in stems:
            raise ValueError(f"{folder / WEIGHTS}: {key!r} is not a LoRA tensor of a projection "
                             f"of this model")
        parts.setdefault(stems[stem], {})[part[0]] = t
    shapes = param_shapes(config)
    lora = LoRA(rank, float(alpha))
    for name, ab in sorted(parts.items()):
        n_in, n_out = shapes[name]
        if set(ab) != {"A", "B"} or ab["A"].shape != (rank, n_in) or ab["B"].shape != (n_out, rank):
            raise ValueError(f"{folder / WEIGHTS}: {name} needs lora_A [{rank}, {n_in}] and "
                             f"lora_B [{n_out}, {rank}] (r = {rank}), got "
                             f"{ {k: v.shape for k, v in ab.items()} }")
        lora.adapters[name] = (np.ascontiguousarray(ab["A"].T, np.float32),    # [r, in] -> [in, r]
                               np.ascontiguousarray(ab["B"].T, np.float32))    # [out, r] -> [r, out]
    return lora


def is_adapter_folder(folder: Path) -> bool:
    """An adapter alone (adapter_config.json, no config.json): what ``load_adapted_model`` reads."""
    return (folder / CONFIG).is_file() and not (folder / "config.json").exists()


def adapter_base(folder: str | Path) -> str | Path:
    """The base model an adapter folder names (``base_model_name_or_path``): a downloaded
    model's name as it is (or its Hugging Face repo id: ``HF_REPOS``), a path (a relative one from
    the adapter's folder) that must exist."""
    from minillm.io.download import HF_REPOS, MODELS
    folder = Path(folder)
    base = json.loads((folder / CONFIG).read_text(encoding="utf-8")).get("base_model_name_or_path")
    if not isinstance(base, str) or not base:
        raise ValueError(f"{folder / CONFIG} names no base model (base_model_name_or_path): "
                         f"load the base model and apply the adapter with load_adapter")
    if HF_REPOS.get(base, base) in MODELS:
        return HF_REPOS.get(base, base)
    if not (folder / base).exists():                     # (an absolute path stays itself)
        raise FileNotFoundError(f"{folder / CONFIG}: its base model {base} is not there")
    return folder / base
