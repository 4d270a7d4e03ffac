"""Hugging Face ``config.json`` in and out for ModelConfig (config.py): which keys each model
family uses, the JSON types they must have, and the variants minillm refuses.

    GPT-2          n_embd, n_head, n_layer, n_positions, n_inner, layer_norm_epsilon
    Llama / Qwen2  hidden_size, num_attention_heads, num_key_value_heads, num_hidden_layers,
    / Mistral      intermediate_size, max_position_embeddings, rms_norm_eps, rope_theta, head_dim
    Llama 3.x      … and rope_scaling (or transformers 5's rope_parameters) rope_type "llama3"
    Qwen3          … model_type "qwen3": q and k norms (qk_norm); head_dim apart from C / H
    Phi-3          … model_type "phi3": fused files; rope_parameters' partial_rotary_factor (1 only)
    OLMo 2         … model_type "olmo2": norms after the sub-layers, q/k norms over the whole width
    SmolLM3        … model_type "smollm3": no_rope_layers ([1, 1, 1, 0, …]: 0 = no RoPE) or
                   no_rope_layer_interval (every n-th layer without RoPE; default 4)
    Mistral        … sliding_window: every layer attends to the last W positions
    Gemma 2 / 3    model_type "gemma2" / "gemma3_text": … head_dim, query_pre_attn_scalar,
                   sliding_window, layer_types (or Gemma 3's sliding_window_pattern),
                   attn_logit_softcapping, final_logit_softcapping, rope_local_base_freq
                   (Gemma 3; or rope_parameters per layer type), hidden_activation
    Mixtral        … model_type "mixtral": num_local_experts, num_experts_per_tok (model/moe.py)
    Qwen3-MoE      … model_type "qwen3_moe": Qwen3's, num_experts, num_experts_per_tok,
                   moe_intermediate_size, norm_topk_prob (every layer's FFN a mixture of experts)
    OLMoE          … model_type "olmoe": Llama's pre-norms, OLMo 2's q/k norms over the whole
                   width, num_experts, num_experts_per_tok, norm_topk_prob (default false), the
                   experts' F as intermediate_size; clip_qkv refused

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
from minillm.io.hf.families import (_LATER, _experts, _experts_hf, _gemma, _gemma_dict,
                                    _later_switches, _olmoe_family)

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
    if model_type == "gpt2":
        _reject(d, activation_function=("gelu_new", "gelu_pytorch_tanh"),
                scale_attn_weights=(True,), scale_attn_by_inverse_layer_idx=(False,))
        n_embd = d.get("n_embd", 768)
        return cls(vocab_size=d.get("vocab_size", 50257), n_ctx=d.get("n_positions", 1024),
                   d_model=n_embd, n_heads=d.get("n_head", 12), n_layers=d.get("n_layer", 12),
                   d_ff=d.get("n_inner") or 4 * n_embd, norm_eps=d.get("layer_norm_epsilon", 1e-5),
                   arch="gpt2", tie_embeddings=d.get("tie_word_embeddings", True),
                   bos_id=d.get("bos_token_id"), eos_ids=as_ids(d.get("eos_token_id")))
    if model_type in ("gemma2", "gemma3_text"):
        return _gemma(d, model_type)
    if model_type == "olmoe":               # (transformers' OlmoeConfig defaults, not Llama's)
        d = {"rms_norm_eps": 1e-5, "max_position_embeddings": 4096, "norm_topk_prob": False, **d}
    if model_type in ("llama", "qwen2", "mistral", "qwen3", "mixtral", "qwen3_moe") + tuple(_LATER):
        experts = _experts(d, model_type)           # {} for a dense model
        missing = [k for k in ("vocab_size", "hidden_size", "num_attention_heads",
                               "num_hidden_layers", "intermediate_size") if k not in d
                   and not (k == "intermediate_size" and "d_ff" in experts)]
        if missing:
            raise ValueError(f"a {model_type} config.json needs {missing}, which are missing")
        _reject(d, hidden_act=("silu",), use_sliding_window=(False,))
        qwen2, qwen3 = model_type == "qwen2", model_type in ("qwen3", "qwen3_moe")
        if (qwen3 or model_type in _LATER) and d.get("attention_bias"):   # (o_proj's too)
            raise ValueError(f"a {model_type} config.json with attention_bias=true is not supported")
        if any(kind != "full_attention" for kind in d.get("layer_types") or ()):
            raise ValueError(f"config.json layer_types {d['layer_types']!r}: minillm supports "
                             f"full attention on every layer only")
        n_ctx = d.get("max_position_embeddings", 2048)
        window = d.get("sliding_window") if model_type == "mistral" else None   # (every layer)
        if model_type == "phi3" and d.get("sliding_window"):
            # subtle: transformers' Phi-3 attends only to the last ``sliding_window`` positions,
            # llama.cpp's phi3 to all of them; the two agree while n_ctx <= the window: cap n_ctx.
            n_ctx = min(n_ctx, d["sliding_window"])
        theta, scaling = _rope(d, _LATER.get(model_type, 10000.0))
        later = _later_switches(d, model_type)            # Phi-3, OLMo 2, SmolLM3
        return cls(**later, vocab_size=d["vocab_size"], n_ctx=n_ctx, sliding_window=window,
                   d_model=d["hidden_size"], n_heads=d["num_attention_heads"],
                   n_layers=d["num_hidden_layers"],
                   d_ff=experts.pop("d_ff", d.get("intermediate_size")),
                   n_kv_heads=d.get("num_key_value_heads") or d["num_attention_heads"],
                   norm_eps=d.get("rms_norm_eps", 1e-6), arch="llama",
                   attn_bias=bool(d.get("attention_bias", qwen2)), mlp_bias=bool(d.get("mlp_bias", False)),
                   rope_theta=theta, rope_scaling=scaling, head_dim=d.get("head_dim"),
                   qk_norm=qwen3 or model_type in ("olmo2", "olmoe"),
                   tie_embeddings=d.get("tie_word_embeddings", model_type == "smollm3"),
                   bos_id=d.get("bos_token_id"), eos_ids=as_ids(d.get("eos_token_id")), **experts)
    raise ValueError(f"unsupported model_type {model_type!r}: minillm reads gpt2, llama, qwen2, "
                     f"qwen3, mistral, phi3, olmo2, smollm3, mixtral, qwen3_moe, olmoe, gemma2, "
                     f"gemma3_text")

def to_hf_dict(config: ModelConfig) -> dict:
    """A ``config.json`` dict that Hugging Face can read, plus minillm's own exact copy."""
    if config.arch == "gpt2":
        d = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
             "vocab_size": config.vocab_size, "n_positions": config.n_ctx, "n_ctx": config.n_ctx,
             "n_embd": config.d_model, "n_head": config.n_heads, "n_layer": config.n_layers,
             "n_inner": config.d_ff, "layer_norm_epsilon": config.norm_eps,
             "activation_function": "gelu_new", "tie_word_embeddings": config.tie_embeddings}
    elif config.sandwich_norms:
        d = _gemma_dict(config)
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
        if config.nope_layers:                  # SmolLM3: 1 where a layer USES RoPE
            d.update(no_rope_layers=[int(i not in config.nope_layers) for i in range(config.n_layers)],
                     use_sliding_window=False)
        if config.sliding_window is not None:   # Mistral: every layer's window
            d["sliding_window"] = config.sliding_window
        if config.n_experts:                    # Qwen3-MoE (q/k norms) or Mixtral
            d.update(_experts_hf(config))
    eos = list(config.eos_ids) if len(config.eos_ids) > 1 else config.eos_id    # HF: an int or a list
    d.update({"bos_token_id": config.bos_id, "eos_token_id": eos,
              "minillm": dataclasses.asdict(config)})
    return d


def hf_family(config: ModelConfig) -> tuple[str, str]:
    """(model_type, architecture) of a Llama-family config as transformers names it."""
    if config.n_experts and config.qk_norm_whole and not config.post_norms:
        return _olmoe_family(config)
    families = [name for name, on in (("phi3", config.fused_projections), ("olmo2", config.post_norms),
                                      ("smollm3", bool(config.nope_layers)),
                                      ("qwen3", config.qk_norm and not config.post_norms),
                                      ("mistral", config.sliding_window is not None)) if on]
    if len(families) > 1 or config.post_norms != config.qk_norm_whole:   # (OLMo 2: both)
        raise ValueError(f"this config mixes {families or ['qk_norm_whole']} switches: no "
                         f"transformers model runs it, so it has no config.json")
    # subtle: Llama's attention_bias puts a bias on o_proj too; biases on Q, K, V only are Qwen2's
    name = families[0] if families else "qwen2" if config.attn_bias else "llama"
    return name, {"phi3": "Phi3", "olmo2": "Olmo2", "smollm3": "SmolLM3", "qwen3": "Qwen3",
                  "mistral": "Mistral", "qwen2": "Qwen2", "llama": "Llama"}[name] + "ForCausalLM"


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
