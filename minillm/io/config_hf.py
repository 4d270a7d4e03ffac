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

A file written by minillm also carries a ``"minillm"`` object, every ModelConfig field, so it reads
back exactly. ``read_config(path)`` / ``write_config(config, path)`` read and write the file;
``from_hf_dict`` / ``to_hf_dict`` convert its dict:

    >>> from_hf_dict({"model_type": "gpt2", "n_layer": 2}).n_layers
    2
"""
from __future__ import annotations

import dataclasses
import json
import numbers
import reprlib
import stat
from pathlib import Path

from minillm.config import ModelConfig, as_ids, check_rope_scaling

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
    if model_type == "olmoe":
        raise ValueError("model_type 'olmoe' (OLMoE) is not supported: minillm's mixtures of "
                         "experts are qwen3_moe and mixtral")
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
                   qk_norm=qwen3 or model_type == "olmo2",
                   tie_embeddings=d.get("tie_word_embeddings", model_type == "smollm3"),
                   bos_id=d.get("bos_token_id"), eos_ids=as_ids(d.get("eos_token_id")), **experts)
    raise ValueError(f"unsupported model_type {model_type!r}: minillm reads gpt2, llama, qwen2, "
                     f"qwen3, mistral, phi3, olmo2, smollm3, mixtral, qwen3_moe, gemma2, gemma3_text")


GEMMA_LAYER_TYPES = {"sliding_attention": "sliding", "full_attention": "full"}


def _gemma(d: dict, model_type: str) -> ModelConfig:
    """Gemma 2 / 3's config.json (transformers' defaults where a key is absent)."""
    missing = [k for k in ("vocab_size", "hidden_size", "num_attention_heads", "num_hidden_layers",
                           "intermediate_size") if k not in d]
    if missing:
        raise ValueError(f"a {model_type} config.json needs {missing}, which are missing")
    _reject(d, hidden_activation=("gelu_pytorch_tanh",), hidden_act=("gelu_pytorch_tanh",),
            attention_bias=(False,), use_bidirectional_attention=(None, False))
    gemma3, L = model_type == "gemma3_text", d["num_hidden_layers"]
    types = d.get("layer_types")
    if types is None:               # Gemma 2: every other layer; Gemma 3: all but every 6th
        pattern = d.get("sliding_window_pattern", 6) if gemma3 else 2
        types = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(L)]
    if not isinstance(types, list) or any(t not in GEMMA_LAYER_TYPES for t in types):
        raise ValueError(f"config.json layer_types must list {sorted(GEMMA_LAYER_TYPES)}, got "
                         f"{reprlib.repr(types)}")
    rope = d.get("rope_parameters") or {}
    local_theta = None
    if gemma3 and "full_attention" in rope:          # transformers 5: one RoPE per layer type
        local = rope.get("sliding_attention") or {}
        if local.get("rope_type", "default") != "default":
            raise ValueError(f"RoPE scaling {local!r} on Gemma 3's sliding layers is not supported")
        local_theta = local.get("rope_theta", 10000.0)
        theta, scaling = _rope({"rope_parameters": {"rope_theta": 1e6, **rope["full_attention"]}})
    else:
        theta, scaling = _rope({"rope_theta": 1e6 if gemma3 else 10000.0, **d})
        local_theta = d.get("rope_local_base_freq", 10000.0) if gemma3 else None
    soft = {"attn_softcap": d.get("attn_logit_softcapping", None if gemma3 else 50.0),
            "final_softcap": d.get("final_logit_softcapping", None if gemma3 else 30.0)}
    return ModelConfig(
        vocab_size=d["vocab_size"], n_ctx=d.get("max_position_embeddings", 8192),
        d_model=d["hidden_size"], n_heads=d["num_attention_heads"], n_layers=L,
        d_ff=d["intermediate_size"], n_kv_heads=d.get("num_key_value_heads") or d["num_attention_heads"],
        norm_eps=d.get("rms_norm_eps", 1e-6), arch="llama", ffn="geglu", attn_bias=False,
        head_dim=d.get("head_dim", 256), qk_norm=gemma3, rope_theta=theta, rope_scaling=scaling,
        tie_embeddings=d.get("tie_word_embeddings", True), bos_id=d.get("bos_token_id"),
        eos_ids=as_ids(d.get("eos_token_id")), sliding_window=d.get("sliding_window", 4096),
        layer_types=tuple(GEMMA_LAYER_TYPES[t] for t in types), rope_local_theta=local_theta,
        sandwich_norms=True, embed_scale=True,
        query_pre_attn_scalar=d.get("query_pre_attn_scalar", 256), **soft)


def _experts(d: dict, model_type: str) -> dict:
    """A mixture of experts' ModelConfig fields from config.json ({} for a dense family):
    ``num_experts`` (or ``num_local_experts``: Mixtral's name, which transformers 5 writes for
    both), ``num_experts_per_tok``; Mixtral's router always renormalises the k weights;
    Qwen3-MoE's ``moe_intermediate_size`` (the experts' F) and ``norm_topk_prob``. Qwen3-MoE
    layers with a dense FFN (``decoder_sparse_step`` > 1, ``mlp_only_layers``) are refused."""
    if model_type not in ("mixtral", "qwen3_moe"):
        return {}
    mixtral = model_type == "mixtral"
    if "num_experts" not in d and "num_local_experts" in d:   # (either name, in transformers 5)
        d = {**d, "num_experts": d["num_local_experts"]}
    names = ("num_experts", "num_experts_per_tok") + (() if mixtral else ("moe_intermediate_size",))
    for key in names + ("decoder_sparse_step",):
        if key in d and (type(d[key]) is not int or d[key] <= 0):
            raise ValueError(f"config.json: {key} must be an integer > 0, got {reprlib.repr(d[key])}")
    if d.get("norm_topk_prob") is not None and not isinstance(d["norm_topk_prob"], bool):
        raise ValueError(f"config.json: norm_topk_prob must be true or false, got "
                         f"{reprlib.repr(d['norm_topk_prob'])}")
    missing = [k for k in names if k not in d]
    if missing:
        raise ValueError(f"a {model_type} config.json needs {missing}, which are missing")
    if mixtral and d.get("sliding_window"):
        raise ValueError("a mixtral config.json with a sliding_window is not supported")
    if d.get("decoder_sparse_step", 1) != 1 or d.get("mlp_only_layers"):
        raise ValueError(f"config.json decoder_sparse_step {d.get('decoder_sparse_step')!r}, "
                         f"mlp_only_layers {d.get('mlp_only_layers')!r}: minillm supports a mixture "
                         f"of experts on every layer only (decoder_sparse_step 1, no mlp_only_layers)")
    return {"n_experts": d[names[0]], "n_experts_used": d["num_experts_per_tok"],
            "norm_topk_prob": True if mixtral else d.get("norm_topk_prob", False),
            **({} if mixtral else {"d_ff": d["moe_intermediate_size"]})}


_LATER = {"phi3": 10000.0, "olmo2": 10000.0, "smollm3": 2000000.0}   # (their default theta)


def _later_switches(d: dict, model_type: str) -> dict:
    """The ModelConfig switches of Phi-3, OLMo 2 and SmolLM3 from their config.json."""
    if model_type == "phi3":
        if d.get("head_dim", d["hidden_size"] // d["num_attention_heads"]) * \
                d["num_attention_heads"] != d["hidden_size"]:
            raise ValueError("a phi3 config.json with head_dim · num_attention_heads != "
                             "hidden_size is not supported")
        return {"fused_projections": True}
    if model_type == "olmo2":
        return {"post_norms": True, "qk_norm_whole": True}
    if model_type != "smollm3":
        return {}
    n, uses_rope = d["num_hidden_layers"], d.get("no_rope_layers")
    if uses_rope is None:                 # transformers' default: every interval-th layer
        interval = d.get("no_rope_layer_interval", 4)
        if type(interval) is not int or interval <= 0:
            raise ValueError(f"config.json: no_rope_layer_interval must be an integer > 0, got "
                             f"{reprlib.repr(interval)}")
        uses_rope = [int((i + 1) % interval != 0) for i in range(n)]
    # subtle: no_rope_layers[i] is 1 where layer i USES RoPE (transformers' SmolLM3Attention)
    if not isinstance(uses_rope, list) or len(uses_rope) < n or \
            any(type(u) is not int or u not in (0, 1) for u in uses_rope):
        raise ValueError(f"config.json: no_rope_layers must be a list of {n} or more 0/1 flags "
                         f"(1: the layer uses RoPE), got {reprlib.repr(uses_rope)}")
    return {"nope_layers": tuple(i for i in range(n) if uses_rope[i] == 0)}


def _rope(d: dict, default_theta: float = 10000.0) -> tuple[float, dict | None]:
    """config.json's RoPE: (theta, scaling or None). transformers ≥ 5 writes one object,
    ``rope_parameters`` {rope_type, rope_theta, …}; older files ``rope_theta`` and ``rope_scaling``
    {rope_type (or type), factor, …}. Scaling kinds minillm does not implement are refused by
    name (``config.check_rope_scaling``)."""
    rope = {**(d.get("rope_scaling") or {}), **(d.get("rope_parameters") or {})}
    theta = rope.pop("rope_theta", d.get("rope_theta", default_theta))
    kind = rope.pop("rope_type", rope.pop("type", "default"))
    partial = rope.pop("partial_rotary_factor", d.get("partial_rotary_factor", 1.0))
    if partial != 1:                      # (Phi-3 writes 1.0 in rope_parameters)
        raise ValueError(f"partial rotary embeddings (partial_rotary_factor {partial!r}) are "
                         f"not supported: minillm rotates every dimension of a head")
    if isinstance(theta, bool) or not isinstance(theta, numbers.Real):
        raise ValueError(f"config.json: rope_theta must be a number, got {reprlib.repr(theta)}")
    if kind == "default":
        if rope:
            raise ValueError(f"config.json's RoPE settings {sorted(rope)} are not supported")
        return float(theta), None
    return float(theta), check_rope_scaling({"rope_type": kind, **rope})


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


def _gemma_dict(c: ModelConfig) -> dict:
    """Gemma 2's or (with q/k norms) Gemma 3's config.json keys."""
    gemma3 = c.qk_norm
    names = {v: k for k, v in GEMMA_LAYER_TYPES.items()}
    d = {"model_type": "gemma3_text" if gemma3 else "gemma2",
         "architectures": ["Gemma3ForCausalLM" if gemma3 else "Gemma2ForCausalLM"],
         "vocab_size": c.vocab_size, "max_position_embeddings": c.n_ctx,
         "hidden_size": c.d_model, "num_attention_heads": c.n_heads,
         "num_hidden_layers": c.n_layers, "intermediate_size": c.d_ff,
         "num_key_value_heads": c.n_kv_heads, "head_dim": c.d_head, "rms_norm_eps": c.norm_eps,
         "hidden_activation": "gelu_pytorch_tanh", "attention_bias": False,
         "query_pre_attn_scalar": _int_if_whole(c.query_pre_attn_scalar or c.d_head),
         "sliding_window": c.sliding_window or c.n_ctx,
         "layer_types": [names[t] for t in c.layer_types or ("full",) * c.n_layers],
         "attn_logit_softcapping": c.attn_softcap, "final_logit_softcapping": c.final_softcap,
         "rope_theta": c.rope_theta, "tie_word_embeddings": c.tie_embeddings}
    if gemma3:
        d["rope_local_base_freq"] = c.rope_local_theta or c.rope_theta
    if c.rope_scaling is not None:
        d["rope_scaling"] = dict(c.rope_scaling)
    return d


def _int_if_whole(x):
    """12.0 -> 12 (transformers' Gemma configs take an int), 12.5 stays."""
    return int(x) if x == int(x) else x


def _experts_hf(config: ModelConfig) -> dict:
    """config.json's keys for a mixture of experts: Qwen3-MoE when it has q/k norms, else
    Mixtral (``hf_names.named_to_hf`` refuses what neither can hold)."""
    if config.qk_norm:
        return {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"],
                "num_experts": config.n_experts, "num_experts_per_tok": config.n_experts_used,
                "moe_intermediate_size": config.d_ff, "norm_topk_prob": config.norm_topk_prob,
                "decoder_sparse_step": 1, "mlp_only_layers": []}
    return {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"],
            "num_local_experts": config.n_experts, "num_experts_per_tok": config.n_experts_used,
            "sliding_window": None}


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


# config.json keys -> the JSON type they must have (checked before any arithmetic with them)
_SIZES = ("vocab_size", "n_positions", "n_embd", "n_head", "n_layer", "hidden_size",
          "num_attention_heads", "num_hidden_layers", "intermediate_size", "num_key_value_heads",
          "max_position_embeddings", "sliding_window", "head_dim", "n_inner")
_NULLABLE = ("n_inner", "sliding_window", "head_dim", "num_key_value_heads")
_NUMBERS = ("layer_norm_epsilon", "rms_norm_eps", "rope_theta", "rope_local_base_freq")
_BOOLS = ("tie_word_embeddings", "attention_bias", "mlp_bias", "use_sliding_window",
          "scale_attn_weights", "scale_attn_by_inverse_layer_idx")


def _check_json_types(d: dict) -> None:
    """A config.json field of the wrong JSON type is a ValueError naming it (not a TypeError or
    ZeroDivisionError deep inside): sizes are ints > 0, epsilons and theta numbers, switches
    true/false, token ids ints >= 0 (or a list of them for eos_token_id)."""
    def bad(key, allowed):
        raise ValueError(f"config.json: {key} must be {allowed}, got {reprlib.repr(d[key])}")
    for key in _SIZES:                 # null means "the default" only where HF writes it so
        if key in d and (d[key] is not None or key not in _NULLABLE) \
                and (type(d[key]) is not int or d[key] <= 0):
            bad(key, "an integer > 0")
    for key in _NUMBERS:
        if key in d and (isinstance(d[key], bool) or not isinstance(d[key], numbers.Real)):
            bad(key, "a number")
    for key in _BOOLS:
        if d.get(key) is not None and not isinstance(d[key], bool):
            bad(key, "true or false")
    for key in ("bos_token_id", "eos_token_id"):
        ids = d.get(key) if isinstance(d.get(key), list) and key == "eos_token_id" else [d.get(key)]
        if not all(i is None or (type(i) is int and i >= 0) for i in ids):
            bad(key, "an integer id >= 0" + (" or a list of them" if key[0] == "e" else ""))
    for key in ("rope_parameters", "rope_scaling"):
        if d.get(key) is not None and not isinstance(d[key], dict):
            bad(key, "an object")
    if not isinstance(d.get("model_type", "gpt2"), str):
        bad("model_type", "a string")


def _reject(d: dict, **allowed) -> None:
    """Raise when a config.json setting asks for a variant minillm does not implement."""
    for key, values in allowed.items():
        if key in d and d[key] not in values:
            raise ValueError(f"config.json has {key}={d[key]!r}; minillm supports {values}")


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

