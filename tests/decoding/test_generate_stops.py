"""A stop string ends generation at the step that completes it: no later Step is made."""
import pytest

from minillm.decoding.generate import generate
from tests.decoding.test_generate import Scripted


@pytest.fixture(scope="module")
def gpt2_tok():
    from minillm.tokenizer.tokenizer import Tokenizer
    return Tokenizer.load("gpt2")


@pytest.mark.parametrize("text, stop", [("Hello User: bye and more", "User:"),
                                        ("abc abc abc abc", "c a")])
def test_generation_ends_at_the_token_that_completes_a_stop_string(gpt2_tok, text, stop):
    prompt, target = gpt2_tok.encode("Q:"), gpt2_tok.encode(text)
    k = next(n for n in range(1, len(target) + 1) if stop in gpt2_tok.decode(target[:n]))
    model = Scripted(prompt + target, gpt2_tok.vocab_size)
    steps = list(generate(model, prompt, len(target), temperature=0, tokenizer=gpt2_tok,
                          stop_strings=[stop]))
    assert [s.id for s in steps] == target[:k] and k < len(target)
    assert "".join(s.text for s in steps) == text[:text.find(stop)]
