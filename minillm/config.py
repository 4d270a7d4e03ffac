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

from dataclasses import dataclass

# the checks and the names other modules import from here (minillm.config.MAX_SIZE, …)
from minillm.config_checks import (MAX_SIZE, ROPE_SCALING, ROPE_SCALING_REFUSED,  # noqa: F401
                                   as_ids, check_config, check_rope_scaling)

ARCHS = ("gpt2", "llama")


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
        """``arch`` fills the switches left None (GPT-2: LayerNorm, GELU MLP, learned positions,
        biases; Llama: RMSNorm, SwiGLU, RoPE, none), d_ff = 4 · C and KV = H; then every field
        is checked (``config_checks.py``: a ValueError naming the field and what is allowed)."""
        if self.arch not in ARCHS:
            raise ValueError(f"arch must be one of {ARCHS}, got {self.arch!r}")
        llama = self.arch == "llama"
        defaults = {"norm": "rmsnorm" if llama else "layernorm",
                    "ffn": "swiglu" if llama else "gelu_mlp",
                    "position": "rope" if llama else "learned",
                    "attn_bias": not llama, "mlp_bias": not llama,
                    "d_ff": 4 * self.d_model, "n_kv_heads": self.n_heads}
        for name, value in defaults.items():
            if getattr(self, name) is None:
                setattr(self, name, value)
        check_config(self)

    @property
    def d_head(self) -> int:
        """D, the width of one head: ``head_dim`` when given (Qwen3), else C / H."""
        return self.head_dim if self.head_dim is not None else self.d_model // self.n_heads
