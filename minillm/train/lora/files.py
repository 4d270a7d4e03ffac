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
Phi-3 (a Llama with ``fused_projections``) is written and read as PEFT does it, one adapter per
fused ``qkv_proj`` / ``gate_up_proj`` (fused.py: split exactly on load; on save minillm's own
A's per projection need rank k·r with a block-diagonal B, so the file's r may be 3× minillm's).

Both files are replaced together or not at all (``io/commit.py``), as a model folder's are.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from minillm.io.atomic import write_new_text
from minillm.io.commit import atomic_files
from minillm.io.hf_names import hf_table
from minillm.io.safetensors import load_safetensors, write_safetensors
from minillm.model.params import param_shapes
from minillm.train.lora.adapters import LoRA
from minillm.train.lora.fused import fuse, fused_height, fused_rows, split

CONFIG, WEIGHTS = "adapter_config.json", "adapter_model.safetensors"
PREFIX = "base_model.model."
# PEFT settings that change what the adapter computes, which minillm does not implement
UNSUPPORTED = ("use_dora", "use_rslora", "lora_bias", "fan_in_fan_out", "use_qalora", "use_bdlora",
               "rank_pattern", "alpha_pattern", "modules_to_save", "trainable_token_indices",
               "target_parameters", "layer_replication", "alora_invocation_tokens",
               "layers_pattern", "exclude_modules")
MAX_CONFIG_BYTES = 1 << 20       # adapter_config.json: 1-2 KB in practice
MAX_ALPHA = 1e6                  # lora_alpha; PEFT's are 8-256 (s = α / r)
MAX_ABS = 1e4                    # |a value| of lora_A / lora_B: trained ones are < 10


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
    if config.fused_projections:            # Phi-3: PEFT adapts qkv_proj, gate_up_proj (fused.py)
        stored, rank = fuse(lora, config, stems, PREFIX)
    else:
        stored = {stems[name]: (A.T, B.T) for name, (A, B) in lora.adapters.items()}
        rank = lora.rank
    tensors = {}
    for stem, (A, B) in stored.items():
        tensors[stem + ".lora_A.weight"] = np.ascontiguousarray(A, np.float32)   # [r, in]
        tensors[stem + ".lora_B.weight"] = np.ascontiguousarray(B, np.float32)   # [out, r]
    modules = sorted({stem.rsplit(".", 1)[-1] for stem in stored})
    alpha = lora.alpha * rank / lora.rank     # (a wider file keeps PEFT's scale α / r: fused.py)
    settings = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": rank,
                "lora_alpha": alpha, "target_modules": modules, "lora_dropout": 0.0,
                "bias": "none", "fan_in_fan_out": False, "inference_mode": True,
                "init_lora_weights": True, "use_rslora": False, "use_dora": False,
                "modules_to_save": None, "base_model_name_or_path": base_model}
    with atomic_files(folder, (WEIGHTS, CONFIG)) as tmp:
        write_safetensors(tmp[WEIGHTS], tensors)
        write_new_text(tmp[CONFIG], json.dumps(settings, indent=2) + "\n")


def read_settings(folder: Path) -> dict:
    """adapter_config.json as a dict: a regular file of at most 1 MB holding a JSON object (a
    FIFO, /dev/zero, a 2 GB file, a list, deep nesting: a ValueError naming the file)."""
    from minillm.io.hf.config import _read_json
    return _read_json(folder / CONFIG)


def load_adapter(folder: str | Path, config) -> LoRA:
    """Read a PEFT LoRA adapter (minillm's or PEFT's own) for a model of this config. Settings it
    cannot honour (another method, DoRA, rsLoRA, bias training, aLoRA, extra saved modules),
    tensors that name no projection of this model, or that ``target_modules`` /
    ``layers_to_transform`` leave out (PEFT would not apply them), values that are not finite or
    beyond ±1e4, and an adapter without tensors are ValueErrors. A Phi-3's adapter is PEFT's, on
    the fused qkv_proj / gate_up_proj (split into per-projection adapters: fused.py)."""
    folder = Path(folder)
    settings = read_settings(folder)
    wrong = {k: settings[k] for k in UNSUPPORTED if settings.get(k)}    # absent, null, {}, false: fine
    if settings.get("peft_type") != "LORA" or settings.get("bias", "none") != "none":
        wrong |= {k: settings.get(k) for k in ("peft_type", "bias")}
    if wrong:
        raise ValueError(f"{folder / CONFIG}: settings minillm's LoRA does not support: {wrong} "
                         f"(it reads plain LoRA: peft_type LORA, bias none, and none of "
                         f"{', '.join(UNSUPPORTED)})")
    rank, alpha = settings.get("r"), settings.get("lora_alpha")
    if isinstance(rank, bool) or not isinstance(rank, int) or rank <= 0 \
            or isinstance(alpha, bool) or not isinstance(alpha, (int, float)) \
            or not 0 < alpha <= MAX_ALPHA:               # (NaN and a huge JSON int fail too)
        raise ValueError(f"{folder / CONFIG}: r must be a positive integer and lora_alpha a "
                         f"finite number in (0, {MAX_ALPHA:g}], got r={rank!r}, "
                         f"lora_alpha={alpha!r}")
    tensors = load_safetensors(folder / WEIGHTS, mmap=False)
    if not tensors:
        raise ValueError(f"{folder / WEIGHTS} holds no tensors: an adapter without lora_A / "
                         f"lora_B changes nothing")
    named = peft_names(config)
    stems = {stem: name for name, stem in named.items()}
    fused: dict[str, dict[str, slice]] = {}   # Phi-3: fused stem -> {minillm name: its rows of B}
    if config.fused_projections:
        for name, (module, rows) in fused_rows(config).items():
            del stems[named[name]]                           # (no q_proj … in Phi-3's model)
            fused.setdefault(PREFIX + module, {})[name] = rows
    applies = _applies(settings, folder)
    shapes = param_shapes(config)
    parts: dict[str, dict[str, np.ndarray]] = {}
    for key, t in tensors.items():
        stem, _, part = key.rpartition(".lora_")
        if part not in ("A.weight", "B.weight") or stem not in stems and stem not in fused:
            raise ValueError(f"{folder / WEIGHTS}: {key!r} is not a LoRA tensor of a projection "
                             f"of this model")
        if stem in stems and stems[stem] not in shapes:   # (a mixture's expert: stored stacked)
            raise ValueError(f"{folder / WEIGHTS}: {key!r} adapts an expert of a mixture of "
                             f"experts; minillm's LoRA adapts attention and dense FFN projections "
                             f"only")
        if not applies(stem[len(PREFIX):]):
            raise ValueError(f"{folder / WEIGHTS}: {key!r} is outside the adapter's own "
                             f"target_modules {settings.get('target_modules')!r} / "
                             f"layers_to_transform {settings.get('layers_to_transform')!r}: PEFT "
                             f"would not apply it")
        if not np.all(np.isfinite(t)) or np.max(np.abs(t), initial=0.0) > MAX_ABS:
            raise ValueError(f"{folder / WEIGHTS}: {key!r} holds values that are not finite or "
                             f"beyond ±{MAX_ABS:g} (allowed: finite values within ±{MAX_ABS:g})")
        parts.setdefault(stem, {})[part[0]] = t
    lora = LoRA(rank, float(alpha))
    for stem, ab in sorted(parts.items()):
        name = stems.get(stem, stem)
        n_in, n_out = shapes[name] if stem in stems else (config.d_model, fused_height(config, stem))
        if set(ab) != {"A", "B"} or ab["A"].shape != (rank, n_in) or ab["B"].shape != (n_out, rank):
            raise ValueError(f"{folder / WEIGHTS}: {name} needs lora_A [{rank}, {n_in}] and "
                             f"lora_B [{n_out}, {rank}] (r = {rank}), got "
                             f"{ {k: v.shape for k, v in ab.items()} }")
        if stem in fused:                  # one A, B's rows per projection: exact (fused.py)
            lora.adapters |= split(ab["A"], ab["B"], fused[stem])
            continue
        lora.adapters[name] = (np.ascontiguousarray(ab["A"].T, np.float32),    # [r, in] -> [in, r]
                               np.ascontiguousarray(ab["B"].T, np.float32))    # [out, r] -> [r, out]
    lora.adapters = dict(sorted(lora.adapters.items()))     # (by minillm name, whatever the file)
    return lora


def _applies(settings: dict, folder: Path):
    """module path (``model.layers.3.self_attn.q_proj``) -> whether PEFT adapts it, from
    ``target_modules`` (a list of name endings, a regex matching the whole path, "all-linear",
    or absent) and ``layers_to_transform`` (an index or a list of them, or absent)."""
    targets, layers = settings.get("target_modules"), settings.get("layers_to_transform")
    where = f"{folder / CONFIG}:"
    if not (targets is None or isinstance(targets, str) or isinstance(targets, list)
            and all(isinstance(t, str) for t in targets)):
        raise ValueError(f"{where} target_modules must be a list of module names or a regex, "
                         f"got {str(targets)[:60]!r}")
    if isinstance(layers, int) and not isinstance(layers, bool):
        layers = [layers]
    if not (layers is None or isinstance(layers, list) and all(type(i) is int for i in layers)):
        raise ValueError(f"{where} layers_to_transform must be a layer index or a list of them, "
                         f"got {str(layers)[:60]!r}")
    if isinstance(targets, str) and targets != "all-linear":
        try:
            pattern = re.compile(targets)
        except re.error as exc:
            raise ValueError(f"{where} target_modules {targets[:60]!r} is not a regex: {exc}") from None

    def applies(path: str) -> bool:
        if isinstance(targets, str) and targets != "all-linear":
            return pattern.fullmatch(path) is not None   # (PEFT: a string is matched whole)
        found = re.search(r"\.layers\.(\d+)\.", path)
        if layers is not None and (found is None or int(found[1]) not in layers):
            return False
        return not isinstance(targets, list) or any(path == t or path.endswith("." + t)
                                                    for t in targets)
    return applies


def is_adapter_folder(folder: Path) -> bool:
    """An adapter alone (adapter_config.json, no config.json): what ``load_adapted_model`` reads."""
    return (folder / CONFIG).is_file() and not (folder / "config.json").exists()


def adapter_base(folder: str | Path) -> str | Path:
    """The base model an adapter folder names (``base_model_name_or_path``): a downloaded
    model's name as it is (or its Hugging Face repo id: ``HF_REPOS``), a path (a relative one from
    the adapter's folder) that must exist and hold a model: an adapter naming itself (".") or
    another adapter (a chain, or a cycle) is a ValueError."""
    from minillm.io.download import HF_REPOS, MODELS
    folder = Path(folder)
    base = read_settings(folder).get("base_model_name_or_path")
    if not isinstance(base, str) or not base:
        raise ValueError(f"{folder / CONFIG} names no base model (base_model_name_or_path): "
                         f"load the base model and apply the adapter with load_adapter")
    if HF_REPOS.get(base, base) in MODELS:
        return HF_REPOS.get(base, base)
    try:
        exists = (folder / base).exists()                # (an absolute path stays itself)
    except (OSError, ValueError) as exc:                 # (a name too long, a NUL)
        raise ValueError(f"{folder / CONFIG}: its base model {base[:80]!r}: {exc}") from None
    if not exists:
        raise FileNotFoundError(f"{folder / CONFIG}: its base model {base} is not there")
    if is_adapter_folder(folder / base):
        itself = (folder / base).resolve() == folder.resolve()
        raise ValueError(f"{folder / CONFIG}: its base model {base!r} is "
                         f"{'this adapter itself' if itself else 'another adapter'}: the base "
                         f"must be a model (config.json or a GGUF); chains of adapters are not "
                         f"supported")
    return folder / base
