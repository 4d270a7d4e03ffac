"""Training: the fast trainer learns exactly the naive trainer's merges."""
import pytest
from hypothesis import given, strategies as st

from minillm.tokenizer import Tokenizer
from minillm.tokenizer.train import train_fast, train_naive, word_counts
from minillm.tokenizer.patterns import PreTokenizer


def test_textbook_aaabdaaabac():
    """Wikipedia's example: aa -> Z, ab -> Y, ZY -> X; "aaabdaaabac" -> "XdXac"."""
    tok = Tokenizer.train("aaabdaaabac", 256 + 3, pattern=r"\w+", trainer="naive")
    assert [tok.token_bytes(i) for i in (256, 257, 258)] == [b"aa", b"ab", b"aaab"]
    assert tok.encode("aaabdaaabac") == [258, ord("d"), 258, ord("a"), ord("c")]
    assert Tokenizer.train("aaabdaaabac", 259, pattern=r"\w+").encode("aaabdaaabac") \
        == tok.encode("aaabdaaabac")



@pytest.mark.parametrize("pattern, message", [
    ("(a|aa)+$", "catastrophic backtracking"), ("\\w*", "matches the empty string")])
def test_train_refuses_a_pattern_the_loader_would_refuse_or_that_matches_nothing(pattern,
                                                                                 message):
    """Tokenizer.train used to accept "(a|aa)+$" and save a tokenizer Tokenizer.load refused
    (only the CLI's --pattern was checked)."""
    with pytest.raises(ValueError, match=rf"Tokenizer.train: pattern .*{message}") as caught:
        Tokenizer.train("hello world aaa " * 20, 270, pattern=pattern)
    assert repr(pattern) in str(caught.value)


corpora = st.text(alphabet="ab c\n海水", max_size=120)


@given(corpora, st.integers(0, 60), st.sampled_from(["gpt2", r"\w+|\W"]))
def test_fast_trainer_merges_equal_naive_trainer_merges(text, n_merges, pattern):
    words = word_counts(PreTokenizer(pattern).split(text))
    assert train_fast(words, n_merges) == train_naive(words, n_merges)


@given(corpora, st.text(max_size=60))
def test_trained_tokenizer_round_trips_and_survives_save_load(tmp_path_factory, corpus, text):
    tok = Tokenizer.train(corpus, 300, special_tokens=["<|endoftext|>"])
    assert tok.decode(tok.encode(text, disallowed_special=())) == text
    path = tmp_path_factory.mktemp("tok") / "tok.json"
    tok.save(path)
    again = Tokenizer.load(path)
    assert again.encode(text, disallowed_special=()) == tok.encode(text, disallowed_special=())
    assert again.special_tokens == tok.special_tokens


def test_training_is_reproducible():
    text = "the cat sat on the mat with the other cat " * 5
    a = Tokenizer.train(text, 290)
    b = Tokenizer.train(text, 290)
    assert a.merges == b.merges and a.encode(text) == b.encode(text)


def test_special_tokens_get_ids_after_the_merges_and_are_not_learned_from():
    tok = Tokenizer.train("xyxy<|eot|>xyxy<|eot|>", 258, special_tokens=["<|eot|>"])
    assert tok.special_tokens == {"<|eot|>": 257} and tok.token_bytes(256) == b"xy"


def test_training_stops_when_nothing_is_left_to_merge():
    tok = Tokenizer.train("ab", 1000)
    assert tok.vocab_size == 257


@pytest.mark.parametrize("vocab_size", [255, 0, 256.0, "300"])
def test_bad_vocab_size(vocab_size):
    with pytest.raises(ValueError, match="vocab_size"):
        Tokenizer.train("abc", vocab_size)


def test_bad_trainer_and_text():
    with pytest.raises(ValueError, match="trainer"):
        Tokenizer.train("abc", 300, trainer="slow")
    with pytest.raises(TypeError):
        Tokenizer.train(b"abc", 300)
