"""Write weights/tiny-llama: a seeded (untrained) Llama-style model on the Shakespeare tokenizer.

It exists so that every branch of the model code — RMSNorm, SwiGLU, RoPE, grouped-query attention
(2 query heads per KV head), an untied LM head — runs on a file shipped with the repository
(notebook 13's grader, tests), without downloading SmolLM2. Deterministic: the same seed gives
the same bytes.

    python scripts/make_tiny_llama.py            # -> weights/tiny-llama/

The weights are drawn with minillm's own initialiser at a larger scale (std 0.25 ≈ 1.4/√C instead
of 0.02), so that the attention scores spread over several units and the logits have clear
maxima: a model whose every weight is tiny computes nearly uniform attention and near-ties between
tokens, which would hide wrong parts instead of exposing them. The norm gains are drawn around 1
(1 + 0.3·N(0, 1)) so that a norm that forgets its gain differs too.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from minillm.config import ModelConfig
from minillm.model import GPT
from minillm.model.init import init_params

REPO = Path(__file__).resolve().parents[1]
SEED = 0
CONFIG = ModelConfig(vocab_size=2048, n_ctx=128, d_model=32, n_heads=4, n_kv_heads=2, n_layers=2,
                     d_ff=64, arch="llama", tie_embeddings=False, rope_theta=10000.0)


def tiny_llama(seed: int = SEED) -> GPT:
    rng = np.random.default_rng(seed)
    params = init_params(CONFIG, rng, std=0.25)
    norms = [params.norm_f, *(n for b in params.blocks for n in (b.norm1, b.norm2))]
    for n in norms:
        n.weight[...] = 1.0 + 0.3 * rng.standard_normal(n.weight.shape, dtype=np.float32)
    return GPT(CONFIG, params)


def main() -> None:
    out = REPO / "weights" / "tiny-llama"
    tiny_llama().save_pretrained(out)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(REPO / "weights" / "shakespeare" / name, out / name)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
