"""A Step's top alternatives on a real-sized vocabulary: best first, exact ties by lower id."""
import numpy as np
import pytest

from minillm.decoding.steps import StepWriter
from minillm.functional import log_softmax


class Settings:
    tokenizer, stop_strings, logprobs = None, (), True

    def __init__(self, top_n):
        self.top_n = top_n


@pytest.mark.parametrize("seed", [0, 1])
def test_top_alternatives_of_a_long_row_with_many_ties_list_lower_ids_first(seed):
    """1,000 logits taking 3 values (hundreds of exact ties, long enough that an unstable sort
    would shuffle them): the top 50 are the ids by (logit descending, id ascending)."""
    z = np.random.default_rng(seed).integers(0, 3, 1000).astype(np.float32)    # [V]
    want = sorted(range(len(z)), key=lambda i: (-z[i], i))[:50]
    step = StepWriter(Settings(top_n=50)).step(want[0], z, last=False)
    assert [i for i, _ in step.top] == want
    assert [lp for _, lp in step.top] == [float(log_softmax(z)[i]) for i in want]
