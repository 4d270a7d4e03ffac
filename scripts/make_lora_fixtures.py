"""Make the LoRA fixtures (tests/fixtures/lora_llama/) and check minillm's adapters with PEFT.

Dev-only script (torch, transformers, peft, safetensors, cyllama; run with minillm importable:
``PYTHONPATH=$PWD``). No downloads: the base is tests/fixtures/grads_llama (a tiny random
LlamaForCausalLM, 6 heads / 2 kv heads, untied head; make_grad_fixtures.py).

1. ``peft_adapter/``: PEFT's own rank-2 LoRA on q, k, v, o, gate, up and down (lora_alpha 5,
   random A and B: ``init_lora_weights=False``), written by ``save_pretrained``; its logits on
   a [2, 9] batch go to ``expected.safetensors`` (``peft_logits``), and those of the adapter merged
   into the weights (``merge_and_unload``) must equal them.
2. ``minillm_adapter/``: a rank-3 adapter made and written by minillm (``save_adapter``), loaded
   by ``PeftModel.from_pretrained`` onto the transformers model: its logits (``minillm_logits``)
   must equal minillm's own for the merged weights to 1e-4, else the script exits 1.
3. The merged model (minillm's adapter merged into the base: ``merged_params``) exported to GGUF
   (F32, ``save_gguf``, a byte tokenizer) loads in llama.cpp (``llama_cpp_ref.py``: cyllama 0.2.18)
   with logits within 1e-3 · max |logit| of minillm's (check_gguf_export.py's F32 bound), else exit 1.

    PYTHONPATH=$PWD .venv-dev/bin/python scripts/make_lora_fixtures.py
"""
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import peft
import torch
import transformers
from safetensors.numpy import save_file

from minillm import GPT
from minillm.tokenizer import Tokenizer
from minillm.train.lora.adapters import init_lora, merged_params
from minillm.train.lora.files import save_adapter

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "tests" / "fixtures" / "grads_llama"
OUT = ROOT / "tests" / "fixtures" / "lora_llama"
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def hf_base():
    return transformers.LlamaForCausalLM.from_pretrained(BASE, attn_implementation="eager").eval()


def tidy(folder: Path) -> None:
    """Drop PEFT's model card and make adapter_config.json reproducible: the base named relative
    to the repository (not this machine's path), target_modules sorted (PEFT writes a set)."""
    (folder / "README.md").unlink(missing_ok=True)
    path = folder / "adapter_config.json"
    settings = json.loads(path.read_text())
    settings["base_model_name_or_path"] = "tests/fixtures/grads_llama"
    settings["target_modules"] = sorted(settings["target_modules"])
    path.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")


def logits_of(model, ids: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return model(input_ids=torch.from_numpy(ids)).logits.float().numpy()


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    ids = np.random.default_rng(7).integers(0, 37, (2, 9)).astype(np.int64)
    # 1. PEFT's adapter, random A and B
    torch.manual_seed(1264)
    settings = peft.LoraConfig(r=2, lora_alpha=5, target_modules=TARGETS, lora_dropout=0.0,
                               init_lora_weights=False, task_type="CAUSAL_LM")
    wrapped = peft.get_peft_model(hf_base(), settings).eval()
    wrapped.save_pretrained(OUT / "peft_adapter")
    tidy(OUT / "peft_adapter")
    peft_logits = logits_of(wrapped, ids)
    merged = logits_of(wrapped.merge_and_unload(), ids)
    print(f"PEFT adapter: merged vs unmerged logits max |Δ| {np.abs(merged - peft_logits).max():.2e}")
    # 2. minillm's adapter, loaded by PEFT
    model = GPT.from_pretrained(BASE)
    rng = np.random.default_rng(3)
    lora = init_lora(model.params, 3, rng, alpha=4.0)
    lora.adapters = {k: (A, rng.normal(0, 0.5, B.shape).astype(np.float32))
                     for k, (A, B) in lora.adapters.items()}
    save_adapter(OUT / "minillm_adapter", lora, model.config, base_model="tests/fixtures/grads_llama")
    ours = GPT(model.config, merged_params(model.params, lora))(ids)
    theirs = logits_of(peft.PeftModel.from_pretrained(hf_base(), OUT / "minillm_adapter").eval(), ids)
    worst = float(np.abs(ours - theirs).max())
    scale = float(np.abs(theirs).max())
    print(f"minillm adapter in PEFT: logits max |Δ| {worst:.2e} (max |logit| {scale:.1f}); "
          f"differs from the base by {np.abs(theirs - logits_of(hf_base(), ids)).max():.2f}")
    save_file({"input_ids": ids, "peft_logits": peft_logits, "minillm_logits": theirs},
              str(OUT / "expected.safetensors"))
    (OUT / "README.md").write_text(
        "# lora_llama\n\nLoRA adapters on tests/fixtures/grads_llama, in PEFT's layout "
        "(adapter_config.json + adapter_model.safetensors), made by `scripts/make_lora_fixtures.py` "
        f"with peft {peft.__version__}, torch {torch.__version__}, transformers "
        f"{transformers.__version__}. Random weights, no download.\n\n"
        "- `peft_adapter/`: PEFT's own rank-2 adapter (lora_alpha 5, random A and B) on q, k, v, o, "
        "gate, up, down.\n"
        "- `minillm_adapter/`: a rank-3 adapter (lora_alpha 4) written by minillm's `save_adapter`.\n"
        "- `expected.safetensors`: `input_ids` [2, 9]; `peft_logits`: PEFT's model with "
        "`peft_adapter`; `minillm_logits`: PEFT's model with `minillm_adapter` loaded by "
        f"`PeftModel.from_pretrained` (equal to minillm's merged model: max |Δ| {worst:.1e}).\n")
    if worst > 1e-4 * max(1.0, scale) or np.abs(merged - peft_logits).max() > 1e-4 * max(1.0, scale):
        print("FAILED: logits differ by more than 1e-4 · max(1, max |logit|)")
        return 1
    return 0 if merged_in_llama_cpp(GPT(model.config, merged_params(model.params, lora)), ids[0]) else 1


def merged_in_llama_cpp(merged, prompt: np.ndarray) -> bool:
    """Export the merged model to GGUF and compare llama.cpp's logits with minillm's."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from llama_cpp_ref import LlamaCpp
    tok = Tokenizer({bytes([i]): i for i in range(merged.config.vocab_size)}, {})   # ids = bytes
    with tempfile.TemporaryDirectory() as d:
        path = merged.save_gguf(Path(d) / "merged.gguf", tok, dtype="f32")
        with LlamaCpp(path, n_ctx=32) as ref:
            theirs = ref.logits([int(i) for i in prompt])                   # [T, V]
    ours = merged(prompt)                                                   # [T, V]
    diff, bound = float(np.abs(theirs - ours).max()), 1e-3 * float(np.abs(theirs).max())
    print(f"merged model as GGUF in llama.cpp: logits max |Δ| {diff:.2e} (bound {bound:.1e})")
    return diff <= bound


if __name__ == "__main__":
    sys.exit(main())
