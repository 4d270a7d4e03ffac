"""Make the fixtures in tests/fixtures/dequant/ with the reference packages (dev venv only).

    python scripts/make_dequant_fixtures.py            # writes tests/fixtures/dequant/*

Writes:
- quants.npz: for Q8_0, Q4_0, Q4_1, BF16 and F16, random float32 arrays quantised by the `gguf`
  package (gguf.quants.quantize) -> `<T>_raw` (uint8 bytes), `<T>_expected` (gguf's float32
  dequantisation), `<T>_shape`. The tests decode `<T>_raw` with minillm and compare.
- smollm2_slices.npz (only when the SmolLM2 GGUF is present): the first 2 rows of
  blk.0.attn_q.weight (Q4_1) and token_embd.weight (Q8_0), dequantised by gguf's reader + quants.
- reference.safetensors: written by the real `safetensors` package (safetensors.torch, for BF16).
It also checks, and prints for the README: minillm reads every tensor of the SmolLM2 file equal to
gguf's dequantisation; minillm's safetensors writer is byte-identical to the reference; the
reference reads minillm's files; minillm's GGML size table equals gguf.GGML_QUANT_SIZES.
"""
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import gguf
import numpy as np
import safetensors
import safetensors.numpy
import safetensors.torch
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from minillm.io import load_safetensors, read_gguf, save_safetensors  # noqa: E402
from minillm.io.gguf.read import GGML_TYPES  # noqa: E402

OUT = REPO / "tests" / "fixtures" / "dequant"
MODEL = REPO.parent / "shared" / "data" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def quant_fixtures(rng):
    arrays = {}
    for name in ("Q8_0", "Q4_0", "Q4_1", "BF16", "F16"):
        qtype = gguf.GGMLQuantizationType[name]
        # rows with different scales, an all-equal block and a zero block (d = 0 edge cases)
        scales = np.array([[0.01], [1.0], [30.0], [1e3]])
        x = (rng.standard_normal((4, 64)) * scales).astype(np.float32)
        x[0, :32] = 0.0
        x[1, 32:] = 0.75
        raw = gguf.quants.quantize(x, qtype)  # [4, row bytes] uint8 (float16 array for F16)
        expected = gguf.quants.dequantize(raw, qtype).astype(np.float32)
        arrays[f"{name}_raw"] = np.ascontiguousarray(raw).view(np.uint8).reshape(-1)
        arrays[f"{name}_expected"] = expected.reshape(x.shape)
        arrays[f"{name}_shape"] = np.array(x.shape, dtype=np.int64)
    np.savez(OUT / "quants.npz", **arrays)


def smollm2_fixtures():
    if not MODEL.exists():
        print(f"{MODEL} absent: smollm2_slices.npz not (re)made")
        return
    reader = gguf.GGUFReader(MODEL)
    ours = read_gguf(MODEL)
    for t in reader.tensors:  # the whole file: minillm == gguf, bit for bit
        ref = gguf.quants.dequantize(t.data, t.tensor_type)
        if not np.array_equal(ours.tensor(t.name), ref):
            raise SystemExit(f"minillm differs from gguf on {t.name}")
    print(f"all {len(reader.tensors)} SmolLM2 tensors: minillm == gguf.quants.dequantize (exact)")
    by_name = {t.name: t for t in reader.tensors}
    slices = {}
    for key, name in (("attn_q_rows", "blk.0.attn_q.weight"),
                      ("token_embd_rows", "token_embd.weight")):
        t = by_name[name]
        slices[key] = gguf.quants.dequantize(t.data, t.tensor_type)[:2].astype(np.float32)
    np.savez(OUT / "smollm2_slices.npz", **slices)


def safetensors_fixtures():
    g = torch.Generator().manual_seed(0)
    ref = {"f32": torch.randn(3, 5, generator=g), "f16": torch.randn(4, generator=g).half(),
           "bf16": torch.randn(2, 3, generator=g).bfloat16(),
           "i32": torch.arange(6, dtype=torch.int32),
           "i64": torch.tensor([-1, 2**40], dtype=torch.int64), "scalar": torch.tensor(3.5),
           "empty": torch.zeros(0, 7)}
    path = OUT / "reference.safetensors"
    safetensors.torch.save_file(ref, path, metadata={"format": "pt"})
    loaded = load_safetensors(path)
    for k, v in ref.items():
        if not np.array_equal(loaded[k], v.float().numpy() if v.is_floating_point() else v.numpy()):
            raise SystemExit(f"minillm reads {k} differently from the reference")
    as_numpy = {k: (v.float() if k == "bf16" else v).numpy() for k, v in ref.items()}
    with tempfile.TemporaryDirectory() as tmp:
        ours = Path(tmp) / "ours.safetensors"
        save_safetensors(ours, as_numpy, metadata={"format": "pt"}, bf16={"bf16"})
        same = ours.read_bytes() == path.read_bytes()
        print(f"our writer byte-identical to safetensors.torch.save_file: {same}")
        back = safetensors.torch.load_file(ours)  # the reference reads ours
        ok = all(torch.equal(back[k], v) for k, v in ref.items())
        print(f"safetensors {safetensors.__version__} reads our file back equal: {ok}")
        plain = {k: v for k, v in as_numpy.items() if k != "bf16"}
        np_path, ours_np = Path(tmp) / "np.safetensors", Path(tmp) / "ours_np.safetensors"
        safetensors.numpy.save_file(plain, np_path, metadata={"a": "1"})
        save_safetensors(ours_np, plain, metadata={"a": "1"})
        same_np = np_path.read_bytes() == ours_np.read_bytes()
        print(f"our writer byte-identical to safetensors.numpy.save_file: {same_np}")
        if not (same and ok and same_np):
            raise SystemExit("safetensors compatibility check failed")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    sizes = {int(t): s for t, s in gguf.GGML_QUANT_SIZES.items()}
    mismatched = {t for t in GGML_TYPES if sizes.get(t) != GGML_TYPES[t][1:]}
    print(f"GGML size table matches gguf.GGML_QUANT_SIZES: {not mismatched} {mismatched or ''}")
    quant_fixtures(np.random.default_rng(0))
    smollm2_fixtures()
    safetensors_fixtures()
    print(f"versions: numpy {np.__version__}, gguf {version('gguf')}, "
          f"safetensors {safetensors.__version__}, torch {torch.__version__}")


if __name__ == "__main__":
    main()
