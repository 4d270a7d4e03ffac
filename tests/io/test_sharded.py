"""Sharded checkpoints: ``model.safetensors.index.json`` + shards (io/hf/shards.py).

The shards are made here from a fixture's ``model.safetensors`` in transformers' layout (names
``model-0000i-of-0000n.safetensors``, the index's ``weight_map`` naming each tensor's shard):
the same weights read from one file or from the shards give bit-identical logits; an index and
shards that disagree are refused by name.
"""
import json
import shutil

import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm.io.safetensors import load_safetensors, save_safetensors
from minillm.io.hf.shards import INDEX, read_index, weight_shapes
from minillm.loading import load_model, model_class
from tests.conftest import FIXTURES

NAME = "llama3_tiny"


def shard(folder, tensors: dict, groups: list[list[str]], weight_map: dict | None = None):
    """Write ``groups`` of tensor names as shards of ``folder`` and their index."""
    n = len(groups)
    files = [f"model-{i + 1:05d}-of-{n:05d}.safetensors" for i in range(n)]
    for file, names in zip(files, groups):
        save_safetensors(folder / file, {k: np.array(tensors[k]) for k in names})
    if weight_map is None:
        weight_map = {k: file for file, names in zip(files, groups) for k in names}
    total = sum(np.array(tensors[k]).nbytes for names in groups for k in names)
    (folder / INDEX).write_text(json.dumps({"metadata": {"total_size": total},
                                            "weight_map": weight_map}))
    return files


@pytest.fixture
def sharded(tmp_path):
    """The fixture as three shards (no model.safetensors): (folder, tensors, groups, files)."""
    shutil.copy(FIXTURES / NAME / "config.json", tmp_path / "config.json")
    tensors = load_safetensors(FIXTURES / NAME / "model.safetensors")
    names = sorted(tensors)
    groups = [names[0::3], names[1::3], names[2::3]]
    return tmp_path, tensors, groups, shard(tmp_path, tensors, groups)


@pytest.mark.parametrize("fast", [False, True], ids=["model", "engine"])
def test_a_sharded_folder_reads_as_the_single_file_does(sharded, fast):
    folder, *_ = sharded
    ids = np.arange(24) % 64
    one = model_class(fast).from_pretrained(FIXTURES / NAME)
    many, _ = load_model(folder, fast=fast)
    assert many.config == one.config
    np.testing.assert_array_equal(many(ids), one(ids))


@given(st.lists(st.integers(0, 3), min_size=20, max_size=20))
def test_any_split_over_any_number_of_shards_reads_the_same(tmp_path_factory, where):
    """Tensors spread over 1-4 shards in any way (empty groups left out) read the same weights."""
    folder = tmp_path_factory.mktemp("s")
    shutil.copy(FIXTURES / NAME / "config.json", folder / "config.json")
    tensors = load_safetensors(FIXTURES / NAME / "model.safetensors")
    names = sorted(tensors)
    groups = [[k for i, k in enumerate(names) if where[i % len(where)] == g] for g in range(4)]
    shard(folder, tensors, [g for g in groups if g])
    got = model_class(False).from_pretrained(folder).params.named()
    want = model_class(False).from_pretrained(FIXTURES / NAME).params.named()
    assert got.keys() == want.keys()
    assert all(np.array_equal(got[k], want[k]) for k in want)


def test_weight_shapes_join_every_shards_header(sharded):
    folder, tensors, _, _ = sharded
    assert weight_shapes(folder / INDEX) == {k: v.shape for k, v in tensors.items()}


def test_a_missing_shard_is_named(sharded):
    folder, _, _, files = sharded
    (folder / files[1]).unlink()
    with pytest.raises(FileNotFoundError, match=f"names shard '{files[1]}', which is missing"):
        load_model(folder)


def test_a_tensor_listed_in_no_shard_is_named(sharded):
    folder, tensors, groups, files = sharded
    lost = groups[2].pop()                               # listed in the index, stored nowhere
    save_safetensors(folder / files[2], {k: np.array(tensors[k]) for k in groups[2]})
    with pytest.raises(ValueError, match=f"lists tensor '{lost}' in shard '{files[2]}', which "
                                         f"does not hold it"):
        load_model(folder)


def test_a_tensor_in_another_shard_than_listed_is_named(sharded):
    folder, _, groups, files = sharded
    index = json.loads((folder / INDEX).read_text())
    moved = groups[0][0]
    index["weight_map"][moved] = files[1]
    (folder / INDEX).write_text(json.dumps(index))
    with pytest.raises(ValueError, match=f"holds tensor '{moved}', which .* lists in '{files[1]}'"):
        load_model(folder)


def test_a_tensor_the_index_does_not_list_is_named(sharded):
    folder, _, groups, _ = sharded
    index = json.loads((folder / INDEX).read_text())
    dropped = groups[1][0]
    del index["weight_map"][dropped]
    (folder / INDEX).write_text(json.dumps(index))
    with pytest.raises(ValueError, match=f"holds tensor '{dropped}', which .* does not list"):
        load_model(folder)


def test_a_tensor_stored_in_two_shards_is_refused(sharded):
    folder, tensors, groups, files = sharded
    twice = groups[0][0]
    save_safetensors(folder / files[1], {k: np.array(tensors[k]) for k in groups[1] + [twice]})
    with pytest.raises(ValueError, match=f"tensor '{twice}' is stored in two shards"):
        load_model(folder)


def test_an_index_listing_a_tensor_twice_is_refused(sharded):
    folder, _, groups, files = sharded
    text = (folder / INDEX).read_text().replace('"weight_map": {',
                                                 f'"weight_map": {{"{groups[0][0]}": "{files[1]}", ')
    (folder / INDEX).write_text(text)
    with pytest.raises(ValueError, match=f"repeats the key '{groups[0][0]}'"):
        load_model(folder)


@pytest.mark.parametrize("shard_name", ["../model.safetensors", "sub/a.safetensors", "a.bin", 7])
def test_a_shard_outside_the_folder_or_not_safetensors_is_refused(tmp_path, shard_name):
    (tmp_path / INDEX).write_text(json.dumps({"weight_map": {"model.norm.weight": shard_name}}))
    with pytest.raises(ValueError, match="a shard must be a .safetensors file name in the same"):
        read_index(tmp_path / INDEX)


@pytest.mark.parametrize("text", ['[]', '{"weight_map": {}}', '{"metadata": {}}', '{"weight_map'])
def test_an_index_without_a_weight_map_is_refused(tmp_path, text):
    (tmp_path / INDEX).write_text(text)
    with pytest.raises(ValueError, match="weight_map|not valid JSON"):
        read_index(tmp_path / INDEX)


def test_a_folder_with_both_layouts_is_refused(sharded):
    folder, *_ = sharded
    shutil.copy(FIXTURES / NAME / "model.safetensors", folder / "model.safetensors")
    with pytest.raises(ValueError, match="has both model.safetensors and model.safetensors.index"):
        load_model(folder)


def test_a_folder_with_neither_says_what_it_looked_for(tmp_path):
    shutil.copy(FIXTURES / NAME / "config.json", tmp_path / "config.json")
    with pytest.raises(FileNotFoundError, match="no model.safetensors nor model.safetensors.index"):
        load_model(tmp_path)
