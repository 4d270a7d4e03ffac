"""ModelConfig: every number that fixes a model's shape, for both variants minillm implements.

                 GPT-2                         Llama (SmolLM2, Qwen2 …)
  positions      learned table ``wpe``          rotary (RoPE), theta = ``rope_theta``
  norm           LayerNorm (gain and bias)      RMSNorm (gain only)
  FFN            x W_up -> GELU(tanh) -> W_down  SiLU(x W_gate) * (x W_up) -> W_down (SwiGLU)
  attention      n_kv_heads == n_heads          grouped-query: n_kv_heads divides n_heads
  biases         yes                            no (Qwen2: on Q, K, V only)

Both read and write Hugging Face ``config.json`` files, so a checkpoint directory is self-describing.
"""
from __future__ import annotations

import dataclasses
import json
import math
import numbers
import reprlib
from dataclasses import dataclass
from pathlib import Path

MAX_CONFIG_BYTES = 1 << 20   # real config.json files are 1-10 KB

_CHOICES = {
    "arch": ("gpt2", "llama"),
    "norm": ("layernorm", "rmsnorm"),
    "ffn": ("gelu_mlp", "swiglu"),
    "position": ("learned", "rope"),
}


@dataclass
class ModelConfig:
    """Hyper-parameters of a decoder-only transformer.

    Example: ``ModelConfig(vocab_size=50257, n_ctx=1024, d_model=768, n_heads=12, n_layers=12)`` is
    GPT-2 small (d_ff defaults to 4 · d_model, n_kv_heads to n_heads).
    """
    vocab_size: int
    n_ctx: int                      # the context window: the most positions the model can see
    d_model: int                    # C, the width of the residual stream
    n_heads: int                    # H, query heads; d_head = d_model // n_heads
    n_layers: int                   # L, transformer blocks
    d_ff: int | None = None         # F, FFN hidden width (default 4 · d_model)
    n_kv_heads: int | None = None   # K, key/value heads (default n_heads; fewer = GQA)
    norm_eps: float = 1e-5
    arch: str = "gpt2"              # sets the defaults of the four switches below
    norm: str | None = None         # "layernorm" | "rmsnorm"
    ffn: str | None = None          # "gelu_mlp" | "swiglu"
    position: str | None = None     # "learned" | "rope"
    attn_bias: bool | None = None   # biases on Q, K, V (GPT-2 and Qwen2: yes; Llama: no)
    mlp_bias: bool | None = None    # biases on the output projection and the FFN
    rope_theta: float = 10000.0
    tie_embeddings: bool = True     # logits = h @ wteᵀ (True) or h @ lm_head (False)
    bos_id: int | None = None
    eos_id: int | None = None       # the first of eos_ids (None: the model names no EOS)
    eos_ids: tuple[int, ...] = ()   # every id that ends a text: generation stops at them

    def __post_init__(self) -> None:
        if self.arch not in _CHOICES["arch"]:
            raise ValueError(f"arch must be one of {_CHOICES['arch']}, got {self.arch!r}")
        llama = self.arch == "llama"
        defaults = {"norm": "rmsnorm" if llama else "layernorm",
                    "ffn": "swiglu" if llama else "gelu_mlp",
                    "position": "rope" if llama else "learned",
                    "attn_bias": not llama, "mlp_bias": not llama,
                    "d_ff": 4 * self.d_model, "n_kv_heads": self.n_heads}
        for name, value in defaults.items():
            if getattr(self, name) is None:
                setattr(self, name, value)
        for name in ("vocab_size", "n_ctx", "d_model", "n_heads", "n_layers", "d_ff", "n_kv_heads"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("norm", "ffn", "position"):
            if getattr(self, name) not in _CHOICES[name]:
                raise ValueError(f"{name} must be one of {_CHOICES[name]}, got {getattr(self, name)!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads ({self.n_heads}) must be a multiple of n_kv_heads ({self.n_kv_heads})")
        if self.position == "rope" and self.d_head % 2:
            raise ValueError(f"RoPE rotates pairs of dimensions: d_head ({self.d_head}) must be even")
        if self.ffn == "swiglu" and self.mlp_bias:
            raise ValueError("mlp_bias=True with a SwiGLU FFN is not supported (no published "
                             "Llama-family checkpoint uses it)")
        for name in ("attn_bias", "mlp_bias", "tie_embeddings"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name in ("bos_id", "eos_id"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 0):
                raise ValueError(f"{name} must be an integer id >= 0 or None, got {value!r}")
        for name in ("norm_eps", "rope_theta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                    or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
            # subtle: stored as a Python float: a NumPy float64 eps would promote every float32
            # activation it meets to float64 (``x / np.sqrt(var + eps)`` in the norms).
            setattr(self, name, float(value))
        self.eos_ids = _eos_ids(self.eos_id, self.eos_ids, self.vocab_size)
        self.eos_id = self.eos_ids[0] if self.eos_ids else None

    @property
    def d_head(self) -> int:
        """D, the width of one head."""
        return self.d_model // self.n_heads

    # ---- Hugging Face config.json ------------------------------------------------------------
    @classmethod
    def from_hf_dict(cls, d: dict) -> "ModelConfig":
        """Read a Hugging Face ``config.json`` dict (GPT-2, Llama, Qwen2 or minillm's own)."""
        if "minillm" in d:                     # written by to_hf_dict: exact round trip
            if not isinstance(d["minillm"], dict) or not _REQUIRED <= set(d["minillm"]) <= _FIELDS:
                raise ValueError(f"config.json 'minillm' must be an object with the fields "
                                 f"{sorted(_FIELDS)} (at least {sorted(_REQUIRED)})")
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
                       bos_id=d.get("bos_token_id"), eos_ids=_as_ids(d.get("eos_token_id")))
        if model_type in ("llama", "qwen2", "mistral"):
            missing = [k for k in ("vocab_size", "hidden_size", "num_attention_heads",
                                   "num_hidden_layers", "intermediate_size") if k not in d]
            if missing:
                raise ValueError(f"a {model_type} config.json needs {missing}, which are missing")
            # transformers ≥ 5 nests theta in "rope_parameters"; older files have "rope_theta".
            rope = d.get("rope_parameters") or {}
            if d.get("rope_scaling") or rope.get("rope_type", "default") != "default":
                raise ValueError(f"RoPE scaling {d.get('rope_scaling') or rope!r} is not supported")
            _reject(d, hidden_act=("silu",), use_sliding_window=(False,),
                    head_dim=(None, d["hidden_size"] // d["num_attention_heads"]))
            qwen = model_type == "qwen2"
            n_ctx = d.get("max_position_embeddings", 2048)
            if model_type == "mistral" and d.get("sliding_window"):
                # subtle: Mistral attends only to the last ``sliding_window`` positions. minillm's
                # attention is full, which is the same thing while n_ctx <= the window: cap n_ctx.
                n_ctx = min(n_ctx, d["sliding_window"])
            return cls(vocab_size=d["vocab_size"], n_ctx=n_ctx,
                       d_model=d["hidden_size"], n_heads=d["num_attention_heads"],
                       n_layers=d["num_hidden_layers"], d_ff=d["intermediate_size"],
                       n_kv_heads=d.get("num_key_value_heads") or d["num_attention_heads"],
                       norm_eps=d.get("rms_norm_eps", 1e-6), arch="llama",
                       attn_bias=bool(d.get("attention_bias", qwen)), mlp_bias=bool(d.get("mlp_bias", False)),
                       rope_theta=float(rope.get("rope_theta", d.get("rope_theta", 10000.0))),
                       tie_embeddings=d.get("tie_word_embeddings", False),
                       bos_id=d.get("bos_token_id"), eos_ids=_as_ids(d.get("eos_token_id")))
        raise ValueError(f"unsupported model_type {model_type!r}: minillm reads gpt2, llama, qwen2, mistral")

    def to_hf_dict(self) -> dict:
        """A ``config.json`` dict that Hugging Face can read, plus minillm's own exact copy."""
        if self.arch == "gpt2":
            d = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
                 "vocab_size": self.vocab_size, "n_positions": self.n_ctx, "n_ctx": self.n_ctx,
                 "n_embd": self.d_model, "n_head": self.n_heads, "n_layer": self.n_layers,
                 "n_inner": self.d_ff, "layer_norm_epsilon": self.norm_eps,
                 "activation_function": "gelu_new", "tie_word_embeddings": self.tie_embeddings}
        else:
            d = {"model_type": "llama", "architectures": ["LlamaForCausalLM"],
                 "vocab_size": self.vocab_size, "max_position_embeddings": self.n_ctx,
                 "hidden_size": self.d_model, "num_attention_heads": self.n_heads,
                 "num_hidden_layers": self.n_layers, "intermediate_size": self.d_ff,
                 "num_key_value_heads": self.n_kv_heads, "rms_norm_eps": self.norm_eps,
                 "rope_theta": self.rope_theta, "attention_bias": self.attn_bias,
                 "mlp_bias": self.mlp_bias, "hidden_act": "silu",
                 "tie_word_embeddings": self.tie_embeddings}
        eos = list(self.eos_ids) if len(self.eos_ids) > 1 else self.eos_id    # HF: an int or a list
        d.update({"bos_token_id": self.bos_id, "eos_token_id": eos,
                  "minillm": dataclasses.asdict(self)})
        return d

    @classmethod
    def load(cls, path: str | Path) -> "ModelConfig":
        """Read ``config.json`` (a file, or the directory that holds it). As in transformers, the
        EOS ids of a ``generation_config.json`` beside it win when it gives them (Llama-3-Instruct:
        [128001, 128009] there, 128001 in config.json)."""
        path = Path(path)
        if path.is_dir():
            path = path / "config.json"
        d, generation = _read_json(path), path.parent / "generation_config.json"
        if generation.exists() and "minillm" not in d:
            d["eos_token_id"] = _read_json(generation).get("eos_token_id") or d.get("eos_token_id")
        try:
            return cls.from_hf_dict(d)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}: {exc}") from None
        except RecursionError:
            raise ValueError(f"{path}: nested too deeply") from None

    def save(self, path: str | Path) -> None:
        """Write ``config.json`` (into a directory, or to the file named)."""
        path = Path(path)
        if path.is_dir():
            path = path / "config.json"
        from minillm.io.atomic import atomic_write_text
        atomic_write_text(path, json.dumps(self.to_hf_dict(), indent=2) + "\n")


_FIELDS = {f.name for f in dataclasses.fields(ModelConfig)}
_REQUIRED = {f.name for f in dataclasses.fields(ModelConfig) if f.default is dataclasses.MISSING}
# config.json keys -> the JSON type they must have (checked before any arithmetic with them)
_SIZES = ("vocab_size", "n_positions", "n_embd", "n_head", "n_layer", "hidden_size",
          "num_attention_heads", "num_hidden_layers", "intermediate_size", "num_key_value_heads",
          "max_position_embeddings", "sliding_window", "head_dim", "n_inner")
_NULLABLE = ("n_inner", "sliding_window", "head_dim", "num_key_value_heads")
_NUMBERS = ("layer_norm_epsilon", "rms_norm_eps", "rope_theta")
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
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise ValueError(f"{path} is {path.stat().st_size:,} bytes; a config file is limited "
                         f"to {MAX_CONFIG_BYTES:,}")
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None
    if not isinstance(d, dict):
        raise ValueError(f"{path} must hold a JSON object")
    return d


def _as_ids(value) -> tuple:
    """HF's ``eos_token_id``: None, one id or a list of ids -> a tuple of ids."""
    return () if value is None else tuple(value) if isinstance(value, (list, tuple)) else (value,)


def _eos_ids(eos_id, eos_ids, vocab_size: int) -> tuple[int, ...]:
    """``eos_id`` first, then ``eos_ids``, without repeats; each an id in [0, vocab_size)."""
    ids = _as_ids(eos_id) + _as_ids(eos_ids)
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < vocab_size:
            raise ValueError(f"EOS ids must be token ids in [0, {vocab_size}), got {i!r}")
    return tuple(dict.fromkeys(int(i) for i in ids))
