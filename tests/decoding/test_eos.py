"""Generation stops where the model stops: at its EOS ids, read from the model's own files.

``generate``, ``generate_batch`` and ``beam_search`` stop at ``model.config.eos_ids`` by default,
as transformers' ``generate`` stops at ``generation_config.eos_token_id``; ``stop_at_eos=False``
turns that off (llama.cpp's ``--ignore-eos``). The ids come from config.json (``eos_token_id``: an
int or a list), a ``generation_config.json`` beside it (which wins, as in transformers), or GGUF's
``tokenizer.ggml.eos_token_id``. The real chat model is in tests/test_smollm2.py.
"""
import json
import shutil

import pytest

from minillm.io.hf.config import from_hf_dict, to_hf_dict
from minillm import ModelConfig, beam_search, generate, generate_batch, serve
from minillm import GPT
from tests.conftest import FIXTURES
from tests.model.strategies import random_model

TINY = dict(vocab_size=20, n_ctx=32, d_model=8, n_heads=2, n_layers=1)


def ids_of(steps):
    return [s.id for s in steps]


def with_eos(src, dst, eos, generation_eos=None):
    """A copy of checkpoint ``src`` whose config.json names ``eos`` (and generation_config.json
    ``generation_eos``, when given)."""
    shutil.copytree(src, dst)
    config = json.loads((dst / "config.json").read_text())
    (dst / "config.json").write_text(json.dumps({**config, "eos_token_id": eos}))
    if generation_eos is not None:
        (dst / "generation_config.json").write_text(json.dumps({"eos_token_id": generation_eos}))
    return GPT.from_pretrained(dst)


@pytest.mark.parametrize("value, expected", [(None, ()), (5, (5,)), ([5, 7], (5, 7)), ([], ()),
                                             ([7, 5, 7], (7, 5))])
def test_config_json_eos_token_id_may_be_an_int_or_a_list(value, expected):
    c = from_hf_dict({"model_type": "gpt2", "vocab_size": 20, "n_positions": 8,
                                  "n_embd": 8, "n_head": 2, "n_layer": 1, "eos_token_id": value})
    assert c.eos_ids == expected and c.eos_id == (expected[0] if expected else None)
    again = from_hf_dict({k: v for k, v in to_hf_dict(c).items() if k != "minillm"})
    assert again.eos_ids == expected                       # HF's own fields say the same
    assert from_hf_dict(to_hf_dict(c)) == c   # and minillm's exact copy


def test_eos_id_alone_is_the_one_eos_id_and_bad_ids_are_refused():
    assert ModelConfig(**TINY, eos_id=3).eos_ids == (3,)   # how the GGUF loader builds it
    assert ModelConfig(**TINY, eos_id=3, eos_ids=(4, 3)).eos_ids == (3, 4)
    for bad in ((20,), (-1,), ("2",), (True,)):
        with pytest.raises(ValueError, match="EOS ids"):
            ModelConfig(**TINY, eos_ids=bad)


def test_the_fixture_models_read_their_eos_id_from_config_json():
    assert GPT.from_pretrained(FIXTURES / "gpt2_tiny").config.eos_ids == (96,)
    assert GPT.from_pretrained(FIXTURES / "llama_tiny").config.eos_ids == (2,)
    assert GPT.from_pretrained(FIXTURES / "qwen2_tiny").config.eos_ids == ()


def greedy_without_eos(model, prompt, n_new):
    """Greedy ids ignoring EOS, and their distinct values in order of first appearance."""
    free = ids_of(generate(model, prompt, n_new, temperature=0, stop_at_eos=False))
    return free, list(dict.fromkeys(free))


# llama_untied's logits equal transformers'; its reference prompt's greedy answer (20 tokens)
# has 8 distinct ids, none of them its config.json EOS (2).
PROMPT = [66, 97, 14, 60, 17, 34]


def test_generate_stops_at_the_eos_ids_of_config_json(tmp_path):
    """config.json names two of the ids greedy decoding produces (a list, as HF allows):
    generation ends before the first of them, which is not yielded."""
    free, distinct = greedy_without_eos(GPT.from_pretrained(FIXTURES / "llama_untied"), PROMPT, 20)
    eos = [distinct[5], distinct[3]]
    model = with_eos(FIXTURES / "llama_untied", tmp_path / "m", eos)
    first = free.index(distinct[3])
    assert model.config.eos_ids == tuple(eos) and 0 < first < 19
    assert ids_of(generate(model, PROMPT, 20, temperature=0)) == free[:first]
    assert ids_of(generate(model, PROMPT, 20, temperature=0, stop_at_eos=False)) == free
    assert generate_batch(model, [PROMPT], 20, temperature=0) == [free[:first]]
    assert generate_batch(model, [PROMPT], 20, temperature=0, stop_at_eos=False) == [free]
    (best,) = beam_search(model, PROMPT, beam_size=1, max_new_tokens=20)
    assert best.ids == free[:first + 1]                     # beams keep their EOS, as HF's do
    (best,) = beam_search(model, PROMPT, beam_size=1, max_new_tokens=20, stop_at_eos=False)
    assert best.ids == free
    assert serve(model, [PROMPT], 20, temperature=0) == [free[:first]]      # continuous batching
    assert serve(model, [PROMPT], 20, temperature=0, stop_at_eos=False) == [free]
    assert ids_of(generate(model, PROMPT, 20, temperature=0, draft="prompt")) == free[:first]


def test_generation_config_json_eos_ids_win_as_in_transformers(tmp_path):
    free, distinct = greedy_without_eos(GPT.from_pretrained(FIXTURES / "llama_untied"), PROMPT, 20)
    model = with_eos(FIXTURES / "llama_untied", tmp_path / "m", distinct[1],
                     generation_eos=[distinct[4], 2])
    assert model.config.eos_ids == (distinct[4], 2)         # config.json's id is not used
    assert ids_of(generate(model, PROMPT, 20, temperature=0)) == free[:free.index(distinct[4])]


def test_stop_ids_add_to_the_eos_ids():
    free, distinct = greedy_without_eos(random_model(ModelConfig(**TINY), 3), [1, 2], 12)
    eos, extra = distinct[2], distinct[4]                   # eos comes first in ``free``
    model = random_model(ModelConfig(**TINY, eos_ids=(eos,)), 3)         # the same weights
    assert ids_of(generate(model, [1, 2], 12, temperature=0)) == free[:free.index(eos)]
    assert ids_of(generate(model, [1, 2], 12, temperature=0, stop_ids=[extra])) == free[:free.index(eos)]
    got = ids_of(generate(model, [1, 2], 12, temperature=0, stop_ids=[extra], stop_at_eos=False))
    assert got == free[:free.index(extra)]


@pytest.mark.parametrize("run", [
    lambda m: generate(m, [1], 2, stop_at_eos=None),
    lambda m: generate_batch(m, [[1]], 2, stop_at_eos=1),
    lambda m: beam_search(m, [1], 2, 2, stop_at_eos="no"),
])
def test_stop_at_eos_is_a_bool(run):
    with pytest.raises(TypeError, match="stop_at_eos must be True or False"):
        run(random_model(ModelConfig(**TINY), 0))
