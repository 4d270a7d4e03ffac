"""Beam search's rules at their edges: how many answers it may return, and HF's stopping estimate
for early_stopping="never" with a negative length penalty, on a scripted model."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.decoding.beam import beam_search
from minillm.decoding.generate import generate
from minillm.functional import log_softmax
from tests.model.strategies import random_model


def test_the_default_four_beams_return_up_to_four_answers_and_never_zero():
    """num_return_sequences is in [1, beam_size]: 1 … 4 with the default 4 beams."""
    model = random_model(ModelConfig(vocab_size=12, n_ctx=16, d_model=8, n_heads=2, n_layers=1), 4)
    four = beam_search(model, [1, 2], max_new_tokens=3, num_return_sequences=4)
    assert four == beam_search(model, [1, 2], beam_size=4, max_new_tokens=3, num_return_sequences=4)
    assert len(four) == 4
    for bad in (5, 0):
        with pytest.raises(ValueError, match=r"num_return_sequences must be in \[1, beam_size=4\]"):
            beam_search(model, [1, 2], max_new_tokens=3, num_return_sequences=bad)
    with pytest.raises(ValueError, match="num_return_sequences"):
        beam_search(model, [1, 2], beam_size=2, max_new_tokens=3, num_return_sequences=0)


class Scripted:
    """Looks like a GPT to beam_search: the next-token probabilities depend on the step (how many
    new tokens so far) and the last token, from ``table``; uniform where it says nothing."""

    def __init__(self, table, prompt_len, vocab_size=4):
        self.table, self.P = table, prompt_len
        self.config = ModelConfig(vocab_size=vocab_size, n_ctx=16, d_model=2, n_heads=1, n_layers=1)

    def __call__(self, ids, cache=None, last_only=False, **_):
        cache.advance(ids.shape[1])
        step, V = cache.length - self.P, self.config.vocab_size
        logits = np.full((ids.shape[0], 1, V), np.log(1 / V), dtype=np.float32)    # [B, 1, V]
        for b, last in enumerate(ids[:, -1]):
            if (step, int(last)) in self.table:
                logits[b, 0] = np.log(np.array(self.table[step, int(last)], np.float64))
        return logits


@pytest.mark.parametrize("penalty", [-1.0, -0.97])
def test_never_with_a_negative_length_penalty_estimates_at_the_current_length(penalty):
    """length_penalty -1 (score = Σ log p · length). After step 2 the pool holds "0" (-1.2) and
    "2 0" (-2.51 · 2); the running "1 1" (Σ -0.55) estimated at the current length, -0.55 · 2,
    may still win, so the search goes on, and "1 1 0" (-0.75 · 3) replaces "2 0". (Estimated at
    max_new_tokens, -0.55 · 10, it would stop: that is HF's "never" only for length_penalty > 0.)
    The same with -0.97 (any penalty in (-1, 0) too: -0.55 · 10 ** 0.97 < -2.51 · 2 ** 0.97)."""
    def probs(**logp):                     # the given log-probs, the rest spread over the others
        p = np.array([np.exp(logp.get(f"t{i}", -np.inf)) for i in range(4)])
        p[p == 0] = (1 - p.sum()) / (p == 0).sum()
        return p

    table = {(0, 3): probs(t0=-1.2, t1=-0.5, t2=-2.5), (1, 1): probs(t0=-4.0, t1=-0.05, t2=-3.5),
             (1, 2): probs(t0=-0.01), (2, 1): probs(t0=-0.2)}
    model = Scripted(table, prompt_len=2)
    kw = dict(beam_size=2, max_new_tokens=10, stop_ids=0, length_penalty=penalty, num_return_sequences=2)
    for early_stopping in ("never", "heuristic"):
        got = beam_search(model, [2, 3], early_stopping=early_stopping, **kw)
        assert [h.ids for h in got] == [[0], [1, 1, 0]]
        np.testing.assert_allclose([h.score for h in got], [-1.2, -0.75 * 3 ** -penalty], rtol=1e-5)
    pool_full = beam_search(model, [2, 3], early_stopping="pool_full", **kw)
    assert [h.ids for h in pool_full] == [[0], [2, 0]]              # stops as the pool fills
    np.testing.assert_allclose([h.score for h in pool_full], [-1.2, -2.51 * 2 ** -penalty], rtol=1e-5)


def test_with_several_stop_ids_enough_candidates_are_kept_for_beams_to_run_on():
    """HF keeps the top max(2, 1 + n_stop) · B candidates (``beams_to_keep``): with stop ids
    0 … 3 and B = 2, the best four candidates of step 1 all stop ("0" and "1" enter the pool, "2"
    and "3" rank too low to); the fifth, "4", runs on and "4 0" (-3.01 / 2) beats "1" (-2.0).
    With only 2·B candidates no beam would be left and the answer would be "0", "1"."""
    def probs(**logp):
        p = np.array([np.exp(logp.get(f"t{i}", -np.inf)) for i in range(6)])
        p[p == 0] = (1 - p.sum()) / (p == 0).sum()
        return p

    table = {(0, 3): probs(t0=-0.6, t1=-2.0, t2=-2.05, t3=-2.1, t4=-3.0),
             (1, 4): probs(t0=-0.01), (1, 5): probs(t0=-3.0)}
    model = Scripted(table, prompt_len=2, vocab_size=6)
    got = beam_search(model, [2, 3], beam_size=2, max_new_tokens=10, stop_ids=[0, 1, 2, 3],
                      length_penalty=1.0, early_stopping="never", num_return_sequences=2)
    assert [h.ids for h in got] == [[0], [4, 0]]
    np.testing.assert_allclose([h.score for h in got], [-0.6, -3.01 / 2], rtol=1e-5)


@given(st.integers(1, 3), st.floats(-2.0, -1.6), st.floats(0.5, 2.0))
def test_a_running_beam_that_can_only_tie_the_worst_finished_one_stops_the_search(B, a, penalty):
    """HF's heuristic stops when best_running_sum / L ** length_penalty <= the worst finished
    score: a tie stops too (HF goes on only while the estimate is strictly better). Step 1: stop
    ids 0 … B−1 fill the pool, the last of them (log p = a) exactly tied with token B, which runs
    on (the same float32 logit, so the same log-prob to the bit): the search stops with the pool.
    Had it gone on, "B 0" ((a + log 0.99) / 2 ** length_penalty) would have beaten that worst."""
    V = 12
    p = np.full(V, 0.0)
    p[:B - 1] = np.exp(a) + 0.05                     # stop ids better than the tie
    p[B - 1] = p[B] = np.exp(a)                      # the worst finished, the best running
    p[B + 1:] = (1 - p.sum()) / (V - B - 1)          # the rest: each below the tie
    after = np.full(V, 0.01 / (V - 1))
    after[0] = 0.99
    model = Scripted({(0, 3): p, (1, B): after}, prompt_len=2, vocab_size=V)
    got = beam_search(model, [2, 3], beam_size=B, max_new_tokens=6, stop_ids=range(B),
                      length_penalty=penalty, num_return_sequences=B)
    assert [h.ids for h in got] == [[i] for i in range(B)]
    assert got[-1].logprob == float(log_softmax(np.log(p).astype(np.float32))[B])


def test_when_every_token_is_a_stop_id_the_search_ends_after_one_step():
    """Every candidate finishes at once: no beam runs on, the pool holds the B most likely
    single tokens, and the search ends there."""
    model = Scripted({(0, 3): np.array([0.1, 0.2, 0.3, 0.4])}, prompt_len=2)
    got = beam_search(model, [2, 3], beam_size=2, max_new_tokens=5, stop_ids=[0, 1, 2, 3],
                      num_return_sequences=2)
    assert [h.ids for h in got] == [[3], [2]]
    np.testing.assert_allclose([h.logprob for h in got], np.log([0.4, 0.3]), rtol=1e-6)


def test_pool_full_makes_no_forward_pass_after_the_pool_fills():
    """early_stopping="pool_full" (HF's True) ends the search as soon as B hypotheses are
    finished: here at step 2, so the model runs twice (the prompt, then step 1's beams), though
    the running "1 1" (Σ log p = that of "1 0") could still beat "0" by the heuristic's estimate."""
    table = {(0, 3): [0.3, 0.6, 0.1, 0.0], (1, 1): [0.5, 0.5, 0.0, 0.0], (1, 2): [0.9, 0.1, 0.0, 0.0]}
    calls = []

    class Counted(Scripted):
        def __call__(self, ids, **kw):
            calls.append(ids.shape)
            return super().__call__(ids, **kw)

    model = Counted({k: np.array(v) + 1e-9 for k, v in table.items()}, prompt_len=2)
    got = beam_search(model, [2, 3], beam_size=2, max_new_tokens=8, stop_ids=0,
                      early_stopping="pool_full", num_return_sequences=2)
    assert [h.ids for h in got] == [[1, 0], [0]] and calls == [(1, 2), (2, 1)]


def test_with_every_beam_favouring_stop_ids_the_candidates_beyond_them_run_on():
    """K = 1 + the number of stop ids: with stop ids 0 and 1 and B = 2, the four best candidates
    of step 2 all stop (both beams favour 0, then 1), so only the 5th and 6th can run on — and
    with length_penalty 2 and "never", their long continuations "2 4 … 4 0" win."""
    def probs(**logp):
        p = np.array([np.exp(logp.get(f"t{i}", -np.inf)) for i in range(6)])
        p[p == 0] = (1 - p.sum()) / (p == 0).sum()
        return p

    table = {(0, 3): probs(t2=-0.5, t3=-1.0), (1, 2): probs(t0=-0.3, t1=-2.0, t4=-3.0),
             (1, 3): probs(t0=-0.3, t1=-2.0, t4=-3.0), (7, 4): probs(t0=-0.01)}
    table.update({(step, 4): probs(t4=-0.01) for step in range(2, 7)})
    model = Scripted(table, prompt_len=2, vocab_size=6)
    got = beam_search(model, [2, 3], beam_size=2, max_new_tokens=10, stop_ids=[0, 1],
                      length_penalty=2.0, early_stopping="never", num_return_sequences=2)
    assert [h.ids for h in got] == [[2, 4, 4, 4, 4, 4, 4, 0], [3, 4, 4, 4, 4, 4, 4, 0]]


class OneStepApart:
    """Uniform rows (V = 12) for ``flat_steps`` steps, then a row where id 2's logit is one
    float32 step above id 1's (the rest far below)."""

    def __init__(self, flat_steps, prompt_len):
        self.n, self.P = flat_steps, prompt_len
        self.config = ModelConfig(vocab_size=12, n_ctx=32, d_model=2, n_heads=1, n_layers=1)

    def __call__(self, ids, cache=None, last_only=False, **_):
        cache.advance(ids.shape[1])
        logits = np.zeros((ids.shape[0], 1, 12), np.float32)                      # [B, 1, V]
        if cache.length - self.P == self.n:
            logits[..., :] = -20.0
            logits[..., 1], logits[..., 2] = 5.0, np.nextafter(np.float32(5.0), np.float32(6.0))
        return logits


@given(st.integers(7, 20))
def test_a_log_prob_one_float32_step_higher_still_wins_after_a_long_prefix(flat_steps):
    """The running sums are float64: after n uniform steps (Σ log p = -n · log 12, about -17 to
    -50), adding two log-probs one float32 step apart keeps them apart, so beam_size=1 still picks
    the higher, as greedy does (in float32 they would round to one value, a false tie)."""
    model = OneStepApart(flat_steps, prompt_len=2)
    greedy = [s.id for s in generate(model, [0, 1], flat_steps + 1, temperature=0)]
    (best,) = beam_search(model, [0, 1], beam_size=1, max_new_tokens=flat_steps + 1, stop_at_eos=False)
    assert best.ids == greedy and greedy[-1] == 2


def test_stop_ids_beyond_the_int32_range_are_taken_as_given():
    """A vocabulary may hold up to 2**32 - 1 tokens (GGUF's limit): a stop id above 2**31 is
    read as it is, and what refuses this search is the memory check (64 rows of 2**31 logits: 1.6 TB)."""
    model = Scripted({}, prompt_len=2, vocab_size=2**31 + 2)
    with pytest.raises(ValueError, match=r"^beam_size=64 needs .* allowed at most \d+$"):
        beam_search(model, [2, 3], beam_size=64, max_new_tokens=4, stop_ids=[2**31 + 1])
