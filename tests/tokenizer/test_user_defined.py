"""User-defined tokens (special.py) are always split out: disallowed_special never refuses them."""
import pytest

from minillm.tokenizer import Tokenizer


@pytest.mark.parametrize("disallowed", ["all", {"<u>"}, ()])
def test_user_defined_tokens_are_split_out_whatever_is_disallowed(disallowed):
    encoder = {bytes([b]): b for b in range(256)}
    tok = Tokenizer(encoder, {}, special_tokens={"<u>": 256, "<s>": 257}, user_defined={"<u>"})
    assert tok.encode("a<u>b", disallowed_special=disallowed) == [97, 256, 98]
    if disallowed == "all":                                     # the other special: refused
        with pytest.raises(ValueError, match="special token '<s>'"):
            tok.encode("a<s>b", disallowed_special=disallowed)
