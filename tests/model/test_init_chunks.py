"""init_params draws in chunks of rows (~1 MB of float32 at a time), at least one row a chunk."""
import numpy as np

from minillm.config import ModelConfig
from minillm.model.init import init_params

CHUNK = 1 << 18                      # float32 values in one chunk of draws


def test_a_matrix_wider_than_one_draw_chunk_is_drawn_one_row_at_a_time_as_one_whole_call():
    """lm_head [C, V] with V > 2**18: one row is already more than a chunk, so each chunk is one
    row, and the values are still what one ``standard_normal`` call for the whole matrix gives
    after the draws before it (per block wq, wk, wv, wo, w_up, w_down, then wte, wpe, lm_head)."""
    config = ModelConfig(vocab_size=CHUNK + 3, n_ctx=4, d_model=2, n_heads=1, n_layers=1,
                         d_ff=2, tie_embeddings=False)
    params = init_params(config, np.random.default_rng(7))
    assert params.lm_head.shape == (2, CHUNK + 3)
    rng, resid = np.random.default_rng(7), 0.02 / np.sqrt(2 * config.n_layers)
    b = params.blocks[0]
    order = [(b.attn.wq, 0.02), (b.attn.wk, 0.02), (b.attn.wv, 0.02), (b.attn.wo, resid),
             (b.ffn.w_up, 0.02), (b.ffn.w_down, resid), (params.wte, 0.02), (params.wpe, 0.01),
             (params.lm_head, 0.02)]
    for w, std in order:
        np.testing.assert_array_equal(w, rng.standard_normal(w.shape, dtype=np.float32)
                                      * np.float32(std))
