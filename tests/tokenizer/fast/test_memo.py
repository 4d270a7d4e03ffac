"""The self-filling cache behind fast encoding (fast/memo.py)."""
from hypothesis import given, strategies as st

from minillm.tokenizer.fast.memo import Memo
from tests.tokenizer.helpers import named


def test_memo_computes_each_key_once():
    calls = []
    memo = Memo(lambda x: calls.append(x) or x * x, size=10)
    assert list(map(memo.__getitem__, [3, 4, 3, 3])) == [9, 16, 9, 9]
    assert calls == [3, 4]


def test_memo_is_emptied_wholesale_when_full():
    memo = Memo(str, size=3)
    for k in range(3):
        memo[k]
    assert len(memo) == 3
    assert memo[7] == "7" and dict(memo) == {7: "7"}


@given(st.text(alphabet="ab 海水会吸收较多红光", max_size=60))
def test_encode_with_tiny_caches_equals_encode_with_big_ones(text):
    """Regression guard: caches emptied in the middle of a C-level map must not lose ids."""
    tok = named("gpt2")
    expected = tok.encode(text)
    sizes = tok.fast_encoder.piece_ids.size, tok.fast_encoder.segment_ids.size
    tok.fast_encoder.piece_ids.size = tok.fast_encoder.segment_ids.size = 2
    try:
        tok.fast_encoder.clear()
        assert tok.encode(text) == expected
    finally:
        tok.fast_encoder.piece_ids.size, tok.fast_encoder.segment_ids.size = sizes
