"""GPT.num_parameters counts every number the model holds: for GPT-2 (tied head, d_ff = 4C)
the textbook V·C + n_ctx·C + L·(12C² + 13C) + 2C (124,439,808 for GPT-2 small)."""
import math

from hypothesis import given, strategies as st

from minillm import GPT
from minillm.config import ModelConfig
from minillm.model.params import param_shapes


@given(vocab=st.integers(2, 30), n_ctx=st.integers(1, 12), heads=st.integers(1, 3),
       d_head=st.integers(1, 3), layers=st.integers(1, 3))
def test_a_gpt2_has_the_textbook_number_of_parameters(vocab, n_ctx, heads, d_head, layers):
    C = heads * d_head
    config = ModelConfig(vocab_size=vocab, n_ctx=n_ctx, d_model=C, n_heads=heads, n_layers=layers)
    want = vocab * C + n_ctx * C + layers * (12 * C * C + 13 * C) + 2 * C
    assert GPT(config).num_parameters() == want
    assert want == sum(math.prod(s) for s in param_shapes(config).values())

