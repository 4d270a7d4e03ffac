"""GGUF metadata of the wrong type gets minillm's words naming the key, not Python's or NumPy's
("could not convert string to float", "object of type 'int' has no len()")."""
import numpy as np
import pytest

from minillm import GPT, ModelConfig, Tokenizer
from minillm.io.gguf.read import read_gguf
from minillm.loading import load_gguf_model
from minillm.io.gguf.write import ARRAY, BOOL, FLOAT32, INT32, STRING, UINT32, write_gguf

TOK = Tokenizer({bytes([i]): i for i in range(256)}, {})


def typed(v):
    if isinstance(v, list):
        return ARRAY, (INT32 if all(isinstance(x, int) for x in v) else STRING, v)
    return {bool: BOOL, int: UINT32, float: FLOAT32, str: STRING}[type(v)], v


@pytest.fixture(scope="module")
def llama_gguf(tmp_path_factory):
    config = ModelConfig(vocab_size=256, n_ctx=16, d_model=32, n_heads=2, n_layers=1, arch="llama")
    g = read_gguf(str(GPT(config).save_gguf(tmp_path_factory.mktemp("g") / "m.gguf", TOK)))
    meta = {k: typed(v) for k, v in g.metadata.items()}
    tensors = {n: (t.ggml_type, t.shape, np.asarray(g.raw(n)).view(np.uint8).reshape(-1))
               for n, t in g.tensors.items()}
    return meta, tensors


@pytest.mark.parametrize("key, value, message", [
    ("llama.attention.layer_norm_rms_epsilon", "abc",
     "GGUF metadata llama.attention.layer_norm_rms_epsilon must be a number, got 'abc' \\(str\\)"),
    ("llama.rope.freq_base", [1, 2], "llama.rope.freq_base must be a number, got '\\[1, 2\\]'"),
    ("tokenizer.ggml.token_type", 7, "tokenizer.ggml.token_type must be a list of integers, one "
                                     "per token, got 7 \\(int\\)"),
    ("tokenizer.ggml.token_type", "abc", "token_type must be a list of integers"),
    ("tokenizer.ggml.token_type", [1, 2], "token_type has 2 entries for 256 tokens"),
])
def test_gguf_metadata_of_the_wrong_type_names_the_key(tmp_path, llama_gguf, key, value, message):
    meta, tensors = llama_gguf
    write_gguf(tmp_path / "b.gguf", {**meta, key: typed(value)}, tensors)
    with pytest.raises(ValueError, match=message):
        load_gguf_model(tmp_path / "b.gguf")
