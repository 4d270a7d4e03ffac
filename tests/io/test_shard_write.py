"""Writing sharded Hugging Face folders: ``save_pretrained(path, max_shard_size=…)``
(io/hf/shard_write.py, the commit in io/commit.py).

The split is huggingface_hub's (the shards it makes for 60 random size lists, and its reading of
size strings, stored by scripts/check_hf_shards.py); a folder reads back bit-identical weights for
any limit; the index is exactly transformers' layout; a save replaces every weights file of an
earlier one (no stale shard, no model.safetensors beside an index), also when a crash cut the
save short; bad limits are refused before anything is written. That transformers loads such a
folder to the same logits is recorded in tests/fixtures/hf_shards/hf_shards.json.
"""
import json
import os
from pathlib import Path

import pytest
from hypothesis import assume, given, strategies as st

from minillm import GPT, ModelConfig
from minillm.cli.train import shard_size
from minillm.io import commit, commit_record
from minillm.io.hf.shard_write import plan_shards, shard_limit
from minillm.io.hf.shards import INDEX, shard_names
from minillm.io.hf_names import named_to_hf
from minillm.io.safetensors import load_safetensors
from tests.conftest import REPO
from tests.io.test_atomic import same, small

STORED = json.loads((REPO / "tests/fixtures/hf_shards/hf_shards.json").read_text())


def tensors_of(model):
    return named_to_hf(model.params.named(), model.config)


def weights_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "config.json")


def random_model(seed: int, arch: str, layers: int) -> GPT:
    return GPT(ModelConfig(vocab_size=19, n_ctx=8, d_model=8, n_heads=2, n_layers=layers,
                           arch=arch, n_kv_heads=1 if arch == "llama" else None), seed=seed)


@pytest.mark.parametrize("case", STORED["split_cases"], ids=lambda c: f"{len(c['sizes'])}-{c['limit']}")
def test_the_split_is_huggingface_hubs(case):
    shards = plan_shards(case["sizes"], case["limit"])
    assert shards == case["shards"]
    assert shard_names(len(shards)) == case["files"]


@pytest.mark.parametrize("text", sorted(STORED["size_strings"]))
def test_size_strings_read_as_transformers_reads_them(text):
    assert shard_limit(text) == STORED["size_strings"][text]


@given(seed=st.integers(0, 2**32 - 1), arch=st.sampled_from(["gpt2", "llama"]),
       layers=st.integers(1, 3), limit=st.integers(1, 3000))
def test_any_shard_limit_reads_back_the_same_weights(tmp_path_factory, seed, arch, layers, limit):
    model = random_model(seed, arch, layers)
    folder = tmp_path_factory.mktemp("sharded")
    model.save_pretrained(folder, max_shard_size=limit)
    tensors = tensors_of(model)
    shards = plan_shards({k: a.nbytes for k, a in tensors.items()}, limit)
    assume(len(shards) > 1)                       # (one shard is model.safetensors: tested below)
    assert weights_files(folder) == sorted([INDEX, *shard_names(len(shards))])
    for name in shard_names(len(shards)):         # each shard within the limit, or one tensor
        held = load_safetensors(folder / name)
        assert sum(a.nbytes for a in held.values()) <= limit or len(held) == 1
    assert same(GPT.from_pretrained(folder), model)


def test_the_index_is_transformers_layout_exactly(tmp_path):
    model = small(3)
    tensors = tensors_of(model)
    model.save_pretrained(tmp_path, max_shard_size=1000)
    shards = plan_shards({k: a.nbytes for k, a in tensors.items()}, 1000)
    weight_map = {k: f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
                  for i, names in enumerate(shards) for k in names}
    expected = {"metadata": {"total_parameters": sum(a.size for a in tensors.values()),
                             "total_size": sum(4 * a.size for a in tensors.values())},
                "weight_map": dict(sorted(weight_map.items()))}
    text = (tmp_path / INDEX).read_text(encoding="utf-8")
    assert text == json.dumps(expected, indent=2, sort_keys=True) + "\n"
    assert text.startswith('{\n  "metadata": {\n    "total_parameters": ')
    assert list(json.loads(text)["weight_map"]) == sorted(tensors)


def test_minillm_writes_the_index_transformers_loaded(tmp_path):
    """The index the check script saw transformers load (no missing or unexpected keys, the
    same logits as transformers on its own folder) is the one minillm writes today."""
    folder = STORED["folder"]
    GPT.from_pretrained(REPO / "tests/fixtures" / folder["fixture"]).save_pretrained(
        tmp_path, max_shard_size=folder["max_shard_size"])
    assert json.loads((tmp_path / INDEX).read_text()) == folder["index"]
    assert sorted(p.name for p in tmp_path.iterdir()) == folder["files"]
    assert folder["loading_info"] == {"missing_keys": [], "unexpected_keys": [],
                                      "mismatched_keys": [], "error_msgs": []}
    assert folder["max_abs_diff_vs_fixture_logits"] == 0.0
    assert folder["max_abs_diff_logits"] <= 1e-4 * folder["max_abs_logit"]


def test_a_tensor_larger_than_the_limit_gets_a_shard_of_its_own(tmp_path):
    model = small(1)                                  # wte: 26 × 32 floats = 3,328 bytes
    model.save_pretrained(tmp_path, max_shard_size="1KB")
    index = json.loads((tmp_path / INDEX).read_text())["weight_map"]
    tensors = tensors_of(model)
    big = [k for k, a in tensors.items() if a.nbytes > 1000]
    assert big
    for name in big:
        alone = load_safetensors(tmp_path / index[name])
        assert list(alone) == [name]
        assert os.path.getsize(tmp_path / index[name]) > 1000
    assert plan_shards({"a": 4, "big": 9, "c": 4}, 8) == [["big"], ["a", "c"]]


def test_a_limit_above_the_model_writes_one_model_safetensors(tmp_path):
    small(2).save_pretrained(tmp_path, max_shard_size="2GB")
    assert weights_files(tmp_path) == ["model.safetensors"]
    assert same(GPT.from_pretrained(tmp_path), small(2))


@pytest.mark.parametrize("first,second", [(300, 2000), (2000, 300), (300, None), (None, 300)])
def test_a_save_leaves_no_weights_file_of_an_earlier_save(tmp_path, first, second):
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "model-extra.safetensors").write_text("mine too")     # not a shard's name
    small(4).save_pretrained(tmp_path, max_shard_size=first)
    small(5).save_pretrained(tmp_path, max_shard_size=second)
    n = len(plan_shards({k: a.nbytes for k, a in tensors_of(small(5)).items()}, second or 1 << 60))
    expected = ["model.safetensors"] if n == 1 else sorted([INDEX, *shard_names(n)])
    assert weights_files(tmp_path) == sorted([*expected, "model-extra.safetensors", "notes.txt"])
    assert same(GPT.from_pretrained(tmp_path), small(5))


def test_a_crash_after_the_commit_point_is_finished_by_the_next_load(tmp_path, monkeypatch):
    small(4).save_pretrained(tmp_path, max_shard_size=300)               # many shards
    real_replace = commit.os.replace
    def replace(src, dst):                                               # killed mid-renames
        if os.path.basename(dst) == "config.json":
            raise KeyboardInterrupt
        real_replace(src, dst)
    monkeypatch.setattr(commit.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        small(5).save_pretrained(tmp_path)                               # one file now
    monkeypatch.setattr(commit.os, "replace", real_replace)
    assert (tmp_path / INDEX).exists() and (tmp_path / "model.safetensors").exists()
    assert same(GPT.from_pretrained(tmp_path), small(5))                 # the load finishes it
    assert weights_files(tmp_path) == ["model.safetensors"]


def test_a_record_removing_anything_but_stale_weights_is_refused(tmp_path):
    small(0).save_pretrained(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    pairs = []
    for name in ("config.json", "model.safetensors"):      # a model's pair, as a save leaves it
        tmp = tmp_path / f".{name}.tmp-0123456789ab"
        tmp.write_bytes((tmp_path / name).read_bytes())
        pairs.append([tmp.name, name, os.stat(tmp).st_ino, os.stat(tmp).st_size])
    text = commit_record.record_text(tmp_path, pairs, ["notes.txt"])
    (tmp_path / f"{commit.RECORD}0123456789ab.json").write_text(text)
    with pytest.raises(ValueError, match="not a list of a model's stale weights files"):
        GPT.from_pretrained(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_link_at_a_stale_shard_is_refused_and_nothing_written(tmp_path):
    small(0).save_pretrained(tmp_path)
    before = (tmp_path / "model.safetensors").read_bytes()
    (tmp_path / "model-00001-of-00009.safetensors").symlink_to(tmp_path / "model.safetensors")
    with pytest.raises(ValueError, match="symbolic link"):
        small(1).save_pretrained(tmp_path, max_shard_size=300)
    assert (tmp_path / "model.safetensors").read_bytes() == before
    assert not (tmp_path / INDEX).exists()


@pytest.mark.parametrize("bad,message", [
    ("2XB", "a unit KB, MB, GB or TB"), ("2GiB", "a unit KB, MB, GB or TB"),
    ("GB", "a unit KB, MB, GB or TB"), ("-1MB", "a unit KB, MB, GB or TB"),
    ("1e3MB", "a unit KB, MB, GB or TB"), ("nanGB", "a unit KB, MB, GB or TB"),
    ("", "a unit KB, MB, GB or TB"), ("0.0001KB", "is 0 bytes"), (0, "is 0 bytes"),
    (-5, "is -5 bytes")])
def test_bad_shard_sizes_are_refused_before_anything_is_written(tmp_path, bad, message):
    with pytest.raises(ValueError, match=message):
        small(0).save_pretrained(tmp_path / "out", max_shard_size=bad)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("bad", [True, 1.5, None.__class__, [1]])
def test_a_shard_size_of_another_type_is_a_type_error(bad):
    with pytest.raises(TypeError, match="an int .bytes. or a string like '2GB'"):
        shard_limit(bad)


def test_the_cli_flag_reads_bytes_and_units():
    import argparse
    assert shard_size("1000") == 1000
    assert shard_size("500MB") == 500 * 10**6
    with pytest.raises(argparse.ArgumentTypeError, match="a unit KB, MB, GB or TB"):
        shard_size("lots")
    assert shard_limit("1.5GB") == 1_500_000_000


def test_more_shards_than_five_digits_name_are_refused(tmp_path, monkeypatch):
    from minillm.io import checkpoints
    monkeypatch.setattr(checkpoints, "MAX_SHARDS", 3)          # (99,999 in fact)
    with pytest.raises(ValueError, match="splits this model into .* shards; transformers' names"):
        small(0).save_pretrained(tmp_path / "out", max_shard_size=1)
    assert not (tmp_path / "out").exists()
