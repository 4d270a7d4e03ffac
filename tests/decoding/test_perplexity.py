"""Perplexity and per-token log-probabilities (minillm/decoding/perplexity.py).

The rules are checked on a bigram model whose log-probabilities are known by construction — its
next-token distribution depends on the current token only, so every number can be worked out by
hand — and against ``evaluate_text`` on the shipped Shakespeare model where the two define the
same quantity.
"""
import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from minillm import evaluate_text, load_model, perplexity, token_logprobs

# p(next | current): (current + 1) mod 3 with probability 1/2, each other token 1/4
BIGRAM = np.log(np.array([[0.25, 0.5, 0.25], [0.25, 0.25, 0.5], [0.5, 0.25, 0.25]],
                         dtype=np.float32))


class Bigram:
    """A fake model: logits [B, T, V] = log p(· | ids[b, t]), any window up to n_ctx tokens."""

    def __init__(self, n_ctx=64):
        self.config = SimpleNamespace(n_ctx=n_ctx, vocab_size=3)
        self.calls = []

    def __call__(self, ids):
        self.calls.append(ids.shape)
        return BIGRAM[ids]                                               # [B, T] -> [B, T, 3]


def test_chunk_rule_scores_the_second_half_of_each_chunk_by_hand():
    """ctx = 6, 13 ids: 2 chunks of 6 (the 13th id dropped); each scores positions 3 and 4, which
    predict its tokens 4 and 5. Chunk 1 [0 1 2 0 0 1]: p(0|0) = 1/4, p(1|0) = 1/2; chunk 2
    [0 1 2 2 1 0]: p(1|2) = 1/4, p(0|1) = 1/4. NLL in units of ln 2: 2, 1, 2, 2 -> PPL = 2^(7/4);
    after chunk 1: 2^(3/2); ± = sqrt((3.25 − 1.75²) / 3) · ln 2 · PPL = 0.25 · ln 2 · PPL."""
    ids = [0, 1, 2, 0, 0, 1, 0, 1, 2, 2, 1, 0, 2]
    r = perplexity(Bigram(), ids, ctx=6)
    assert r.tokens == 4 and r.chunks == 2
    assert r.running == pytest.approx([2 ** 1.5, 2 ** 1.75], rel=1e-6)
    assert r.ppl == pytest.approx(2 ** 1.75, rel=1e-6)
    assert r.nll == pytest.approx(1.75 * math.log(2), rel=1e-6)
    assert r.error == pytest.approx(0.25 * math.log(2) * 2 ** 1.75, rel=1e-5)


def test_chunks_are_batched_without_changing_the_number():
    ids = np.random.default_rng(0).integers(0, 3, size=100)
    one, model = perplexity(Bigram(), ids, ctx=8), Bigram()
    three = perplexity(model, ids, ctx=8, batch=3)
    assert three.running == pytest.approx(one.running, rel=1e-12)
    assert model.calls[0] == (3, 8) and len(model.calls) == 4             # 12 chunks: 3+3+3+3


@given(st.lists(st.integers(0, 2), min_size=2, max_size=80), st.integers(2, 16),
       st.integers(1, 16))
def test_sliding_window_scores_every_token_but_the_first_exactly_once(ids, ctx, stride):
    """For a bigram model the total NLL of any rule that scores each token once is the sum of
    −log p(x_t | x_{t−1}) over t >= 1, whatever the windows."""
    assume(stride <= ctx)
    r = perplexity(Bigram(), ids, ctx=ctx, stride=stride)
    expected = -np.mean([BIGRAM[a, b] for a, b in zip(ids, ids[1:])], dtype=np.float64)
    assert r.tokens == len(ids) - 1
    assert r.nll == pytest.approx(expected, rel=1e-6, abs=1e-9)


@given(st.integers(3, 20), st.integers(0, 100))
def test_chunk_rule_scores_ctx_minus_half_minus_one_tokens_per_chunk(ctx, extra):
    ids = np.random.default_rng(extra).integers(0, 3, size=2 * ctx + extra)
    r = perplexity(Bigram(), ids, ctx=ctx)
    assert r.chunks == len(ids) // ctx
    assert r.tokens == r.chunks * (ctx - ctx // 2 - 1)


def test_stride_ctx_equals_evaluate_text_on_the_shakespeare_model(shakespeare_model):
    """Windows of ctx tokens every ctx tokens, each predicting ctx next tokens: the tiling
    evaluate_text scores, so PPL = exp(its loss) when ctx divides N − 1."""
    model, tok, text = shakespeare_model
    ctx = model.config.n_ctx
    ids = tok.encode_ordinary(text)[:3 * ctx + 1]
    assert len(ids) == 3 * ctx + 1
    mine = perplexity(model, ids, ctx, stride=ctx, batch=2)
    theirs = evaluate_text(model, tok, tok.decode(ids))
    assert theirs["tokens"] == mine.tokens == 3 * ctx
    assert mine.ppl == pytest.approx(math.exp(theirs["loss"]), rel=1e-5)


def test_token_logprobs_read_each_row_at_the_next_token():
    ids = [0, 1, 1, 2, 0]
    lp, top_ids, top_lp = token_logprobs(Bigram(), ids, top_k=2)
    assert math.isnan(lp[0]) and top_ids[0].tolist() == [-1, -1]
    assert lp[1:].tolist() == pytest.approx([BIGRAM[a, b] for a, b in zip(ids, ids[1:])])
    assert top_ids[1:, 0].tolist() == [1, 2, 2, 0]                        # (cur + 1) mod 3
    assert np.all(np.diff(top_lp[1:], axis=1) <= 0)                       # best first


@pytest.mark.parametrize("kwargs, message", [
    (dict(ids=[0, 1, 0, 1, 0, 1, 0], ctx=4), "at least 2 x 4"),
    (dict(ids=[0, 1] * 40, ctx=65), r"ctx must be in \[3, 64\]"),
    (dict(ids=[0, 1] * 40, ctx=2), r"ctx must be in \[3, 64\]"),
    (dict(ids=[0, 1] * 40, ctx=8, stride=9), r"stride must be in \[1, 8\]"),
    (dict(ids=[0, 3], ctx=8, stride=2), r"in \[0, 3\)"),
    (dict(ids=[], ctx=8, stride=2), "empty"),
    (dict(ids=[0.5, 1.0], ctx=8, stride=2), "int token ids"),
    (dict(ids=[0, 1] * 40, ctx=8, batch=0), "batch must be"),
])
def test_bad_arguments_are_refused_with_what_is_allowed(kwargs, message):
    with pytest.raises(ValueError, match=message):
        perplexity(Bigram(), **kwargs)


@pytest.fixture(scope="module")
def shakespeare_model():
    from pathlib import Path
    folder = Path(__file__).resolve().parents[2] / "weights" / "shakespeare"
    model, tok = load_model(folder, fast=False)
    return model, tok, (folder / "val_sample.txt").read_text(encoding="utf-8")
