"""Check minillm's sharded Hugging Face folders against huggingface_hub and transformers, and store
the result in tests/fixtures/hf_shards/hf_shards.json (read by tests/io/test_shard_write.py).

Dev-only script (torch, transformers, huggingface_hub; see scripts/README.md). No downloads:

1. the split: huggingface_hub's ``split_state_dict_into_shards_factory`` (what transformers'
   ``save_pretrained(max_shard_size=…)`` calls) on 60 random lists of tensor sizes and limits,
   sizes given directly (``get_storage_size`` the identity): its shards, in file order, stored
   for ``plan_shards`` to equal; and ``parse_size_to_int`` on size strings, for ``shard_limit``;
2. the folder: minillm reads the tiny Qwen3 fixture (tests/fixtures/qwen3_tiny, a random
   transformers model) and writes it with ``max_shard_size=LIMIT``; transformers'
   ``AutoModelForCausalLM.from_pretrained`` loads that folder (no missing or unexpected keys)
   and gives logits equal to minillm's on the fixture's ids: max |Δ| stored, with the index
   minillm wrote (the test checks minillm still writes exactly that index). transformers' own
   ``save_pretrained(max_shard_size=LIMIT)`` of the same model is stored beside it (its shard
   count and total_size) for comparison.

    PYTHONPATH=$PWD python scripts/check_hf_shards.py
"""
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import transformers
from huggingface_hub.serialization._base import parse_size_to_int, split_state_dict_into_shards_factory

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import minillm  # noqa: E402
from minillm.io.safetensors import load_safetensors  # noqa: E402

OUT = ROOT / "tests/fixtures/hf_shards/hf_shards.json"
FIXTURE = ROOT / "tests/fixtures/qwen3_tiny"
LIMIT = 6000                       # bytes: the tiny model's 13 KB embedding gets a shard of its own
SIZES = ["500MB", "2GB", "1.5gb", " 3 KB ", "0.3KB", "1TB", "7mb", ".5GB", "1.1KB", "10kB"]


def split_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for _ in range(60):
        n = int(rng.integers(1, 12))
        sizes = {f"t{i}": int(rng.integers(1, 100)) for i in range(n)}
        limit = int(rng.integers(1, 150))
        split = split_state_dict_into_shards_factory(
            sizes, get_storage_size=lambda s: s, filename_pattern="model{suffix}.safetensors",
            max_shard_size=limit)
        cases.append({"sizes": sizes, "limit": limit,
                      "files": list(split.filename_to_tensors),
                      "shards": list(split.filename_to_tensors.values()),
                      "total_size": split.metadata["total_size"]})
    return cases


def folder_check() -> dict:
    model = minillm.GPT.from_pretrained(FIXTURE)
    stored = load_safetensors(FIXTURE / "expected.safetensors")
    ids, expected = stored["ids"].astype(np.int64), stored["logits"]            # [B, T], [B, T, V]
    ours = np.stack([model(row[None])[0] for row in ids])                              # [B, T, V]
    with tempfile.TemporaryDirectory() as tmp:
        folder, theirs_folder = Path(tmp) / "minillm", Path(tmp) / "transformers"
        model.save_pretrained(folder, max_shard_size=LIMIT)
        written = sorted(p.name for p in folder.iterdir())
        index = json.loads((folder / "model.safetensors.index.json").read_text())
        hf, info = transformers.AutoModelForCausalLM.from_pretrained(
            folder, output_loading_info=True, dtype=torch.float32)
        hf.eval()
        with torch.no_grad():
            theirs = hf(torch.from_numpy(ids)).logits.numpy()                           # [B, T, V]
        hf.save_pretrained(theirs_folder, max_shard_size=LIMIT)
        hf_index = json.loads((theirs_folder / "model.safetensors.index.json").read_text())
    return {"fixture": FIXTURE.name, "max_shard_size": LIMIT, "files": written, "index": index,
            "loading_info": {k: sorted(v) if isinstance(v, (list, set)) else str(v)
                             for k, v in info.items()},
            "max_abs_diff_logits": float(np.abs(ours - theirs).max()),
            # transformers on minillm's shards against transformers on its own fixture folder
            "max_abs_diff_vs_fixture_logits": float(np.abs(theirs - expected).max()),
            "max_abs_logit": float(np.abs(ours).max()),
            "transformers_save": {"files": len(set(hf_index["weight_map"].values())),
                                  "metadata": hf_index["metadata"],
                                  "same_weight_map": hf_index["weight_map"] == index["weight_map"]}}


def main() -> None:
    result = {"script": "scripts/check_hf_shards.py", "transformers": transformers.__version__,
              "torch": torch.__version__,
              "huggingface_hub": __import__("huggingface_hub").__version__,
              "split_cases": split_cases(np.random.default_rng(29)),
              "size_strings": {s: parse_size_to_int(s) for s in SIZES},
              "folder": folder_check()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    f = result["folder"]
    print(f"{OUT.relative_to(ROOT)}: {len(f['files'])} files, max |Δ logits| "
          f"{f['max_abs_diff_logits']:.3g} (max |logit| {f['max_abs_logit']:.3g}; against transformers "
          f"on its own folder {f['max_abs_diff_vs_fixture_logits']:.3g}), loading info "
          f"{f['loading_info']}; transformers' own save: {f['transformers_save']}")


if __name__ == "__main__":
    main()
