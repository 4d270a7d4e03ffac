"""``load_model`` returns the pair (model, tokenizer) and takes every name ``--model`` takes,
from any working directory (resources.named_model, the one resolver the CLI uses too); passing
the pair where a model is wanted is a TypeError that says so."""
import pytest

from minillm import beam_search, generate, load_model
from minillm.decoding.generate import generate_simple
from tests.conftest import REPO

HAVE_SHAKESPEARE = (REPO / "weights" / "shakespeare" / "config.json").is_file()


@pytest.mark.skipif(not HAVE_SHAKESPEARE, reason="needs the clone's weights/shakespeare")
@pytest.mark.parametrize("name", ["shakespeare", "weights/shakespeare"])
def test_load_model_takes_the_shipped_names_from_any_folder(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                      # outside the clone
    pair = load_model(name)
    assert isinstance(pair, tuple) and len(pair) == 2
    model, tokenizer = pair
    assert model.config.vocab_size == tokenizer.vocab_size
    from minillm.cli.resolve import resolve_model_path
    assert resolve_model_path(name) == REPO / "weights" / "shakespeare"


def test_an_unknown_name_says_what_load_model_takes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="shipped model .*shakespeare"):
        load_model("no-such-model")


@pytest.mark.parametrize("call", [lambda pair: list(generate(pair, [1, 2], 3)),
                                  lambda pair: list(generate_simple(pair, [1, 2], 3)),
                                  lambda pair: beam_search(pair, [1, 2], beam_size=2)])
def test_passing_the_pair_to_generate_says_to_pass_the_model(call):
    from minillm import GPT, ModelConfig
    model = GPT(ModelConfig(vocab_size=32, n_ctx=16, d_model=16, n_heads=2, n_layers=1), seed=0)
    with pytest.raises(TypeError, match=r"load_model returns \(model, tokenizer\): pass the model"):
        call((model, None))
