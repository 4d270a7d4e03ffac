"""Every value minillm writes into a GGUF header is range-checked before the file is opened: a
ValueError names the field, its value and what is allowed, and no file appears. What the loader
accepts (config.json) is what the exporter can write."""
import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.io.hf.config import from_hf_dict
from minillm import GPT, ModelConfig
from minillm.io.gguf.read import read_gguf
from minillm.io.gguf.write import (ARRAY, BOOL, FLOAT32, INT32, STRING, UINT8, UINT32, UINT64,
                                   write_gguf)
from minillm.io.gguf.limits import FLOAT64, check_value
from tests.io.test_gguf_export import byte_tokenizer

LLAMA = ModelConfig(vocab_size=256, n_ctx=16, d_model=32, n_heads=2, n_layers=1, arch="llama")


def export_with(tmp_path, **changes):
    """Export a tiny model whose config was changed AFTER it was checked (a dataclass is
    mutable: the exporter must not rely on the loader alone)."""
    model = GPT(dataclasses.replace(LLAMA))          # (a copy: the config is changed below)
    for name, value in changes.items():
        setattr(model.config, name, value)
    model.save_gguf(tmp_path / "m.gguf", byte_tokenizer(256))


@pytest.mark.parametrize("changes, field", [
    (dict(bos_id=2**32), "tokenizer.ggml.bos_token_id = 4,294,967,296"),
    (dict(bos_id=5000), "tokenizer.ggml.bos_token_id = 5,000 is not a token id of the model's "
                        "256-token vocabulary: allowed \\[0, 256\\)"),
    (dict(n_ctx=10**30), "llama.context_length = 1000000000000000000000000000000 does not fit "
                         "its type uint32: allowed integers in \\[0, 4,294,967,295\\]"),
    (dict(rope_theta=1e300), "llama.rope.freq_base = 1e\\+300 does not fit its type float32"),
])
def test_export_refuses_out_of_range_header_values_before_opening(tmp_path, changes, field):
    with pytest.raises(ValueError, match=field):
        export_with(tmp_path, **changes)
    assert list(tmp_path.iterdir()) == []             # nothing written, not even a temp file


@pytest.mark.parametrize("key, value, message", [
    ("bos_token_id", 2**32, "bos_id \\(config.json: bos_token_id\\) = 4,294,967,296 is not a "
                            "token id of the 2,048-token vocabulary: allowed \\[0, 2,048\\)"),
    ("bos_token_id", 5000, "bos_token_id\\) = 5,000 is not a token id of the 2,048-token"),
    ("max_position_embeddings", 10**30, "n_ctx \\(config.json: max_position_embeddings or "
                                        "n_positions\\) = 1,000,.* is out of range: allowed "
                                        "\\[1, 4,294,967,295\\]"),
])
def test_config_json_values_that_could_never_be_exported_are_refused_at_load(key, value, message):
    d = {"model_type": "llama", "vocab_size": 2048, "hidden_size": 32, "num_attention_heads": 2,
         "num_hidden_layers": 1, "intermediate_size": 64, key: value}
    with pytest.raises(ValueError, match=message):
        from_hf_dict(d)


@pytest.mark.parametrize("vtype, value, message", [
    (UINT8, 256, "allowed integers in \\[0, 255\\]"), (INT32, -2**31 - 1, "int32"),
    (UINT64, -1, "uint64"), (UINT32, True, "uint32"), (UINT32, 1.5, "uint32"),
    (FLOAT32, 1e39, "float32"), (BOOL, 2, "True or False"),
    (STRING, "a\ud800b", "encodable as UTF-8"), (ARRAY, (UINT32, [1, 2**40]), "\\[1\\] = 1099511627776"),
])
def test_write_gguf_names_the_field_of_a_value_its_type_cannot_hold(tmp_path, vtype, value,
                                                                    message):
    with pytest.raises(ValueError, match=f"GGUF field k.*{message}"):
        write_gguf(tmp_path / "x.gguf", {"k": (vtype, value)}, {})
    assert not (tmp_path / "x.gguf").exists()


@given(st.integers(min_value=-2**70, max_value=2**70))
def test_a_uint32_field_is_written_exactly_or_refused(value):
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.gguf"
        try:
            write_gguf(path, {"k": (UINT32, value)}, {})
        except ValueError as exc:
            assert "GGUF field k" in str(exc) and not path.exists()
            assert not 0 <= value < 2**32
        else:
            assert read_gguf(str(path)).metadata["k"] == value


def test_an_exported_config_is_loadable_after_the_checks(tmp_path):
    model = GPT(dataclasses.replace(LLAMA, bos_id=1, eos_id=2))
    path = model.save_gguf(tmp_path / "m.gguf", byte_tokenizer(256))
    assert read_gguf(str(path)).metadata["tokenizer.ggml.bos_token_id"] == 1


@pytest.mark.parametrize("vtype", [FLOAT32, FLOAT64])
def test_inf_and_nan_are_written_alike_as_themselves(vtype):
    """A legal GGUF may carry a float32 inf or NaN; both are exported as they are (the export
    refused inf and passed NaN). Only a finite value the type would turn into inf is refused."""
    for v in (float("inf"), float("-inf"), float("nan")):
        check_value("general.some_float", vtype, v)
    if vtype == FLOAT32:
        with pytest.raises(ValueError, match="magnitude at most 3.403e\\+38"):
            check_value("general.some_float", FLOAT32, 1e39)
