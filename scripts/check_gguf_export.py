"""Check minillm's GGUF export against the references; write tests/fixtures/gguf_export/.

Dev-only (gguf, torch, transformers, accelerate, cyllama; see scripts/README.md). Run from the
repository root:

    .venv-dev/bin/python scripts/check_gguf/export.py [--llama-cpp-only]

For three models -- weights/shakespeare (GPT-2 architecture, trained by minillm), and the random
HF fixtures tests/fixtures/llama_tiny (``llama``: Q/K rows permuted) and qwen2_tiny (``qwen2``) --
it exports a GGUF file with ``model.save_gguf``, then:

1. reads it with the ``gguf`` package's GGUFReader: every tensor equals what minillm's reader
   returns (before un-permuting), and the metadata keys are typed as llama.cpp's converter types them;
2. loads it with transformers (``AutoModelForCausalLM.from_pretrained(dir, gguf_file=...)``) and
   compares its logits with minillm's (the bound is 1e-4);
3. for shakespeare, loads the tokenizer with ``AutoTokenizer.from_pretrained(dir, gguf_file=...)``
   and compares ids on a multilingual text;
4. the llama.cpp pass (``llama_cpp_pass``; alone with ``--llama-cpp-only``, needing only cyllama):
   every architecture (+ SmolLM2 when present) and dtype, loaded by llama.cpp: token ids, logits
   and 16 greedy tokens against minillm's, as a table; exit status 1 if a row fails.

It writes ``expected.safetensors`` (ids and transformers' logits per model) so that the tests can
check minillm's loaded GGUF against transformers without either package, and prints a report.
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from minillm.chat.chatml import chatml_ids  # noqa: E402
from minillm.decoding.generate import generate  # noqa: E402
from minillm.io.gguf.read import read_gguf  # noqa: E402
from minillm.io.gguf.write import quantize_q8_0  # noqa: E402
from minillm.loading import load_model  # noqa: E402
from minillm.tokenizer import Tokenizer  # noqa: E402

OUT = ROOT / "tests/fixtures/gguf_export"
TEXT = "ROMEO: But soft, what light through yonder window breaks? 海水 123 café!\n\n"
SMOLLM2 = Path(os.environ.get("MINILLM_SHARED_DATA", ROOT.parent / "shared" / "data")) \
    / "models/SmolLM2-135M-Instruct.Q4_1.gguf"


def byte_tokenizer(n: int) -> Tokenizer:
    """The tokenizer given to the random fixtures: ids 0..n-1 are the single bytes 0..n-1."""
    return Tokenizer({bytes([i]): i for i in range(n)}, {})


def check(name, model, tok, ids, dtype="f32"):
    import gguf
    import torch
    import transformers
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
    import gguf
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256)).astype(np.float32)
    x[0, :32], x[1, :32] = 0, np.arange(32) - 12.7
    arrays = [x * s for s in (1e-3, 1.0, 100.0)] + [a for a in named.values() if a.ndim == 2]
    same = all(np.array_equal(gguf.quants.quantize(a, gguf.GGMLQuantizationType.Q8_0).reshape(-1),
                              quantize_q8_0(a)) for a in arrays)
    print(f"Q8_0 bytes equal to gguf.quants.quantize on {len(arrays)} arrays: {same}")


def check_smollm2():
    """A real llama.cpp conversion (SmolLM2-135M-Instruct, when present) read by minillm and written
    again: every metadata key must come back as the converter wrote it (only the encoding's
    general.file_type and quantization_version may change)."""
    if not SMOLLM2.exists():
        print(f"{SMOLLM2} absent: SmolLM2 re-export not checked")
        return
    model, tok = load_model(SMOLLM2)
    with tempfile.TemporaryDirectory() as d:
        out = model.save_gguf(Path(d) / "smollm2.gguf", tok, dtype="q8_0")
        a, b = read_gguf(str(SMOLLM2)).metadata, read_gguf(str(out)).metadata
    differ = [k for k in a if (a[k], a.types[k]) != (b.get(k), b.types.get(k))]
    print(f"SmolLM2 re-exported (q8_0): {len(a) - len(differ)} of {len(a)} metadata keys equal "
          f"(value and type) to llama.cpp's conversion; differ: {differ}")


# ---- llama.cpp pass ------------------------------------------------------------------------------
# Tolerances on max |Δ logits| between llama.cpp and minillm on the same file, relative to the
# largest |logit|. Both read the same stored weights; minillm computes in float32 throughout.
# llama.cpp (run here without flash attention and with an F32 KV cache: llama_cpp_ref.py) rounds
# GELU through an F16 table (GPT-2: ~2e-4 relative even for F32 files), multiplies F16 weights with
# activations rounded to F16, and Q8_0 weights with activations quantised to Q8_0 (ggml's
# vec_dot types): hence a bound per dtype.
TOLERANCE = {"f32": 1e-3, "f16": 5e-3, "q8_0": 5e-2}
TEXTS = [TEXT, "Hello world", "海水会吸收较多红光，蓝光更容易被散射回来。", "  two  spaces\n\ttab",
         "<|endoftext|> as text", "naïve café — Ünïcödé"]
ASCII_TEXTS = ["Bad cab, 42 ADA!", "a  b\n\nc", "ABC abc 123"]   # byte vocabularies of 101 ids


def subjects():
    """(name, model, tokenizer, texts, prompt ids) for every architecture minillm exports."""
    model, tok = load_model(ROOT / "weights/shakespeare")
    yield "shakespeare (gpt2)", model, tok, TEXTS, tok.encode(TEXT)
    for name in ("llama_tiny", "qwen2_tiny"):
        model, _ = load_model(ROOT / "tests/fixtures" / name)
        yield name, model, byte_tokenizer(model.config.vocab_size), ASCII_TEXTS, \
            list(range(1, 60, 3))
    if SMOLLM2.exists():
        model, tok = load_model(SMOLLM2)
        prompt = chatml_ids(tok, [{"role": "user", "content": "What is the capital of France?"}])
        yield "SmolLM2-135M (llama)", model, tok, TEXTS, prompt
    else:
        print(f"{SMOLLM2} absent: SmolLM2 not checked with llama.cpp")


def greedy_report(ours: list[int], theirs: list[int], margins: list[float], diff: float):
    """-> (ok, text): equal, or a first difference at a near-tie: llama.cpp's top-2 margin there
    at most 2·max|Δ logits| (two logits each off by up to max|Δ| can swap)."""
    if ours == theirs:
        return True, f"equal ({len(ours)})"
    i = next(k for k, (a, b) in enumerate(zip(ours + [-1], theirs)) if a != b)
    tie = margins[i] <= 2 * diff
    return tie, (f"first diff at {i}: {'a near-tie' if tie else 'NOT a near-tie'} (llama.cpp "
                 f"top-2 margin {margins[i]:.2g}, 2·max|Δ| {2 * diff:.2g})")


def llama_cpp_pass():
    """Each architecture x dtype: llama.cpp loads minillm's file, tokenizes TEXTS (ids equal to
    minillm's), computes the prompt's logits (max |Δ| vs minillm reading the same file) and
    16 greedy tokens (equal, or the first difference and llama.cpp's margin there)."""
    from llama_cpp_ref import LlamaCpp
    print("llama.cpp (cyllama 0.2.18, build b9190) on minillm's exported files; max|Δ logits| "
          "bound = k · max|logit|, k: " + ", ".join(f"{k} {v:g}" for k, v in TOLERANCE.items()))
    print("| model | dtype | ids equal | max abs diff logits (bound) | greedy 16 |")
    print("|---|---|---|---|---|")
    failed = False
    for name, model, tok, texts, prompt in subjects():
        for dtype in ("f32", "f16", "q8_0"):
            with tempfile.TemporaryDirectory() as d:
                path = model.save_gguf(Path(d) / "m.gguf", tok, dtype=dtype)
                back, back_tok = load_model(path)
                with LlamaCpp(path, n_ctx=len(prompt) + 32) as ref:
                    same = sum(ref.tokenize(t) == back_tok.encode_ordinary(t) for t in texts)
                    theirs_logits = ref.logits(prompt)                     # [T, V]
                    theirs, margins = ref.greedy(prompt, 16)
            diff = float(np.abs(theirs_logits - back(np.array(prompt))).max())
            bound = TOLERANCE[dtype] * float(np.abs(theirs_logits).max())
            ours = [s.id for s in generate(back, prompt, 16, temperature=0, stop_at_eos=False)
                    if s.id is not None]
            greedy_ok, greedy = greedy_report(ours, theirs, margins, diff)
            ok = same == len(texts) and diff <= bound and greedy_ok
            failed |= not ok
            print(f"| {name} | {dtype} | {same}/{len(texts)} | {diff:.1e} ({bound:.1e}) | {greedy} |"
                  + ("" if ok else " FAIL"), flush=True)
    return not failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-cpp-only", action="store_true",
                        help="only the llama.cpp pass (needs cyllama, not torch/transformers)")
    if parser.parse_args().llama_cpp_only:
        sys.exit(0 if llama_cpp_pass() else 1)
    import torch
    import transformers
    from safetensors.numpy import save_file
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
    sys.exit(0 if llama_cpp_pass() else 1)


if __name__ == "__main__":
    main()
