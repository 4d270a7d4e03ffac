"""Special tokens with tiktoken's semantics (the guard against special-token injection)."""
import pytest

from minillm.tokenizer import Tokenizer
from tests.tokenizer.helpers import named

EOT = 50256


def test_special_token_in_text_raises_by_default():
    with pytest.raises(ValueError, match="special token '<\\|endoftext\\|>'"):
        named("gpt2").encode("hello <|endoftext|>")


def test_allowed_special_encodes_the_token():
    tok = named("cl100k")
    assert tok.encode("a<|endoftext|>", allowed_special={"<|endoftext|>"})[-1] == 100257
    # a special that is allowed is not checked; others still are
    with pytest.raises(ValueError):
        tok.encode("<|endoftext|><|fim_prefix|>", allowed_special={"<|endoftext|>"})


def test_disallowed_empty_encodes_specials_as_ordinary_text():
    tok = named("gpt2")
    ids = tok.encode("<|endoftext|>", disallowed_special=())
    assert EOT not in ids and tok.decode(ids) == "<|endoftext|>"
    assert ids == tok.encode_ordinary("<|endoftext|>")


def test_adjacent_specials():
    assert named("gpt2").encode("<|endoftext|><|endoftext|>", allowed_special="all") == [EOT, EOT]


def test_overlapping_specials_longest_match_wins():
    base = Tokenizer.train("abc", 259, special_tokens=["<|a|>", "<|a|>b|>", "|>"])
    ids = base.encode("<|a|>b|>|>", allowed_special="all")
    assert ids == [base.special_tokens["<|a|>b|>"], base.special_tokens["|>"]]
    ids = base.encode("<|a|>x", allowed_special="all")
    assert ids[0] == base.special_tokens["<|a|>"] and base.decode(ids) == "<|a|>x"


def test_unknown_allowed_special_is_an_error():
    with pytest.raises(ValueError, match="not special tokens"):
        named("gpt2").encode("x", allowed_special={"<|im_start|>"})


@pytest.mark.parametrize("kwargs", [{"allowed_special": "some"}, {"disallowed_special": "none"},
                                    {"allowed_special": 3}])
def test_bad_special_arguments_are_type_errors(kwargs):
    with pytest.raises(TypeError):
        named("gpt2").encode("x", **kwargs)


def test_chatml_with_smollm2_style_specials():
    tok = Tokenizer.train("hello there", 260, special_tokens=["<|im_start|>", "<|im_end|>"])
    text = "<|im_start|>user\nhello<|im_end|>\n"
    ids = tok.encode(text, allowed_special="all")
    assert ids[0] == tok.special_tokens["<|im_start|>"] and tok.decode(ids) == text
