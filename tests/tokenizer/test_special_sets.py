"""The allowed / disallowed sets that `encode`'s special-token arguments resolve to (special.py)."""
from hypothesis import given, strategies as st

from minillm.tokenizer.special import SpecialTokens

TOKENS = {"<|a|>": 10, "<|b|>": 11, "<|c|>": 12}
USER_DEFINED = {"<u>"}


@given(st.sets(st.sampled_from(sorted(TOKENS))))
def test_disallowed_all_is_every_special_token_that_is_not_allowed(allowed_special):
    """`disallowed_special="all"` disallows exactly the special tokens outside `allowed_special`;
    the allowed set is `allowed_special` plus the user-defined tokens (always split out)."""
    specials = SpecialTokens(TOKENS, USER_DEFINED)
    allowed, disallowed = specials.resolve(allowed_special, "all")
    assert disallowed == frozenset(TOKENS) - allowed_special
    assert allowed == frozenset(allowed_special) | USER_DEFINED
    allowed, disallowed = specials.resolve("all", "all")
    assert disallowed == frozenset() and allowed == frozenset(TOKENS) | USER_DEFINED
