"""Hugging Face ``config.json`` in and out for ModelConfig (config.py): the keys every
Llama-derived family shares, read here; what each family adds (its ``model_type``, keys,
defaults, switches and refusals) is declared in its module, ``minillm/families/<name>.py``:

    GPT-2          n_embd, n_head, n_layer, n_positions, n_inner, layer_norm_epsilon (gpt2.py)
    Llama-derived  hidden_size, num_attention_heads, num_key_value_heads, num_hidden_layers,
                   intermediate_size, max_position_embeddings, rms_norm_eps, rope_theta, head_dim,
                   rope_scaling (or transformers 5's rope_parameters), attention_bias, mlp_bias;
                   then the family's own (qwen3.py, phi3.py, smollm3.py, mixtral.py, …)
    Gemma 2 / 3    a reader of their own (gemma2.py)

A file written by minillm also carries a ``"minillm"`` object, every ModelConfig field, so it reads
back exactly. ``read_config(path)`` / ``write_config(config, path)`` read and write the file;
``from_hf_dict`` / ``to_hf_dict`` convert its dict:

    >>> from_hf_dict({"model_type": "gpt2", "n_layer": 2}).n_layers
    2
"""
from __future__ import annotations

import dataclasses
import json
import stat
from pathlib import Path

from minillm.config import ModelConfig, as_ids
from minillm.io.hf.checks import _check_json_types, _reject, _rope
from minillm.families import families, family, family_of_hf
from minillm.io.hf.families import _experts, _experts_family, _olmoe_family

MAX_CONFIG_BYTES = 1 << 20   # real config.json files are 1-10 KB


def from_hf_dict(d: dict) -> ModelConfig:
    """Read a Hugging Face ``config.json`` dict (GPT-2, Llama 2 / 3.x, Qwen2, Qwen3, Mistral,
    Phi-3, OLMo 2, SmolLM3, Gemma 2, Gemma 3 or minillm's own)."""
    cls = ModelConfig
    if "minillm" in d:                     # written by to_hf_dict: exact round trip
        fields = {f.name for f in dataclasses.fields(cls)}
        required = {f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING}
        if not isinstance(d["minillm"], dict) or not required <= set(d["minillm"]) <= fields:
            raise ValueError(f"config.json 'minillm' must be an object with the fields "
                             f"{sorted(fields)} (at least {sorted(required)})")
        return cls(**d["minillm"])
    _check_json_types(d)
    model_type = d.get("model_type", "gpt2")
    family = family_of_hf(model_type)          # its module in minillm/families/
    if family is None:
        known = [t for f in families().values() for t in f.hf_model_types]
        raise ValueError(f"unsupported model_type {model_type!r}: minillm reads "
                         f"{', '.join(known)}")
    if family.read_hf is not None:             # a reader of its own (GPT-2, Gemma)
        return family.read_hf(d)
    return _llama_family(d, model_type, family)


def _llama_family(d: dict, model_type: str, family) -> ModelConfig:
    """A Llama-derived family's config.json: Llama's keys, then what the family declares (its
    defaults, experts, switches and refusals: minillm/families/<name>.py)."""
    d = {**family.hf_defaults, **d}              # (transformers' defaults for this family)
    experts = _experts(d, model_type, family.experts)   # {} for a dense model
    missing = [k for k in ("vocab_size", "hidden_size", "num_attention_heads",
                           "num_hidden_layers", "intermediate_size") if k not in d
               and not (k == "intermediate_size" and "d_ff" in experts)]
    if missing:
        raise ValueError(f"a {model_type} config.json needs {missing}, which are missing")
    _reject(d, hidden_act=("silu",), use_sliding_window=(False,))
    if family.refuses_attention_bias and d.get("attention_bias"):   # (o_proj's too)
        raise ValueError(f"a {model_type} config.json with attention_bias=true is not supported")
    if any(kind != "full_attention" for kind in d.get("layer_types") or ()):
        raise ValueError(f"config.json layer_types {d['layer_types']!r}: minillm supports "
                         f"full attention on every layer only")
    theta, scaling = _rope(d)
    fields = dict(vocab_size=d["vocab_size"], n_ctx=d.get("max_position_embeddings", 2048),
                  d_model=d["hidden_size"], n_heads=d["num_attention_heads"],
                  n_layers=d["num_hidden_layers"],
                  d_ff=experts.pop("d_ff", d.get("intermediate_size")),
                  n_kv_heads=d.get("num_key_value_heads") or d["num_attention_heads"],
                  norm_eps=d.get("rms_norm_eps", 1e-6), arch="llama",
                  attn_bias=bool(d.get("attention_bias", False)),
                  mlp_bias=bool(d.get("mlp_bias", False)),
                  rope_theta=theta, rope_scaling=scaling, head_dim=d.get("head_dim"),
                  tie_embeddings=d.get("tie_word_embeddings", False),
                  bos_id=d.get("bos_token_id"), eos_ids=as_ids(d.get("eos_token_id")), **experts)
    own = family.hf_switches(d) if family.hf_switches is not None else {}
    return ModelConfig(**(fields | family.switches | own))     # (the family's fields win)

def to_hf_dict(config: ModelConfig) -> dict:
    """A ``config.json`` dict that Hugging Face can read, plus minillm's own exact copy: Llama's
    keys and the family's own (each family module's ``write_hf``), or all of a family's own
    (GPT-2, Gemma: the families with a reader of their own)."""
    whole = [f for f in families().values() if f.read_hf and f.hf_marks and f.hf_marks(config)]
    if whole:
        d = whole[0].write_hf(config)
    else:
        model_type, architecture = hf_family(config)
        d = {"model_type": model_type, "architectures": [architecture],
             "vocab_size": config.vocab_size, "max_position_embeddings": config.n_ctx,
             "hidden_size": config.d_model, "num_attention_heads": config.n_heads,
             "num_hidden_layers": config.n_layers, "intermediate_size": config.d_ff,
             "num_key_value_heads": config.n_kv_heads, "rms_norm_eps": config.norm_eps,
             "rope_theta": config.rope_theta, "attention_bias": config.attn_bias,
             "mlp_bias": config.mlp_bias, "hidden_act": "silu",
             "tie_word_embeddings": config.tie_embeddings, "head_dim": config.d_head,
             "pad_token_id": None}           # (minillm keeps none; Phi-3's default is id 32000)
        if config.rope_scaling is not None:     # read by transformers 4 and 5 alike
            d["rope_scaling"] = dict(config.rope_scaling)
        # the family's own keys (SmolLM3's no_rope_layers, Mistral's window), then the experts'
        for own in [family_of_hf(model_type)] + ([_experts_family(config)] if config.n_experts else []):
            d.update(own.write_hf(config) if own.write_hf else {})
    eos = list(config.eos_ids) if len(config.eos_ids) > 1 else config.eos_id    # HF: an int or a list
    d.update({"bos_token_id": config.bos_id, "eos_token_id": eos,
              "minillm": dataclasses.asdict(config)})
    return d


def hf_family(config: ModelConfig) -> tuple[str, str]:
    """(model_type, architecture) of a Llama-family config as transformers names it: the one
    family whose ``hf_marks`` the config has (families/), else Qwen2 or Llama by its biases."""
    if config.n_experts and config.qk_norm_whole and not config.post_norms:
        return _olmoe_family(config)
    marked = [f.name for f in families().values() if f.read_hf is None and f.experts is None
              and f.hf_marks and f.hf_marks(config)]
    if len(marked) > 1 or config.post_norms != config.qk_norm_whole:   # (OLMo 2: both)
        raise ValueError(f"this config mixes {marked or ['qk_norm_whole']} switches: no "
                         f"transformers model runs it, so it has no config.json")
    # subtle: Llama's attention_bias puts a bias on o_proj too; biases on Q, K, V only are Qwen2's
    own = family(marked[0]) if marked else next(      # (families/qwen2.py, llama.py)
        f for f in families().values() if f.hf_unmarked and f.hf_unmarked(config))
    return own.hf_model_types[0], own.hf_architecture


def read_config(path: str | Path) -> ModelConfig:
    """Read ``config.json`` (a file, or the directory that holds it). As in transformers, the
    EOS ids of a ``generation_config.json`` beside it win when it gives them (Llama-3-Instruct:
    [128001, 128009] there, 128001 in config.json)."""
    from minillm.io.bounded import probe
    path = Path(path)
    found = probe(path)                      # (a 5,000-character name: a ValueError here)
    if found and stat.S_ISDIR(found.st_mode):
        path = path / "config.json"
    d, generation = _read_json(path), path.parent / "generation_config.json"
    if probe(generation) and "minillm" not in d:
        d["eos_token_id"] = _read_json(generation).get("eos_token_id") or d.get("eos_token_id")
    try:
        return from_hf_dict(d)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply") from None


def write_config(config: ModelConfig, path: str | Path) -> None:
    """Write ``config.json`` (into a directory, or to the file named)."""
    path = Path(path)
    if path.is_dir():
        path = path / "config.json"
    from minillm.io.atomic import atomic_write_text
    atomic_write_text(path, json_text(config))


def json_text(config) -> str:
    """The text of ``config.json`` (``write_config`` writes it atomically, a commit plainly)."""
    return json.dumps(to_hf_dict(config), indent=2) + "\n"


def _read_json(path: Path) -> dict:
    """A small JSON object from ``path`` (config.json, generation_config.json), or a ValueError."""
    from minillm.io.bounded import read_bounded_text
    text = read_bounded_text(path, MAX_CONFIG_BYTES, "a config file")   # regular files only
    try:
        d = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None
    if not isinstance(d, dict):
        raise ValueError(f"{path} must hold a JSON object")
    return d
