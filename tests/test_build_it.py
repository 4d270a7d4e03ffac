"""Notebook 13's hook and grader (notebooks/build_it.py): the solutions, assembled through
``YourGPT``, generate exactly the library's greedy tokens; a deliberately broken part is named by
the grader as the first part that differs, with its layer and input."""
import importlib.util
import sys

import numpy as np
import pytest

import minillm
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "notebooks"))
from build_it import (YourGPT, check_model, encode_with, first_difference, generate_with,  # noqa: E402
                      library_tokens)

PROMPT = "ROMEO.\nBut soft, what light"


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SOLUTIONS = load(REPO / "notebooks" / "solutions" / "13_build_it.py")


@pytest.fixture(scope="module")
def shakespeare():
    return minillm.load_model(REPO / "weights" / "shakespeare", fast=False)


def test_the_solutions_generate_exactly_the_library_tokens(shakespeare, capsys):
    model, tok = shakespeare
    ids = tok.encode(PROMPT)
    assert generate_with(YourGPT(model, SOLUTIONS.PARTS), ids, 20) == library_tokens(model, ids, 20)
    fast, _ = minillm.load_model(REPO / "weights" / "shakespeare")      # the engine's tokens too
    assert library_tokens(fast, ids, 20) == library_tokens(model, ids, 20)
    assert check_model(SOLUTIONS.PARTS, model, tok, PROMPT, 20)
    assert capsys.readouterr().out.startswith("✓ your parts generated the library's 20 tokens exactly")
    assert first_difference(SOLUTIONS.PARTS, model, ids + library_tokens(model, ids, 5)) is None


def attention_without_mask(q, k, v, mask):
    return SOLUTIONS.attention(q, k, v, np.ones_like(mask))


def layer_norm_dividing_by_c_minus_1(x, p, kind, eps):
    var = x.var(-1, keepdims=True, ddof=1)
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(var + eps) * p.weight + p.bias


def block_without_the_first_residual(x, attn, norm1, ffn, norm2):
    x = attn(norm1(x))
    return x + ffn(norm2(x))


def kv_append_forgetting_the_cache(K, V, k_new, v_new):
    return k_new, v_new


def sample_taking_the_least_likely(logits):
    return int(np.argmin(logits))


@pytest.mark.parametrize("name, broken, says", [
    ("attention", attention_without_mask, "your attention differs from the library's at layer 0"),
    ("norm", layer_norm_dividing_by_c_minus_1, "your norm differs from the library's at layer 0"),
    ("block", block_without_the_first_residual, "your block differs from the library's at layer 0"),
    ("kv_append", kv_append_forgetting_the_cache, "your kv_append returned shape [1, 4, 1, 32], "
                                                  "the library's [1, 4, 32, 32] at layer 0"),
    ("sample", sample_taking_the_least_likely, "your sample chose"),
], ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_the_grader_names_the_first_broken_part(shakespeare, capsys, name, broken, says):
    model, tok = shakespeare
    assert not check_model({**SOLUTIONS.PARTS, name: broken}, model, tok, PROMPT, 20)
    message = capsys.readouterr().out
    assert message.startswith("✗") and says in message, message
    assert "for input" in message or name == "sample", message


def test_a_stub_is_replaced_by_the_library_part_and_listed(shakespeare, capsys):
    model, tok = shakespeare

    def stub(*args):
        raise NotImplementedError

    assert check_model({**SOLUTIONS.PARTS, "ffn": stub}, model, tok, PROMPT, 5)
    assert "(not written yet, the library's used: ffn)" in capsys.readouterr().out
    with pytest.raises(ValueError, match="unknown parts \\['mlp'\\]"):
        YourGPT(model, {"mlp": stub})


def test_the_bpe_solution_learns_the_library_trainers_merges():
    from minillm.tokenizer.patterns import PreTokenizer
    text = "the cat sat on the mat; the hat sat on the cat. " * 3
    words = [list(p.encode("utf-8")) for p in PreTokenizer(None).split(text)]
    library = minillm.Tokenizer.train(text, 256 + 12)
    table = [bytes([b]) for b in range(256)]
    for a, b in SOLUTIONS.train_bpe(words, 12):
        table.append(table[a] + table[b])
    assert table[256:] == [a + b for a, b in sorted(library.merges, key=library.merges.get)]
    assert SOLUTIONS.merge([1, 2, 1, 2, 3], (1, 2), 256) == [256, 256, 3]


PROMPTS = [PROMPT, "Hark---who goes there?\n\n\nAye, a good-good man:  llll ffff  ",
           "café, naïve Zoë — 红光 ✓ ünïcödé", "    Thou    art\tmore    lovely"]


@pytest.mark.parametrize("text", PROMPTS)
def test_the_solutions_merge_encodes_prompts_as_the_tokenizer(shakespeare, text):
    _, tok = shakespeare
    assert encode_with(SOLUTIONS.merge, tok, text) == tok.encode(text)


def merge_from_the_right(ids, pair, new_id):
    """Replaces every occurrence scanning right to left: [a, a, a] -> [a, aa], not [aa, a]."""
    return SOLUTIONS.merge(ids[::-1], pair[::-1], new_id)[::-1]


def merge_dropping_the_last_id(ids, pair, new_id):
    return SOLUTIONS.merge(ids[:-1], pair, new_id)


@pytest.mark.parametrize("broken", [merge_from_the_right, merge_dropping_the_last_id],
                         ids=lambda f: f.__name__)
def test_a_broken_merge_is_named_before_the_model_parts(shakespeare, capsys, broken):
    model, tok = shakespeare
    text = PROMPTS[1]
    assert encode_with(broken, tok, text) != tok.encode(text)
    parts = {**SOLUTIONS.PARTS, "merge": broken, "norm": layer_norm_dividing_by_c_minus_1}
    assert not check_model(parts, model, tok, text, 5)
    message = capsys.readouterr().out
    assert message.startswith("✗ your merge step encodes the prompt as ["), message
    assert "where the library has [" in message and "norm" not in message, message


def test_a_merge_stub_falls_back_to_the_library_encoding_and_is_listed(shakespeare, capsys):
    model, tok = shakespeare

    def stub(ids, pair, new_id):
        raise NotImplementedError

    assert check_model({**SOLUTIONS.PARTS, "merge": stub}, model, tok, PROMPT, 5)
    assert "(not written yet, the library's used: merge)" in capsys.readouterr().out
