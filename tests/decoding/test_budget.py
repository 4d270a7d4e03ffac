"""Context budget and cost arithmetic (minillm/decoding/budget.py), starting from the explainer articles' example."""
import pytest

from minillm.decoding.budget import Budget, context_budget, count_tokens, estimate_cost


class CharTokenizer:
    """A stand-in tokenizer: one token per character (anything with encode_ordinary works)."""
    def encode_ordinary(self, text: str) -> list[int]:
        return [ord(c) for c in text]


def test_article_example_32k_window_with_24k_used_leaves_8k():
    parts = {"system": 1024, "history": 16384, "tools": 2048, "retrieved": 4096, "input": 1024}
    b = context_budget(32 * 1024, parts)
    assert (b.used, b.left, b.not_fitting, b.fits) == (24 * 1024, 8 * 1024, (), True)
    assert context_budget(32_000, {"all": 24_000}).left == 8_000


def test_parts_that_do_not_fit_are_named_and_smaller_later_parts_still_fit():
    parts = {"system": 2000, "tools": 40_000, "history": 22_000, "retrieved": 9000, "input": 500}
    b = context_budget(32_000, parts, reserve_output=1000)
    # room 31 000: system 2000 (29 000 left), tools no, history 22 000 (7000 left), retrieved no,
    # input 500 (6500 left)
    assert b.not_fitting == ("tools", "retrieved") and not b.fits
    assert b.left == 32_000 - 73_500
    assert b.left_after_dropping == 32_000 - 24_500


def test_strings_and_id_lists_are_counted():
    tok = CharTokenizer()
    b = context_budget(100, {"system": "be brief", "history": [5, 6, 7], "input": 10}, tok)
    assert b.counts == {"system": 8, "history": 3, "input": 10} and b.left == 79
    assert count_tokens("海水会吸收", tok) == 5


def test_cost_from_per_million_prices():
    assert estimate_cost(2_000_000, 500_000, 0.5, 1.5) == pytest.approx(1.75)
    assert estimate_cost(24_576, 1000, 2.0, 8.0) == pytest.approx(0.049152 + 0.008)
    assert estimate_cost("abcd", [1, 2], 1e6, 2e6, tokenizer=CharTokenizer()) \
        == pytest.approx(4 + 4)
    assert estimate_cost(0, 0, 3.0, 4.0) == 0.0


@pytest.mark.parametrize("call, error", [
    (lambda: context_budget(0, {}), ValueError),
    (lambda: context_budget(100, {"a": -1}), ValueError),
    (lambda: context_budget(100, {"a": True}), TypeError),
    (lambda: context_budget(100, {"a": "text"}), TypeError),           # a str needs a tokenizer
    (lambda: context_budget(100, {"a": 1.5}), TypeError),
    (lambda: context_budget(100, {"a": 1}, reserve_output=101), ValueError),
    (lambda: estimate_cost(10, 10, -1.0, 1.0), ValueError),
    (lambda: estimate_cost(10, 10, 1.0, float("nan")), ValueError),
])
def test_bad_budget_arguments_raise(call, error):
    with pytest.raises(error):
        call()


def test_budget_is_a_plain_record():
    b = Budget(window=10, counts={"a": 4}, reserve_output=0, not_fitting=())
    assert (b.used, b.left) == (4, 6)
