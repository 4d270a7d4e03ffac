"""How long a sequence ``GPT.loss`` takes: n_ctx inputs plus the last one's target, no more;
a longer one is refused before any forward pass, the message naming the length it was given."""
import numpy as np
import pytest
from hypothesis import example, given, strategies as st

from minillm import GPT
from minillm.config import ModelConfig


@given(n_ctx=st.integers(2, 8), extra=st.integers(1, 3), batch=st.integers(1, 2))
@example(n_ctx=8, extra=1, batch=1)                  # one token too many: the boundary
def test_loss_refuses_more_than_n_ctx_plus_one_tokens_naming_their_number(n_ctx, extra, batch):
    model = GPT(ModelConfig(vocab_size=16, n_ctx=n_ctx, d_model=8, n_heads=2, n_layers=1))
    longest = np.arange(batch * (n_ctx + 1)).reshape(batch, -1) % 16
    assert np.isfinite(model.loss(longest))
    T = n_ctx + 1 + extra
    message = rf"^{T} positions exceed the context window n_ctx={n_ctx}"
    with pytest.raises(ValueError, match=message):
        model.loss(np.arange(batch * T).reshape(batch, T) % 16)
