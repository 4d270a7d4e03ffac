"""Make tests/fixtures/lens/: what transformers records inside each family's tiny model, for
tests/model/test_hooks_vs_transformers.py.

Dev-only script (torch, transformers; see scripts/README.md). No downloads and no new weights:
it reads the family fixtures already committed (tests/fixtures/<family>/, made by
make_gpt2_fixtures.py, make_llama_fixtures.py, make_family_fixtures.py, make_moe_fixtures.py,
make_olmoe_fixtures.py and make_gemma_fixtures.py) with ``attn_implementation="eager"`` (the
attention weights are materialised) and runs 2 rows of 12 seeded random ids through each with
``output_hidden_states=True, output_attentions=True``. One .npz per family (np.load(...,
allow_pickle=False) reads it):

    ids            [2, 12] int64
    hidden_states  [L + 1, 2, 12, C] float32   hidden_states[l] is the input of layer l
                                               (l < L); hidden_states[L] is AFTER the final norm
    attentions     [L, 2, H, 12, 12] float32   each layer's attention weights
    logits         [2, 12, V] float32

Run from the repository root:

    PYTHONPATH=$PWD .venv-dev/bin/python scripts/make_lens_fixtures.py [family ...]
"""
import sys
from pathlib import Path

import numpy as np
import torch
import transformers

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
OUT = FIXTURES / "lens"
FAMILIES = ("gpt2_tiny", "llama_tiny", "llama3_tiny", "qwen2_tiny", "qwen3_tiny", "qwen3_moe_tiny",
            "mixtral_tiny", "olmoe_tiny", "phi3_tiny", "olmo2_tiny", "smollm3_tiny", "gemma2_tiny",
            "gemma3_tiny", "mistral_window_tiny")
SEED, B, T = 4321, 2, 12


def record(family: str) -> dict[str, np.ndarray]:
    model = transformers.AutoModelForCausalLM.from_pretrained(
        FIXTURES / family, attn_implementation="eager", dtype=torch.float32).eval()
    V = model.config.vocab_size
    ids = np.random.default_rng(SEED).integers(0, V, (B, T)).astype(np.int64)
    with torch.no_grad():
        out = model(torch.from_numpy(ids), output_hidden_states=True, output_attentions=True,
                    use_cache=False)
    hidden = torch.stack(out.hidden_states).numpy().astype(np.float32)
    attentions = torch.stack(out.attentions).numpy().astype(np.float32)
    if attentions.shape[-2:] != (T, T):
        raise SystemExit(f"{family}: attentions of shape {attentions.shape}: not eager?")
    return {"ids": ids, "hidden_states": hidden, "attentions": attentions,
            "logits": out.logits.numpy().astype(np.float32)}


def main(families) -> None:
    torch.manual_seed(SEED)
    OUT.mkdir(exist_ok=True)
    for family in families:
        arrays = record(family)
        np.savez_compressed(OUT / f"{family}.npz", **arrays)
        print(f"{family}: hidden {arrays['hidden_states'].shape}, attentions "
              f"{arrays['attentions'].shape}, {(OUT / f'{family}.npz').stat().st_size:,} bytes")
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")


if __name__ == "__main__":
    main(sys.argv[1:] or FAMILIES)
