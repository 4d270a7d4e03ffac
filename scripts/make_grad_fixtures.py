"""Make the gradient reference fixtures (tests/fixtures/grads_llama, grads_qwen2) with torch autograd.

Dev-only script (torch, transformers, safetensors; see scripts/README.md). No downloads: two tiny
models built from configs and randomly initialised with a fixed torch seed (RMSNorm gains and
Qwen2's q/k/v biases included), each with grouped-query attention (G = heads / kv heads >= 2):

    grads_llama   LlamaForCausalLM, vocab 37, hidden 24, 6 heads / 2 kv heads (G = 3), head_dim 4,
                  2 layers, intermediate 20, rope_theta 1e4, rms_norm_eps 1e-6, UNTIED lm_head
    grads_qwen2   Qwen2ForCausalLM, vocab 41, hidden 16, 4 heads / 2 kv heads (G = 2), head_dim 4,
                  q/k/v biases, 2 layers, intermediate 24, rope_theta 1e6, rms_norm_eps 1e-6, tied

For each: the float32 weights are written with ``save_pretrained`` (config.json, model.safetensors);
then the model is cast to float64 and the mean next-token cross-entropy of a random batch
(2 rows, 9 input positions: an odd length) is differentiated by autograd through the eager
attention. grads.safetensors holds ``input_ids`` and ``targets`` [2, 9] int64, ``loss`` [1] and one
``grad.<HF parameter name>`` tensor per parameter (computed in float64, stored as float32) (HF names and layouts: nn.Linear
[out, in]). Run from the repository root:

    .venv-dev/bin/python scripts/make_grad_fixtures.py
"""
import sys
from pathlib import Path

import torch
import transformers
from safetensors.torch import save_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_gpt2_fixtures import SEED, randomize_  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
BATCH, LENGTH = 2, 9


def build(config_class, model_class, vocab, hidden, heads, kv_heads, ffn, theta, tied):
    cfg = config_class(vocab_size=vocab, hidden_size=hidden, num_attention_heads=heads,
                       num_key_value_heads=kv_heads, head_dim=hidden // heads,
                       intermediate_size=ffn, num_hidden_layers=2, max_position_embeddings=32,
                       rope_theta=theta, rms_norm_eps=1e-6, tie_word_embeddings=tied,
                       attn_implementation="eager")
    model = model_class(cfg).eval()
    randomize_(model, embed_std=2.5 / hidden ** 0.5, head_std=2.5 / hidden ** 0.5)
    if heads // kv_heads < 2:
        raise RuntimeError("the fixtures must use grouped-query attention with G >= 2")
    return model


def write(name: str, model, description: str) -> None:
    out = OUT / name
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)           # float32 weights, HF names
    (out / "generation_config.json").unlink(missing_ok=True)      # not read by minillm
    gen = torch.Generator().manual_seed(SEED)
    V = model.config.vocab_size
    ids = torch.randint(0, V, (BATCH, LENGTH + 1), generator=gen)
    inputs, targets = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()
    model = model.double()
    model.zero_grad()
    logits = model(input_ids=inputs).logits                        # [B, T, V] float64
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))
    loss.backward()
    tensors = {"input_ids": inputs, "targets": targets, "loss": loss.detach().reshape(1).float()}
    for pname, p in model.named_parameters():
        if p.grad is None or not torch.isfinite(p.grad).all():
            raise RuntimeError(f"{pname}: no finite gradient")
        # computed in float64, stored rounded to float32 (relative rounding ≤ 6e-8): minillm's
        # safetensors reader takes the dtypes models ship in, and float64 is not one of them
        tensors[f"grad.{pname}"] = p.grad.detach().float().contiguous()
    save_file(tensors, str(out / "grads.safetensors"))
    (out / "README.md").write_text(
        f"# {name}\n\n{description}\n\nMade by `scripts/make_grad_fixtures.py` (torch seed "
        f"{torch.initial_seed()}) with torch {torch.__version__}, transformers "
        f"{transformers.__version__}; regenerate with `python scripts/make_grad_fixtures.py` "
        f"(see scripts/README.md). Random weights, no download.\n\n"
        f"- `config.json`, `model.safetensors`: float32 weights as `save_pretrained` writes them.\n"
        f"- `grads.safetensors`: `input_ids`, `targets` [{BATCH}, {LENGTH}], `loss` [1] and one "
        f"`grad.<HF name>` per parameter: torch autograd of the mean next-token cross-entropy, the "
        f"model cast to float64 (eager attention), stored rounded to float32.\n")
    sizes = {f.name: f.stat().st_size for f in out.iterdir()}
    print(f"{name}: loss {loss.item():.6f}, files {sizes}")


def main():
    torch.manual_seed(SEED + 30)
    write("grads_llama", build(transformers.LlamaConfig, transformers.LlamaForCausalLM, vocab=37,
                               hidden=24, heads=6, kv_heads=2, ffn=20, theta=1e4, tied=False),
          "Random Llama (vocab 37, hidden 24, 6 heads / 2 kv heads -> groups of 3, head_dim 4, "
          "2 layers, intermediate 20, rope_theta 1e4, rms_norm_eps 1e-6, untied lm_head).")
    torch.manual_seed(SEED + 31)
    write("grads_qwen2", build(transformers.Qwen2Config, transformers.Qwen2ForCausalLM, vocab=41,
                               hidden=16, heads=4, kv_heads=2, ffn=24, theta=1e6, tied=True),
          "Random Qwen2 (vocab 41, hidden 16, 4 heads / 2 kv heads -> groups of 2, head_dim 4, "
          "q/k/v biases, 2 layers, intermediate 24, rope_theta 1e6, rms_norm_eps 1e-6, tied).")


if __name__ == "__main__":
    main()
