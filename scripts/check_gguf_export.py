"""Check minillm's GGUF export against the references; write tests/fixtures/gguf_export/.

Dev-only (gguf, torch, transformers; see scripts/README.md). Run from the repository root:

    /work/venv-gguf/bin/python scripts/check_gguf_export.py

For three models -- weights/shakespeare (GPT-2 architecture, trained by minillm), and the random
HF fixtures tests/fixtures/llama_tiny (``llama``: Q/K rows permuted) and qwen2_tiny (``qwen2``) --
it exports a GGUF file with ``model.save_gguf``, then:

1. reads it with the ``gguf`` package's GGUFReader: every tensor equals what minillm's reader
   returns (before un-permuting), and the metadata keys are typed as llama.cpp's converter types them;
2. loads it with transformers (``AutoModelForCausalLM.from_pretrained(dir, gguf_file=...)``) and
   compares its logits with minillm's (the bound is 1e-4);
3. for shakespeare, loads the tokenizer with ``AutoTokenizer.from_pretrained(dir, gguf_file=...)``
   and compares ids on a multilingual text.

It writes ``expected.safetensors`` (ids and transformers' logits per model) so that the tests can
check minillm's loaded GGUF against transformers without either package, and prints a report.
"""
import sys
import tempfile
from pathlib import Path

import gguf
import numpy as np
import torch
import transformers
from safetensors.numpy import save_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from minillm.io.gguf import read_gguf  # noqa: E402
from minillm.io.gguf_write import quantize_q8_0  # noqa: E402
from minillm.loading import load_model  # noqa: E402
from minillm.tokenizer import Tokenizer  # noqa: E402

OUT = ROOT / "tests/fixtures/gguf_export"
TEXT = "ROMEO: But soft, what light through yonder window breaks? 海水 123 café!\n\n"


def byte_tokenizer(n: int) -> Tokenizer:
    """The tokenizer given to the random fixtures: ids 0..n-1 are the single bytes 0..n-1."""
    return Tokenizer({bytes([i]): i for i in range(n)}, {})


def check(name, model, tok, ids, dtype="f32"):
    with tempfile.TemporaryDirectory() as d:
        path = model.save_gguf(Path(d) / f"{name}.gguf", tok, dtype=dtype)
        mine = read_gguf(str(path))
        reader = gguf.GGUFReader(path)
        worst = 0.0
        for t in reader.tensors:
            ref = gguf.dequantize(t.data, t.tensor_type).reshape(mine.tensors[t.name].shape)
            worst = max(worst, float(np.abs(ref - mine.tensor(t.name)).max()))
        arch = reader.fields["general.architecture"].contents()
        m2, _ = load_model(path)
        ours = m2(np.array(ids))                                             # [T, V]
        # transformers 5.24 maps gpt2.context_length to GPT2Config.n_ctx, not n_positions (the
        # size of wpe), and ignores feed_forward_length: both are passed by hand for GPT-2.
        fix = dict(n_positions=model.config.n_ctx, n_inner=model.config.d_ff) if arch == "gpt2" else {}
        hf = transformers.AutoModelForCausalLM.from_pretrained(d, gguf_file=path.name,
                                                               dtype=torch.float32, **fix).eval()
        with torch.no_grad():
            theirs = hf(torch.tensor([ids])).logits[0].numpy()
        same = np.abs(model(np.array(ids)) - ours).max()
        print(f"{name} {dtype}: arch {arch}, {len(reader.tensors)} tensors, gguf-package vs minillm "
              f"reader max|Δ| {worst:.1e}; minillm before/after export max|Δ logits| {same:.1e}; "
              f"transformers vs minillm max|Δ logits| {np.abs(theirs - ours).max():.1e} "
              f"(max |logit| {np.abs(theirs).max():.1f})")
        if name == "shakespeare" and dtype == "f32":
            hf_tok = transformers.AutoTokenizer.from_pretrained(d, gguf_file=path.name)
            hf_ids = hf_tok(TEXT, add_special_tokens=False)["input_ids"]
            print(f"  AutoTokenizer(gguf_file) ids == minillm ids: {hf_ids == tok.encode(TEXT)}")
        return theirs


def check_q8_0(named):
    """minillm's Q8_0 quantiser vs the gguf package's, byte for byte (random data with ties and
    zero blocks, and every matrix of the model)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256)).astype(np.float32)
    x[0, :32], x[1, :32] = 0, np.arange(32) - 12.7
    arrays = [x * s for s in (1e-3, 1.0, 100.0)] + [a for a in named.values() if a.ndim == 2]
    same = all(np.array_equal(gguf.quants.quantize(a, gguf.GGMLQuantizationType.Q8_0).reshape(-1),
                              quantize_q8_0(a)) for a in arrays)
    print(f"Q8_0 bytes equal to gguf.quants.quantize on {len(arrays)} arrays: {same}")


def check_smollm2():
    """A real llama.cpp conversion (SmolLM2-135M-Instruct, when present) read by minillm and written
    again: every tokenizer.ggml.* and llama.* key must come back as the converter wrote it."""
    src = ROOT.parent / "shared/data/models/SmolLM2-135M-Instruct.Q4_1.gguf"
    if not src.exists():
        print(f"{src} absent: SmolLM2 re-export not checked")
        return
    model, tok = load_model(src)
    with tempfile.TemporaryDirectory() as d:
        out = model.save_gguf(Path(d) / "smollm2.gguf", tok, dtype="q8_0")
        a, b = read_gguf(str(src)).metadata, read_gguf(str(out)).metadata
    keys = sorted(k for k in a if k.startswith(("tokenizer.ggml.", "llama.")))
    differ = [k for k in keys if a[k] != b.get(k)]
    print(f"SmolLM2 re-exported (q8_0): {len(keys) - len(differ)} of {len(keys)} tokenizer.ggml.* "
          f"and llama.* keys equal to llama.cpp's conversion; differ: {differ}")


def main():
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, gguf 0.19.0")
    expected = {}
    model, tok = load_model(ROOT / "weights/shakespeare")
    check_q8_0(model.params.named())
    ids = tok.encode(TEXT)
    for dtype in ("f32", "f16", "q8_0"):
        logits = check("shakespeare", model, tok, ids, dtype)
        expected[f"shakespeare_{dtype}_logits"] = logits.astype(np.float32)
    expected["shakespeare_ids"] = np.array(ids, np.int64)
    for name in ("llama_tiny", "qwen2_tiny"):
        model, _ = load_model(ROOT / "tests/fixtures" / name)
        ids = list(range(1, 60, 3))
        for dtype in ("f32", "f16"):
            logits = check(name, model, byte_tokenizer(model.config.vocab_size), ids, dtype)
            expected[f"{name}_{dtype}_logits"] = logits.astype(np.float32)
        expected[f"{name}_ids"] = np.array(ids, np.int64)
    check_smollm2()
    OUT.mkdir(parents=True, exist_ok=True)
    save_file(expected, str(OUT / "expected.safetensors"))
    print(f"wrote {OUT / 'expected.safetensors'}")


if __name__ == "__main__":
    main()
