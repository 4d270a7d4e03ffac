"""generate(..., draft=) really drafts: the source is asked, for up to 5 tokens a round by default."""
import numpy as np

from minillm.config import ModelConfig
from minillm.decoding.generate import generate
from minillm.decoding.speculative_drafts import DraftSource
from tests.model.strategies import random_model


class Oracle(DraftSource):
    """Proposes the true next tokens (those of a plain greedy run); records each round's k."""

    def __init__(self, truth, P):
        self.truth, self.P, self.asked = truth, P, []

    def propose(self, seq, m, k, choose):
        self.asked.append(k)
        n = m - self.P                                              # tokens generated so far
        return np.array(self.truth[n:n + k], dtype=np.int64), None


def test_a_draft_source_is_asked_for_5_tokens_a_round_by_default():
    """A source that is always right is asked for num_draft_tokens = 5 tokens a round, so each
    target forward yields 6 tokens; the tokens are plain greedy's."""
    config = ModelConfig(vocab_size=30, n_ctx=64, d_model=8, n_heads=2, n_layers=1, d_ff=8)
    model, prompt, n = random_model(config, 0), [1, 2, 3], 36
    truth = [s.id for s in generate(model, prompt, n, temperature=0, stop_at_eos=False)]
    for kw, k in ((dict(), 5), (dict(num_draft_tokens=2), 2)):
        source = Oracle(truth, len(prompt))
        got = [s.id for s in generate(model, prompt, n, temperature=0, stop_at_eos=False,
                                      draft=source, **kw)]
        assert got == truth
        assert max(source.asked) == k and source.rounds == -(-n // (k + 1))
        assert source.accepted == source.proposed == n - source.rounds
