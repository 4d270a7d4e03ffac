"""init_params draws every matrix in a fixed order, in chunks of rows (~1 MB of float32 at a time,
at least one row a chunk), and each matrix gets what one ``standard_normal`` call for the whole
matrix gives: per block wq, wk, wv, wo, w_up, w_down, w_gate, router, then wte, wpe, lm_head."""
import numpy as np

from minillm.config import ModelConfig
from minillm.model.init import init_params

CHUNK = 1 << 18                      # float32 values in one chunk of draws


def assert_drawn_in_the_documented_order(params, config, seed):
    """Replay the draws with whole-matrix calls (an expert stack [E, …] is one call too: its
    experts are drawn one after the other in row order) and compare every matrix exactly."""
    rng, resid = np.random.default_rng(seed), 0.02 / np.sqrt(2 * config.n_layers)
    order = []
    for b in params.blocks:
        order += [(b.attn.wq, 0.02), (b.attn.wk, 0.02), (b.attn.wv, 0.02), (b.attn.wo, resid),
                  (b.ffn.w_up, 0.02), (b.ffn.w_down, resid), (b.ffn.w_gate, 0.02),
                  (b.ffn.router, 0.02)]
    order += [(params.wte, 0.02), (params.wpe, 0.01), (params.lm_head, 0.02)]
    for w, std in order:
        if w is not None:
            want = rng.standard_normal(w.shape, dtype=np.float32) * np.float32(std)
            np.testing.assert_array_equal(w, want)


def test_a_matrix_wider_than_one_draw_chunk_is_drawn_one_row_at_a_time_as_one_whole_call():
    """lm_head [C, V] with V > 2**18: one row is already more than a chunk, so each chunk is one
    row, and the values are still those of one whole-matrix call after the draws before it."""
    config = ModelConfig(vocab_size=CHUNK + 3, n_ctx=4, d_model=2, n_heads=1, n_layers=1,
                         d_ff=2, tie_embeddings=False)
    params = init_params(config, np.random.default_rng(7))
    assert params.lm_head.shape == (2, CHUNK + 3)
    assert_drawn_in_the_documented_order(params, config, 7)


def test_a_mixtures_experts_and_router_are_drawn_in_the_documented_order():
    """A mixture of experts: w_up, w_down, w_gate [E, …] and the router [C, E] of every block are
    drawn too (N(0, 0.02²), w_down N(0, (0.02/√(2L))²)), nothing is left as it was allocated."""
    config = ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_heads=2, n_layers=2, d_ff=4,
                         arch="llama", n_experts=3, n_experts_used=2, tie_embeddings=False)
    params = init_params(config, np.random.default_rng(5))
    assert params.blocks[1].ffn.router.shape == (8, 3) and params.blocks[1].ffn.w_up.ndim == 3
    assert_drawn_in_the_documented_order(params, config, 5)
