"""Make the Phi-3 LoRA fixtures (tests/fixtures/lora_phi3/) and check minillm's Phi-3 adapters
with PEFT, whose Phi-3 LoRA adapts the fused ``qkv_proj`` and ``gate_up_proj`` (train/lora/fused.py).

Dev-only script (torch, transformers, peft, safetensors; run with minillm importable:
``PYTHONPATH=$PWD``). No downloads: the base is tests/fixtures/phi3_tiny (a tiny random
Phi3ForCausalLM, 4 heads / 2 kv heads, tied head; make_family_fixtures.py).

1. ``peft_adapter/``: PEFT's own rank-2 LoRA on qkv_proj, o_proj, gate_up_proj and down_proj
   (lora_alpha 5, random A and B: ``init_lora_weights=False``), written by ``save_pretrained``;
   its logits on a [2, 9] batch go to ``expected.safetensors`` (``peft_logits``), and those of
   the adapter merged into the weights (``merge_and_unload``: ``merged_logits``) must equal them.
2. ``minillm_adapter/``: a rank-2 adapter on all seven projections made by minillm (different
   A's per projection, so written at rank 6 with block-diagonal B), loaded by
   ``PeftModel.from_pretrained``: its logits (``minillm_logits``) must equal minillm's own for
   the merged weights to 1e-4 · max(1, max |logit|), and leaving any one of the seven
   projections out of minillm's merge must move them by more than 100× that bound (PEFT applies
   all seven), else the script exits 1.

    PYTHONPATH=$PWD python scripts/make_phi3_lora_fixtures.py
"""
import json
import sys
from pathlib import Path

import numpy as np
import peft
import torch
import transformers
from safetensors.numpy import save_file

from minillm import GPT
from minillm.train.lora.adapters import LoRA, init_lora, merged_params
from minillm.train.lora.files import save_adapter

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "tests" / "fixtures" / "phi3_tiny"
OUT = ROOT / "tests" / "fixtures" / "lora_phi3"
TARGETS = ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"]


def hf_base():
    return transformers.Phi3ForCausalLM.from_pretrained(BASE, attn_implementation="eager").eval()


def tidy(folder: Path) -> None:
    """Drop PEFT's model card; the base named relative to the repository, targets sorted."""
    (folder / "README.md").unlink(missing_ok=True)
    path = folder / "adapter_config.json"
    settings = json.loads(path.read_text())
    settings["base_model_name_or_path"] = "tests/fixtures/phi3_tiny"
    settings["target_modules"] = sorted(settings["target_modules"])
    path.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")


def logits_of(model, ids: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return model(input_ids=torch.from_numpy(ids)).logits.float().numpy()


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    ids = np.random.default_rng(7).integers(0, 64, (2, 9)).astype(np.int64)
    # 1. PEFT's adapter, random A and B
    torch.manual_seed(1264)
    settings = peft.LoraConfig(r=2, lora_alpha=5, target_modules=TARGETS, lora_dropout=0.0,
                               init_lora_weights=False, task_type="CAUSAL_LM")
    wrapped = peft.get_peft_model(hf_base(), settings).eval()
    wrapped.save_pretrained(OUT / "peft_adapter")
    tidy(OUT / "peft_adapter")
    peft_logits = logits_of(wrapped, ids)
    merged = logits_of(wrapped.merge_and_unload(), ids)
    scale = max(1.0, float(np.abs(peft_logits).max()))
    ok = np.abs(merged - peft_logits).max() <= 1e-4 * scale
    print(f"PEFT adapter: merged vs unmerged logits max |Δ| {np.abs(merged - peft_logits).max():.2e}")
    # 2. minillm's adapter (one A per projection), loaded by PEFT
    model = GPT.from_pretrained(BASE)
    rng = np.random.default_rng(3)
    lora = init_lora(model.params, 2, rng, alpha=4.0)
    lora.adapters = {k: (A, rng.normal(0, 0.5, B.shape).astype(np.float32))
                     for k, (A, B) in lora.adapters.items()}
    save_adapter(OUT / "minillm_adapter", lora, model.config, base_model="tests/fixtures/phi3_tiny")
    ours = GPT(model.config, merged_params(model.params, lora))(ids)
    theirs = logits_of(peft.PeftModel.from_pretrained(hf_base(), OUT / "minillm_adapter").eval(), ids)
    worst = float(np.abs(ours - theirs).max())
    bound = 1e-4 * max(1.0, float(np.abs(theirs).max()))
    print(f"minillm adapter in PEFT: logits max |Δ| {worst:.2e} (bound {bound:.1e})")
    ok &= worst <= bound
    for projection in ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down"):
        without = LoRA(lora.rank, lora.alpha, {k: ab for k, ab in lora.adapters.items()
                                                if not k.endswith("." + projection)})
        moved = float(np.abs(GPT(model.config, merged_params(model.params, without))(ids)
                             - theirs).max())
        print(f"  without {projection}: minillm's merge differs from PEFT's by {moved:.2e}")
        ok &= moved > 100 * bound
    save_file({"input_ids": ids, "peft_logits": peft_logits, "merged_logits": merged,
               "minillm_logits": theirs}, str(OUT / "expected.safetensors"))
    (OUT / "README.md").write_text(
        "# lora_phi3\n\nLoRA adapters on tests/fixtures/phi3_tiny in PEFT's Phi-3 layout (one "
        "adapter per fused qkv_proj / gate_up_proj), made by `scripts/make_phi3_lora_fixtures.py` "
        f"with peft {peft.__version__}, torch {torch.__version__}, transformers "
        f"{transformers.__version__}. Random weights, no download.\n\n"
        "- `peft_adapter/`: PEFT's own rank-2 adapter (lora_alpha 5, random A and B) on qkv_proj, "
        "o_proj, gate_up_proj, down_proj.\n"
        "- `minillm_adapter/`: a rank-2 minillm LoRA (lora_alpha 4, its own A per projection) on "
        "all seven projections, written by `save_adapter` at rank 6 (lora_alpha 12: the same "
        "scale) with block-diagonal B.\n"
        "- `expected.safetensors`: `input_ids` [2, 9]; `peft_logits`: PEFT's model with "
        "`peft_adapter`; `merged_logits`: that adapter merged (`merge_and_unload`); "
        "`minillm_logits`: PEFT's model with `minillm_adapter` (equal to minillm's merged model: "
        f"max |Δ| {worst:.1e}; each of the seven projections left out moves it by > 100× the "
        "1e-4 bound).\n")
    if not ok:
        print("FAILED: see above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
