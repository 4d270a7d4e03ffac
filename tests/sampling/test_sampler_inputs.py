"""What a Sampler takes: its own copy of the settings it is given, and a prompt_len within the history."""
import numpy as np
import pytest

from minillm.sampling import Sampler


def test_a_sampler_keeps_its_own_copy_of_logit_bias():
    """Changing the dict it was built from afterwards changes nothing (a Sampler is frozen)."""
    bias = {1: -np.inf}
    sampler = Sampler(logit_bias=bias)
    bias[1], bias[2] = 0.0, -np.inf
    assert sampler.logit_bias == {1: -np.inf}
    out = sampler.process(np.zeros(4, np.float32))
    np.testing.assert_array_equal(out, [0.0, -np.inf, 0.0, 0.0])


def test_a_sampler_keeps_its_own_copy_of_allowed_ids():
    """allowed_ids is read once, into a tuple: a list changed afterwards changes nothing, and an
    iterator (read only once) is allowed too."""
    ids = [3, 1]
    sampler = Sampler(allowed_ids=ids)
    ids.append(0)
    assert sampler.allowed_ids == (3, 1) and Sampler(allowed_ids=iter([2])).allowed_ids == (2,)
    out = sampler.process(np.zeros(4, np.float32))
    np.testing.assert_array_equal(out, [-np.inf, 0.0, -np.inf, 0.0])


@pytest.mark.parametrize("frequency, presence", [(-1.0, 0.0), (-0.5, 0.0), (1.0, 0.0), (0.0, -1.0),
                                                 (0.0, 0.5), (-1.0, -1.0)])
def test_any_nonzero_frequency_or_presence_penalty_is_applied_even_negative(frequency, presence):
    """z - α_f · count - α_p · [count > 0] over the generated tokens, for negative α (which favour
    repeats) as for positive ones."""
    z = np.array([0.5, 1.0, -2.0, 0.0], np.float32)
    history, counts = [3, 1, 1, 2, 1], np.array([0, 3, 1, 0], np.float32)     # after a prompt of 1
    out = Sampler(frequency_penalty=frequency, presence_penalty=presence).process(z, history, 1)
    want = z - frequency * counts - presence * (counts > 0)
    np.testing.assert_allclose(out, want - want.max(), atol=1e-6)  # process: up to the row's max


@pytest.mark.parametrize("prompt_len", [-1, 4, 1.0, np.float32(1), [1, -1], [-1, 1], [0, 3],
                                        [2, 1.5]])
def test_prompt_len_is_an_integer_in_0_to_the_history_length_for_every_row(prompt_len):
    """One int for every row or one per row, each in [0, len(history)]: a negative one (even in
    a single row) would count generated tokens as prompt from the end."""
    sampler = Sampler(repetition_penalty=1.5, frequency_penalty=0.5)
    z = np.zeros((2, 5), np.float32)
    history = [np.array([1, 2, 3]), np.array([3, 4])]
    with pytest.raises(ValueError, match="prompt_len"):
        sampler.process(z, history, prompt_len)
    if np.ndim(prompt_len) == 0:
        with pytest.raises(ValueError, match="prompt_len"):
            sampler.process(z[0], history[0], prompt_len)


def test_prompt_len_at_each_end_of_the_history_is_allowed():
    sampler = Sampler(repetition_penalty=1.5, frequency_penalty=0.5)
    z, history = np.zeros((2, 5), np.float32), [np.array([1, 2, 3]), np.array([3, 4])]
    for prompt_len in (0, 2, [3, 2], [0, 0], np.array([3, 0], np.int32)):
        out = sampler.process(z, history, prompt_len)
        assert out.shape == (2, 5) and np.isfinite(out).all()


def test_prompt_len_defaults_to_0_the_whole_history_is_generated():
    """process, probs and sample without prompt_len count every history token as generated (the
    frequency and presence penalties, which skip the prompt by default, see all of them)."""
    sampler = Sampler(temperature=1.0, frequency_penalty=2.0, presence_penalty=1.0)
    z, history = np.zeros(5, np.float32), np.array([1, 1, 2])
    np.testing.assert_array_equal(sampler.process(z, history), sampler.process(z, history, 0))
    np.testing.assert_array_equal(sampler.process(z, history), [0.0, -5.0, -3.0, 0.0, 0.0])
    np.testing.assert_array_equal(sampler.probs(z, history), sampler.probs(z, history, 0))
    draws = [sampler.sample(z, np.random.default_rng(s), history) for s in range(20)]
    assert draws == [sampler.sample(z, np.random.default_rng(s), history, 0) for s in range(20)]


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_logit_bias_values_are_finite_or_minus_inf_every_one(bad):
    """One NaN or +inf among good values is refused; -inf (a ban) and finite values are fine."""
    for bias in ({1: bad}, {0: 0.5, 1: bad, 2: -np.inf}, {0: -1.0, 3: bad}):
        with pytest.raises(ValueError, match="logit_bias values must be finite or -inf"):
            Sampler(logit_bias=bias)
    assert Sampler(logit_bias={0: 0.5, 2: -np.inf}).logit_bias == {0: 0.5, 2: -np.inf}


@pytest.mark.parametrize("name", ["frequency_penalty", "presence_penalty"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, "0.5", None, True])
def test_frequency_and_presence_penalties_are_finite_numbers(name, bad):
    with pytest.raises((ValueError, TypeError), match=name):
        Sampler(**{name: bad})


@pytest.mark.parametrize("settings", [dict(), dict(top_k=3), dict(temperature=0),
                                      dict(temperature=0, top_k=3),
                                      dict(top_p=0.5, min_p=0.1)])
def test_sample_gives_a_python_int_for_one_row_and_int64_ids_for_a_batch(settings):
    sampler, z = Sampler(**settings), np.random.default_rng(0).normal(size=(3, 10)).astype(np.float32)
    one = sampler.sample(z[0], np.random.default_rng(1))
    assert type(one) is int and 0 <= one < 10
    many = sampler.sample(z, np.random.default_rng(1))
    assert type(many) is np.ndarray and many.dtype == np.int64 and many.shape == (3,)


@pytest.mark.parametrize("settings", [dict(), dict(top_k=3), dict(temperature=0),
                                      dict(top_p=0.5, min_p=0.1)])
def test_a_bias_that_bans_every_token_is_refused_as_such(settings):
    """A logit bias of -inf on every token leaves no distribution: sampling, and asking for the
    distribution, refuse it with a ValueError that says the mask came from the allowed set, the
    bias or the penalties (the logits given were fine)."""
    z = np.zeros((2, 5), np.float32)
    sampler = Sampler(logit_bias={i: -np.inf for i in range(5)}, **settings)
    for call in (lambda: sampler.sample(z, np.random.default_rng(0)), lambda: sampler.probs(z[0])):
        with pytest.raises(ValueError, match="^logits after the allowed set, bias and penalties: "
                                             "every entry of a row is -inf"):
            call()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("settings", [dict(), dict(top_k=2), dict(top_k=2, temperature=0.5, top_p=0.9)])
def test_process_keeps_the_dtype_of_the_logits(dtype, settings):
    """``process`` returns logits of the dtype it was given, with a top-k (the survivors put back
    into a row of -inf) as without."""
    z = np.array([[0.1, 2.0, -1.0, 0.7], [0.0, 0.0, 1.0, -3.0]], dtype)
    for logits in (z, z[0]):
        out = Sampler(**settings).process(logits)
        assert out.dtype == dtype and out.shape == logits.shape
