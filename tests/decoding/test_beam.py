"""Beam search: beam 1 is greedy; a wide enough beam is exhaustive search; errors."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.decoding.beam import beam_search
from minillm.config import ModelConfig
from minillm.functional import log_softmax
from minillm.decoding.generate import generate
from tests.model.strategies import random_model, tiny_configs


@given(tiny_configs(), st.data())
def test_beam_size_1_equals_greedy(config, data):
    model = random_model(config, data.draw(st.integers(0, 99)))
    prompt = data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=1, max_size=4))
    n_new = data.draw(st.integers(1, config.n_ctx - len(prompt)))
    eos = data.draw(st.none() | st.integers(0, config.vocab_size - 1))
    stops = () if eos is None else (eos,)
    greedy = [s.id for s in generate(model, prompt, n_new, temperature=0, stop_ids=stops)]
    (best,) = beam_search(model, prompt, beam_size=1, max_new_tokens=n_new, stop_ids=stops)
    assert best.ids == (greedy + [eos] if len(greedy) < n_new else greedy)


def brute_force(model, prompt, n_new, eos, length_penalty):
    """Every possible answer: ends with EOS before n_new tokens, or is n_new tokens long."""
    V, found = model.config.vocab_size, []
    for n in range(1, n_new + 1):
        for seq in itertools.product(range(V), repeat=n):
            if eos in seq[:-1] or (n < n_new and seq[-1] != eos):
                continue
            logits = model(np.array(list(prompt) + list(seq)))           # [P + n, V]
            logp = log_softmax(logits)[len(prompt) - 1:-1]              # [n, V] predicting seq
            total = float(logp[np.arange(n), seq].astype(np.float64).sum())
            found.append((total / n ** length_penalty, list(seq)))
    return sorted(found, key=lambda f: -f[0])


@given(st.data())
def test_wide_beam_equals_brute_force_search(data):
    V, n_new = data.draw(st.sampled_from([(3, 1), (3, 2), (3, 3), (4, 2)]))
    config = ModelConfig(vocab_size=V, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    model = random_model(config, data.draw(st.integers(0, 999)))
    prompt = data.draw(st.lists(st.integers(0, V - 1), min_size=1, max_size=3))
    eos = data.draw(st.none() | st.integers(0, V - 1))
    lp = data.draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]))
    expected = brute_force(model, prompt, n_new, eos, lp)
    # beam >= number of answers: nothing is pruned, and the pool fills only at the end
    got = beam_search(model, prompt, beam_size=V ** n_new, max_new_tokens=n_new,
                      stop_ids=() if eos is None else (eos,),
                      length_penalty=lp, num_return_sequences=min(5, len(expected)))
    np.testing.assert_allclose([h.score for h in got], [e[0] for e in expected[:len(got)]], atol=1e-5)
    for i, h in enumerate(got):
        if all(abs(h.score - e[0]) > 1e-5 for j, e in enumerate(expected) if j != i):
            assert h.ids == expected[i][1]                          # unambiguous rank


def test_scores_are_logprob_over_generated_length_to_the_penalty():
    model = random_model(ModelConfig(vocab_size=12, n_ctx=16, d_model=8, n_heads=2, n_layers=1), 5)
    for lp in (0.0, 1.0, 2.0):
        for h in beam_search(model, [1, 2, 3], beam_size=3, max_new_tokens=4, stop_ids=0,
                             length_penalty=lp, num_return_sequences=3):
            assert h.score == pytest.approx(h.logprob / len(h.ids) ** lp, rel=1e-6)


def test_results_are_sorted_and_eos_ends_a_hypothesis():
    model = random_model(ModelConfig(vocab_size=6, n_ctx=16, d_model=8, n_heads=2, n_layers=1), 9)
    hyps = beam_search(model, [1], beam_size=4, max_new_tokens=6, stop_ids=2, num_return_sequences=4)
    assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
    for h in hyps:
        assert 2 not in h.ids[:-1] and (h.ids[-1] == 2 or len(h.ids) == 6)


@pytest.mark.parametrize("kwargs, match", [
    (dict(beam_size=0), "beam_size and max_new_tokens must be >= 1"),
    (dict(max_new_tokens=0), "max_new_tokens"),
    (dict(num_return_sequences=5), "num_return_sequences"),
    (dict(early_stopping="sometimes"), "early_stopping"),
    (dict(stop_ids=99), "stop_ids"),
    (dict(early_stopping=True), "early_stopping"),           # HF's True is "pool_full" here
    (dict(length_penalty=float("nan")), "length_penalty"),
    (dict(length_penalty="1.0"), "length_penalty"),          # a string or None is not a number
    (dict(length_penalty=None), "length_penalty"),
    (dict(length_penalty=True), "length_penalty"),
    (dict(max_new_tokens=30), r"prompt \(2\) \+ max_new_tokens \(30\) exceed n_ctx=16"),
])
def test_bad_parameters_raise_clear_errors(kwargs, match):
    model = random_model(ModelConfig(vocab_size=20, n_ctx=16, d_model=4, n_heads=1, n_layers=1), 0)
    kwargs = {"beam_size": 4, "max_new_tokens": 4, **kwargs}
    with pytest.raises(ValueError, match=match):
        beam_search(model, [1, 2], **kwargs)


def test_candidates_that_really_tie_go_to_the_lower_beam_then_the_lower_id():
    """Every weight 0: all logits are equal, so every candidate ties; the lower flat index (beam,
    then token) wins, in the running beams and in the returned order."""
    from tests.decoding.test_steps import uniform_model
    model = uniform_model(vocab_size=5)
    hyps = beam_search(model, [1, 2], beam_size=3, max_new_tokens=2, num_return_sequences=3,
                       stop_at_eos=False)
    assert [h.ids for h in hyps] == [[0, 0], [0, 1], [0, 2]]
    (one,) = beam_search(model, [3], beam_size=2, max_new_tokens=3, stop_ids=4)
    assert one.ids == [0, 0, 0]


@given(st.integers(3, 300), st.data())
def test_ties_go_to_the_lower_index_however_many_candidates_tie(V, data):
    """All V·B candidates tie, far more than the K·B kept: still the lowest flat indices win
    (beam 0's tokens 0, 1, … in order), not whichever tied ones a partition happens to leave."""
    from tests.decoding.test_steps import uniform_model
    B = data.draw(st.integers(1, min(V, 8)))
    hyps = beam_search(uniform_model(vocab_size=V), [1, 2], beam_size=B, max_new_tokens=2,
                       num_return_sequences=B, stop_at_eos=False)
    assert [h.ids for h in hyps] == [[0, i] for i in range(B)]


def test_beam_search_needs_exactly_the_memory_of_its_rows(monkeypatch):
    """beam_size rows of a KV cache (prompt + max_new_tokens positions) plus 12·V bytes each (the
    float32 logits and float64 scores): exactly that much memory is enough, a byte less is a
    ValueError naming beam_size."""
    import minillm.kv_cache_sizes as kv
    model = random_model(ModelConfig(vocab_size=20, n_ctx=16, d_model=4, n_heads=1, n_layers=1), 0)
    row = kv.cache_bytes(model.config, 1, 2 + 4) + 12 * 20
    monkeypatch.setattr(kv, "memory_bytes", lambda: 3 * row)
    assert beam_search(model, [1, 2], beam_size=3, max_new_tokens=4)
    monkeypatch.setattr(kv, "memory_bytes", lambda: 3 * row - 1)
    with pytest.raises(ValueError, match=r"^beam_size=3 needs .* allowed at most 2$"):
        beam_search(model, [1, 2], beam_size=3, max_new_tokens=4)


@given(tiny_configs(), st.data())
def test_never_with_a_length_penalty_at_most_0_is_the_heuristic(config, data):
    """HF's rule: early_stopping="never" estimates the best running beam at max_new_tokens only
    when length_penalty > 0 (a longer beam can then still win); with length_penalty <= 0 it is the
    default heuristic, at the current length."""
    model = random_model(config, data.draw(st.integers(0, 99)))
    prompt = data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=1, max_size=3))
    nb = data.draw(st.integers(2, 4))
    kw = dict(beam_size=nb, stop_ids=data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)),
              max_new_tokens=data.draw(st.integers(2, config.n_ctx - len(prompt))),
              length_penalty=data.draw(st.sampled_from([-2.0, -1.0, -0.5, 0.0])),
              num_return_sequences=nb)                     # the whole pool, its worst included
    never = beam_search(model, prompt, early_stopping="never", **kw)
    assert never == beam_search(model, prompt, early_stopping="heuristic", **kw)


def test_the_defaults_are_four_beams_twenty_tokens_the_average_log_prob_and_one_answer():
    """beam_search(model, prompt) is beam_size=4, max_new_tokens=20, length_penalty=1 (Σ log p /
    length), the model's EOS ids, one hypothesis, HF's heuristic stop: as its signature says."""
    model = random_model(ModelConfig(vocab_size=12, n_ctx=32, d_model=8, n_heads=2, n_layers=1), 4)
    explicit = beam_search(model, [1, 2], beam_size=4, max_new_tokens=20, length_penalty=1.0,
                           stop_ids=(), stop_at_eos=True, num_return_sequences=1,
                           early_stopping="heuristic")
    assert beam_search(model, [1, 2]) == explicit and len(explicit) == 1
    assert beam_search(model, [1, 2], beam_size=3) != explicit     # this model tells 3 from 4


def test_beam_search_stops_at_the_models_eos_ids_by_default():
    from minillm import GPT
    config = ModelConfig(vocab_size=6, n_ctx=16, d_model=8, n_heads=2, n_layers=1, eos_id=2)
    model = GPT(config, random_model(config, 9).params)
    hyps = beam_search(model, [1], beam_size=4, max_new_tokens=6, num_return_sequences=4)
    assert hyps == beam_search(model, [1], beam_size=4, max_new_tokens=6, num_return_sequences=4,
                               stop_ids=2, stop_at_eos=False)
    assert any(h.ids[-1] == 2 for h in hyps)


@given(tiny_configs(), st.data())
def test_num_return_sequences_gives_the_n_best_the_first_being_the_default_answer(config, data):
    """HF's ``num_return_sequences``: the N best finished hypotheses, best first; the first is
    what the default (N = 1) returns; N above the beam count is refused."""
    model = random_model(config, data.draw(st.integers(0, 99)))
    prompt = data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=1, max_size=4))
    n_new = data.draw(st.integers(1, min(6, config.n_ctx - len(prompt))))
    nb = data.draw(st.integers(1, 4))
    n = data.draw(st.integers(1, nb))
    (best,) = beam_search(model, prompt, beam_size=nb, max_new_tokens=n_new)
    hyps = beam_search(model, prompt, beam_size=nb, max_new_tokens=n_new, num_return_sequences=n)
    assert 1 <= len(hyps) <= n and hyps[0] == best
    assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
    with pytest.raises(ValueError, match="num_return_sequences must be in"):
        beam_search(model, prompt, beam_size=nb, max_new_tokens=n_new, num_return_sequences=nb + 1)
