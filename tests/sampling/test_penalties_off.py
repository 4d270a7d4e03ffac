"""A penalty at its "off" value (repetition 1, frequency and presence 0) is not applied at all:
the sampler then reads only prompt_len, never the history's ids, and its logits are those of no
history, bit for bit (-inf and negative logits included)."""
import numpy as np
import pytest

from minillm.sampling import Sampler

Z = np.array([1.5, -np.inf, -2.0, -0.0, 0.25], np.float32)


@pytest.mark.parametrize("settings", [{}, {"temperature": 0}, {"top_k": 3, "temperature": 0.7},
                                      {"repetition_penalty": 1.0, "frequency_penalty": 0.0,
                                       "repetition_includes_prompt": False}])
def test_with_every_penalty_off_the_history_is_not_read(settings):
    """Ids outside the vocabulary (which a penalty refuses) change nothing when no penalty is on:
    the same processed logits and the same draw as without a history."""
    sampler = Sampler(**settings)
    history = [4, 99, 4]                                   # 99: not an id of these 5 logits
    np.testing.assert_array_equal(sampler.process(Z, history, 1), sampler.process(Z))
    draws = [sampler.sample(Z, np.random.default_rng(s), history=history, prompt_len=1)
             for s in range(5)]
    assert draws == [sampler.sample(Z, np.random.default_rng(s)) for s in range(5)]
    with pytest.raises(ValueError, match="token ids must be in"):
        Sampler(**{**settings, "repetition_penalty": 1.5}).process(Z, history, 1)


def test_a_repetition_penalty_of_1_gives_the_logits_of_no_penalty_bit_for_bit():
    history = [0, 1, 2, 3, 4]                              # every token seen
    out = Sampler(repetition_penalty=1.0).process(Z, history)
    np.testing.assert_array_equal(out, Sampler().process(Z))
    assert out.dtype == np.float32
