"""ModelConfig: every number that fixes a model's shape, for both variants minillm implements.

                 GPT-2                         Llama (SmolLM2, Qwen2 …)
  positions      learned table ``wpe``          rotary (RoPE), theta = ``rope_theta``
  norm           LayerNorm (gain and bias)      RMSNorm (gain only)
  FFN            x W_up -> GELU(tanh) -> W_down  SiLU(x W_gate) * (x W_up) -> W_down (SwiGLU)
  attention      n_kv_heads == n_heads          grouped-query: n_kv_heads divides n_heads
  biases         yes                            no (Qwen2: on Q, K, V only)

Two switches of the Llama column name later families: ``rope_scaling`` (Llama 3.1 / 3.2: RoPE's
slow frequencies stretched, ``model/rope.py``) and ``qk_norm`` (Qwen3: each head's q and k
RMS-normalised before RoPE), whose heads may also be wider or narrower than C / H (``head_dim``).
The last four: Phi-3's fused files, OLMo 2's norms after the sub-layers, SmolLM3's layers without RoPE.
Mistral and Gemma 2 / 3 add a sliding window, Gemma its norms after each sub-layer, GeGLU, √C and
soft-capping: the fields after ``rope_scaling`` (``model/variants.py`` checks and explains them).
``n_experts`` > 0 makes each FFN a mixture of experts (Mixtral, Qwen3-MoE: ``model/moe.py``).

A checkpoint directory carries its config as Hugging Face's ``config.json`` (read and written by
``minillm/io/hf/config.py``: ``read_config``, ``write_config``), so it is self-describing.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

# the sizes, with their names in Hugging Face's config.json (for messages), and their bound
_SIZES = {"vocab_size": "config.json: vocab_size",
          "n_ctx": "config.json: max_position_embeddings or n_positions",
          "d_model": "config.json: hidden_size or n_embd",
          "n_heads": "config.json: num_attention_heads or n_head",
          "n_layers": "config.json: num_hidden_layers or n_layer",
          "d_ff": "config.json: intermediate_size or n_inner",
          "n_kv_heads": "config.json: num_key_value_heads"}
MAX_SIZE = 2**32 - 1
_CHOICES = {
    "arch": ("gpt2", "llama"),
    "norm": ("layernorm", "rmsnorm"),
    "ffn": ("gelu_mlp", "swiglu", "geglu"),
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
    n_heads: int                    # H, query heads; d_head = head_dim or d_model // n_heads
    n_layers: int                   # L, transformer blocks
    d_ff: int | None = None         # F, FFN hidden width (default 4 · d_model)
    n_kv_heads: int | None = None   # KV, key/value heads (default n_heads; fewer = GQA)
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
    head_dim: int | None = None     # D when it is not d_model // n_heads (Qwen3); None: C / H
    qk_norm: bool = False           # RMSNorm on each head's q and k before RoPE (Qwen3)
    rope_scaling: dict | None = None    # {"rope_type": "llama3", …} (model/rope.py), None: plain
    fused_projections: bool = False  # Phi-3's files: q|k|v one qkv_proj, gate|up one gate_up_proj
    post_norms: bool = False        # OLMo 2: norm1, norm2 on each sub-layer's OUTPUT (model/block.py)
    qk_norm_whole: bool = False     # OLMo 2: q, k RMS-normalised over all heads at once (H·D, KV·D)
    nope_layers: tuple[int, ...] = ()   # SmolLM3: the layers (from 0) whose q, k skip RoPE
    sliding_window: int | None = None   # W: a "sliding" layer's query sees the last W positions
    layer_types: tuple[str, ...] | None = None   # "sliding" | "full" per layer (None: all, if W)
    rope_local_theta: float | None = None   # the sliding layers' RoPE base (Gemma 3)
    sandwich_norms: bool = False    # a norm after each sub-layer too (Gemma), gains stored 1 + w
    embed_scale: bool = False       # embeddings × √C (Gemma)
    query_pre_attn_scalar: float | None = None  # scores · s^−½ instead of D^−½ (Gemma)
    attn_softcap: float | None = None   # scores -> cap · tanh(scores / cap) (Gemma 2)
    final_softcap: float | None = None  # logits -> cap · tanh(logits / cap) (Gemma 2)
    n_experts: int = 0              # E > 0: each FFN is E SwiGLU experts and a router (model/moe.py)
    n_experts_used: int = 0         # k, the experts each token is sent to (1 <= k <= E)
    norm_topk_prob: bool = False    # the k routing weights rescaled to sum to 1 (Mixtral: always)

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
        for name in _SIZES:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
            if value > MAX_SIZE:        # no model is this large, and GGUF could not store it
                raise ValueError(f"{name} ({_SIZES[name]}) = {value:,} is out of range: allowed "
                                 f"[1, {MAX_SIZE:,}] (GGUF stores it as a uint32)")
        for name in ("norm", "ffn", "position"):
            if getattr(self, name) not in _CHOICES[name]:
                raise ValueError(f"{name} must be one of {_CHOICES[name]}, got {getattr(self, name)!r}")
        if self.head_dim is not None and (type(self.head_dim) is not int
                                      or not 0 < self.head_dim <= MAX_SIZE):
            raise ValueError(f"head_dim must be an integer in [1, {MAX_SIZE:,}] or None, got "
                             f"{self.head_dim!r}")
        if self.head_dim is not None and self.head_dim * self.n_heads == self.d_model:
            self.head_dim = None            # subtle: one spelling of C / H, so equal configs compare equal
        if self.head_dim is None and self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads ({self.n_heads}) must be a multiple of n_kv_heads ({self.n_kv_heads})")
        if self.position == "rope" and self.d_head % 2:
            raise ValueError(f"RoPE rotates pairs of dimensions: d_head ({self.d_head}) must be even")
        if self.ffn == "swiglu" and self.mlp_bias:
            raise ValueError("mlp_bias=True with a SwiGLU FFN is not supported (no published "
                             "Llama-family checkpoint uses it)")
        if (self.qk_norm or self.head_dim is not None) and (self.norm, self.position) != ("rmsnorm", "rope"):
            raise ValueError("qk_norm and head_dim (Qwen3's) need norm='rmsnorm' and RoPE")
        if self.rope_scaling is not None:
            if self.position != "rope":
                raise ValueError("rope_scaling needs position='rope'")
            self.rope_scaling = check_rope_scaling(self.rope_scaling)
        if (self.n_experts or self.n_experts_used) and not (type(self.n_experts) is type(
                self.n_experts_used) is int and 0 < self.n_experts_used <= self.n_experts <= MAX_SIZE
                and self.ffn == "swiglu"):
            raise ValueError(f"a mixture of experts needs ints 1 <= n_experts_used <= n_experts and "
                             f"ffn='swiglu', got {self.n_experts_used!r}, {self.n_experts!r}, "
                             f"{self.ffn!r}")
        for name in ("attn_bias", "mlp_bias", "tie_embeddings", "qk_norm", "norm_topk_prob"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name in ("bos_id", "eos_id"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 0):
                raise ValueError(f"{name} must be an integer id >= 0 or None, got {value!r}")
        if self.bos_id is not None and self.bos_id >= self.vocab_size:
            raise ValueError(f"bos_id (config.json: bos_token_id) = {self.bos_id:,} is not a token "
                             f"id of the {self.vocab_size:,}-token vocabulary: allowed "
                             f"[0, {self.vocab_size:,}) or None")
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
        _check_later_switches(self)
        from minillm.model.variants import check_variants
        check_variants(self)

    @property
    def d_head(self) -> int:
        """D, the width of one head: ``head_dim`` when given (Qwen3), else C / H."""
        return self.head_dim if self.head_dim is not None else self.d_model // self.n_heads


# RoPE scaling: the parameters of each kind minillm implements, and the kinds it refuses by name
ROPE_SCALING = {"llama3": ("factor", "low_freq_factor", "high_freq_factor",
                           "original_max_position_embeddings")}
ROPE_SCALING_REFUSED = ("linear", "dynamic", "yarn", "longrope", "su", "ntk")


def check_rope_scaling(scaling) -> dict:
    """``{"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192}`` -> the same dict, numbers as Python floats (the
    last an int), checked: every parameter present, > 0, low_freq_factor < high_freq_factor."""
    if not isinstance(scaling, dict):
        raise ValueError(f"rope_scaling must be a dict or None, got {type(scaling).__name__}")
    kind = scaling.get("rope_type")
    if kind in ROPE_SCALING_REFUSED:
        raise ValueError(f"RoPE scaling {kind!r} is not supported: minillm implements "
                         f"{sorted(ROPE_SCALING)} (Llama 3.1 / 3.2)")
    if kind not in ROPE_SCALING:
        raise ValueError(f"unknown RoPE scaling rope_type {kind!r}: minillm implements "
                         f"{sorted(ROPE_SCALING)}")
    names = ROPE_SCALING[kind]
    if set(scaling) != {"rope_type", *names}:
        raise ValueError(f"rope_scaling {kind!r} takes exactly {list(names)}, got "
                         f"{sorted(set(scaling) - {'rope_type'})}")
    out = {"rope_type": kind}
    for name in names:
        value = scaling[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not math.isfinite(value) or value <= 0:
            raise ValueError(f"rope_scaling {name} must be a finite number > 0, got {value!r}")
        if name.startswith("original") and value != int(value):
            raise ValueError(f"rope_scaling {name} must be an integer, got {value!r}")
        out[name] = int(value) if name.startswith("original") else float(value)
    if out["low_freq_factor"] >= out["high_freq_factor"]:
        raise ValueError(f"rope_scaling needs low_freq_factor < high_freq_factor, got "
                         f"{out['low_freq_factor']} and {out['high_freq_factor']}")
    return out


def _check_later_switches(c: ModelConfig) -> None:
    """Phi-3's, OLMo 2's and SmolLM3's switches: booleans / distinct layer indices, on Llamas."""
    for name in ("fused_projections", "post_norms", "qk_norm_whole", "nope_layers"):
        value = getattr(c, name)
        if name != "nope_layers" and not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False, got {value!r}")
        if value and (c.norm, c.ffn, c.position) != ("rmsnorm", "swiglu", "rope"):
            raise ValueError(f"{name} needs a Llama-family model (RMSNorm, SwiGLU, RoPE)")
    if c.qk_norm_whole and not c.qk_norm:
        raise ValueError("qk_norm_whole (OLMo 2's q, k norms over the whole width) needs qk_norm")
    if not isinstance(c.nope_layers, (tuple, list)) or not all(type(i) is int and 0 <= i <
            c.n_layers for i in c.nope_layers) or len(set(c.nope_layers)) != len(c.nope_layers):
        raise ValueError(f"nope_layers must be distinct layer indices in [0, {c.n_layers}), got "
                         f"{c.nope_layers!r}")
    c.nope_layers = tuple(sorted(c.nope_layers))


def _eos_ids(eos_id, eos_ids, vocab_size: int) -> tuple[int, ...]:
    """``eos_id`` first, then ``eos_ids``, without repeats; each an id in [0, vocab_size)."""
    ids = as_ids(eos_id) + as_ids(eos_ids)
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < vocab_size:
            raise ValueError(f"EOS ids must be token ids in [0, {vocab_size}), got {i!r}")
    return tuple(dict.fromkeys(int(i) for i in ids))


def as_ids(value) -> tuple:
    """HF's ``eos_token_id``: None, one id or a list of ids -> a tuple of ids."""
    return () if value is None else tuple(value) if isinstance(value, (list, tuple)) else (value,)
