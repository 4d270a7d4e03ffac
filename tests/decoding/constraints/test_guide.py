"""What generation asks of a guide (guide.py): advance along allowed tokens only, the state
after a text is where its bytes lead, finished when nothing can extend an accepted text; the
vocabulary's bytes (index.py's token_bytes_of) are each token's real bytes."""
import numpy as np
import pytest
import regex
from hypothesis import assume, given
from hypothesis import strategies as st

import minillm
from minillm.decoding.constraints import Guide, Regex, token_bytes_of
from minillm.tokenizer.spm import SentencePieceBPE
from tests.decoding.constraints.strategies import CHARS, patterns

VOCAB = [b"1", b"23", b"a", b"4567", b""]          # id 4 stands for the end of text


def test_a_walk_of_allowed_tokens_ends_where_the_text_is():
    g = Guide.build("[0-9]{1,3}", VOCAB, [4])
    assert np.flatnonzero(g.allowed(g.start)).tolist() == [0, 1]   # "4567" is too long, "a" not a digit
    s = g.advance(g.start, 1)                                      # "23"
    assert g.is_accepting(s) and not g.is_finished(s)
    assert np.flatnonzero(g.allowed(s)).tolist() == [0, 4]         # one more digit, or the end
    s = g.advance(s, 0)                                            # "231"
    assert g.is_finished(s) and np.flatnonzero(g.allowed(s)).tolist() == [4]
    assert g.advance(s, 4) == s                                    # the end appends nothing


def test_a_token_that_is_not_allowed_is_a_clear_value_error():
    g = Guide.build("[0-9]{1,3}", VOCAB, [4])
    with pytest.raises(ValueError, match="not allowed"):
        g.advance(g.start, 2)
    with pytest.raises(ValueError, match="not allowed"):
        g.advance(g.start, 4)                                      # the end before any digit
    with pytest.raises(ValueError, match="not a state"):
        g.allowed(99)
    with pytest.raises(TypeError, match="must be an int"):
        g.advance(g.start, "1")


def test_the_mask_is_read_only():
    g = Guide.build("[0-9]{1,3}", VOCAB, [4])
    with pytest.raises(ValueError):
        g.allowed(g.start)[2] = True


def test_a_guide_is_built_once_per_vocabulary_and_pattern():
    assert Guide.build("a|1", VOCAB, [4]) is Guide.build("a|1", list(VOCAB), [4])
    assert Guide.build("a|1", VOCAB, [4]) is not Guide.build("a|1", VOCAB, [])
    assert Guide.build("a|1", VOCAB, [4]) is not Guide.build("a|1", VOCAB[:4] + [b"9"], [4])


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="matches no text"):
        Guide.build("[^\\x00-\\U0010FFFF]", VOCAB, [4])
    with pytest.raises(ValueError, match="eos_ids"):
        Guide.build("a", VOCAB, [5])
    with pytest.raises(TypeError, match="list of bytes"):
        Guide.build("a", ["a"], [])
    with pytest.raises(ValueError, match="not supported"):
        Guide.build("a(?=b)", VOCAB, [4])


def test_special_tokens_have_no_bytes_and_are_never_allowed():
    tok = minillm.Tokenizer.load("gpt2")
    token_bytes = token_bytes_of(tok)
    assert token_bytes[tok.eos_id] == b"" and token_bytes[995] == b" world"
    g = Regex(".*").guide(tok, eos_ids=[])
    assert not g.allowed(g.start)[tok.eos_id]


def test_sentencepiece_spaces_and_byte_tokens_map_to_their_real_bytes():
    pieces = {"<unk>": 0, "<s>": 1, "<0xE4>": 2, "<0xB8>": 3, "<0xAD>": 4, "▁a": 5, "b": 6, "▁": 7}
    kinds = {0: "special", 1: "special", 2: "byte", 3: "byte", 4: "byte", 5: "text", 6: "text",
             7: "text"}
    tok = SentencePieceBPE(pieces, scores={5: 1.0}, byte_ids={0xE4: 2, 0xB8: 3, 0xAD: 4},
                           kinds=kinds, special_tokens={"<unk>": 0, "<s>": 1}, unk_id=0, bos_id=1)
    assert token_bytes_of(tok) == [b"", b"", b"\xe4", b"\xb8", b"\xad", b" a", b"b", b" "]
    g = Regex(" ab中").guide(tok)
    s = g.start
    for token_id in (5, 6, 2, 3, 4):                  # "▁a" "b" then 中 as three byte tokens
        assert g.allowed(s)[token_id]
        s = g.advance(s, token_id)
    assert g.is_finished(s)


@given(patterns(), st.integers(0, 2**32 - 1))
def test_random_walks_of_allowed_tokens_spell_prefixes_of_matches(pattern, seed):
    """Drawing only allowed tokens (as generation will), the text so far is always a prefix of
    some match (Python `regex`'s partial full match), and whole when the guide accepts."""
    vocabulary = [c.encode() for c in CHARS] + [b"ab", b"\xe4\xb8", b"\xad", b"1 ", b""]
    try:
        g = Guide.build(pattern, vocabulary, [len(vocabulary) - 1])
    except ValueError:
        assume(False)
    rng, state, text = np.random.default_rng(seed), g.start, b""
    for _ in range(12):
        allowed = np.flatnonzero(g.allowed(state))
        if len(allowed) == 0:
            break
        token_id = int(rng.choice(allowed))
        if token_id == len(vocabulary) - 1:                        # the end of text
            break
        state, text = g.advance(state, token_id), text + vocabulary[token_id]
        try:
            decoded = text.decode("utf-8")
        except UnicodeDecodeError:
            continue                                               # mid-character: next token
        assert regex.fullmatch(pattern, decoded, partial=True, flags=regex.ASCII), (pattern, text)
        assert g.is_accepting(state) == bool(regex.fullmatch(pattern, decoded, flags=regex.ASCII))
