"""Speculative decoding: greedy output is plain greedy's, sampled output follows the target exactly.

Statistical tests: Pearson's chi-square, cells with expected count < 5 pooled, fixed seeds,
α = 0.001 (critical values as in tests/sampling/test_categorical.py).
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.functional import softmax
from minillm.decoding.generate import generate
from minillm.kv_cache import KVCache
from minillm.sampling import Sampler
from minillm.decoding.speculative import verify
from minillm.decoding.speculative_drafts import DraftModel, DraftSource, PromptLookup, first_layers, make_draft
from tests.model.strategies import random_model, tiny_configs
from tests.sampling.test_categorical import chi2_critical


def ids_of(steps):
    return [s.id for s in steps]


def a_draft(kind, model, config, seed):
    if kind == "prompt":
        return "prompt"
    if kind == "layers" and config.n_layers > 1:
        return first_layers(model, 1)
    small = ModelConfig(vocab_size=config.vocab_size, n_ctx=config.n_ctx, d_model=8, n_heads=2,
                        n_layers=1, d_ff=8, arch=config.arch)
    return random_model(small, seed + 7)


@given(tiny_configs(), st.data())
def test_greedy_speculative_equals_plain_greedy(config, data):
    model = random_model(config, data.draw(st.integers(0, 99)),
                         data.draw(st.sampled_from(["plain", "rows"])))
    P = data.draw(st.integers(1, config.n_ctx - 1))
    prompt = data.draw(st.lists(st.integers(0, 3), min_size=P, max_size=P))   # repeats: lookups hit
    n_new, k = config.n_ctx - P, data.draw(st.integers(1, 6))
    kind = data.draw(st.sampled_from(["prompt", "model", "layers"]))
    draft = a_draft(kind, model, config, data.draw(st.integers(0, 99)))
    stop = data.draw(st.lists(st.integers(0, config.vocab_size - 1), max_size=2))
    kw = dict(temperature=0, stop_ids=stop, logprobs=True, top_n=2)
    plain = list(generate(model, prompt, n_new, **kw))
    fast = list(generate(model, prompt, n_new, draft=draft, num_draft_tokens=k, **kw))
    assert ids_of(fast) == ids_of(plain)
    np.testing.assert_allclose([s.logprob for s in fast], [s.logprob for s in plain], atol=1e-4)
    assert [[i for i, _ in s.top] for s in fast] == [[i for i, _ in s.top] for s in plain]


@given(tiny_configs(), st.data())
def test_the_cache_afterwards_holds_what_plain_decoding_fed(config, data):
    model = random_model(config, data.draw(st.integers(0, 99)))
    P = data.draw(st.integers(2, config.n_ctx - 1))
    prompt = data.draw(st.lists(st.integers(0, 3), min_size=P, max_size=P))
    n_new = data.draw(st.integers(1, config.n_ctx - P))
    caches = [KVCache(config, capacity=config.n_ctx) for _ in range(2)]
    plain = ids_of(generate(model, prompt, n_new, temperature=0, cache=caches[0]))
    fast = ids_of(generate(model, prompt, n_new, temperature=0, cache=caches[1], draft="prompt",
                           num_draft_tokens=data.draw(st.integers(1, 4))))
    assert fast == plain and caches[1].length == caches[0].length
    n = caches[0].length
    np.testing.assert_allclose(caches[1].k[:, :, :, :n], caches[0].k[:, :, :, :n], atol=1e-5)


def test_stop_strings_and_streaming_text_survive_accepted_runs():
    from minillm.tokenizer.tokenizer import Tokenizer
    tok = Tokenizer.load("gpt2")
    config = ModelConfig(vocab_size=tok.vocab_size, n_ctx=64, d_model=8, n_heads=2, n_layers=2, d_ff=8)
    for seed in range(3):
        model = random_model(config, seed)
        prompt = tok.encode("the sea the sea the sea is blue, the sea")
        plain = list(generate(model, prompt, 20, temperature=0, tokenizer=tok))
        text = "".join(s.text for s in plain)
        stop = text[len(text) // 2:len(text) // 2 + 3]
        for kw in (dict(), dict(stop_strings=[stop]), dict(stop_ids=[plain[7].id])):
            want = list(generate(model, prompt, 20, temperature=0, tokenizer=tok, **kw))
            itself = DraftModel(model)                # a perfect draft: every guess accepted
            for draft in (PromptLookup(), itself):
                got = list(generate(model, prompt, 20, temperature=0, tokenizer=tok, draft=draft,
                                    num_draft_tokens=4, **kw))
                assert [(s.id, s.text) for s in got] == [(s.id, s.text) for s in want]
            assert itself.accepted == itself.proposed > 0     # runs of accepted drafts exercised


def test_same_seed_same_tokens():
    config = ModelConfig(vocab_size=12, n_ctx=40, d_model=8, n_heads=2, n_layers=2, d_ff=8)
    model = random_model(config, 3)
    for draft in ("prompt", first_layers(model, 1)):
        runs = [ids_of(generate(model, [1, 2, 3, 1, 2], 30, preset="chat", seed=5, draft=draft))
                for _ in range(2)]
        assert runs[0] == runs[1]


def test_verify_first_token_follows_the_target():
    """Whatever q proposes, the first token verify returns is distributed as p₀."""
    rng, N, V, k = np.random.default_rng(0), 20_000, 6, 3
    p = softmax(rng.normal(0, 1.5, (k + 1, V)))                     # [k+1, V]
    q = softmax(rng.normal(0, 1.5, (k, V)))                         # [k, V]
    for deterministic in (False, True):
        counts = np.zeros(V)
        for _ in range(N):
            if deterministic:
                drafts, qq = np.array([2, 0, 5]), None
            else:
                drafts, qq = np.array([rng.choice(V, p=q[i]) for i in range(k)]), q
            counts[verify(lambda i: p[i], drafts, qq, rng, greedy=False)[0]] += 1
        stat = (((counts - N * p[0]) ** 2) / (N * p[0])).sum()
        assert stat < chi2_critical(V - 1)


@pytest.mark.parametrize("draft", ["prompt", "model"])
def test_sampled_tokens_follow_the_target_distribution(draft):
    """The joint law of the first two tokens equals p(t₁) p(t₂ | t₁), N = 3000, α = 0.001."""
    config = ModelConfig(vocab_size=4, n_ctx=16, d_model=8, n_heads=2, n_layers=2, d_ff=8)
    model = random_model(config, 0)
    small = random_model(ModelConfig(vocab_size=4, n_ctx=16, d_model=4, n_heads=1, n_layers=1, d_ff=8), 1)
    prompt = [0, 1, 2, 1, 0, 1]                                       # "0 1" reappears: drafts "2 1"
    sampler = Sampler(temperature=1.2, top_k=3)
    joint = np.zeros((4, 4))
    first = sampler.probs(model(np.array(prompt))[-1])                # [V]
    for t in range(4):
        joint[t] = first[t] * sampler.probs(model(np.array(prompt + [t]))[-1])
    rng, N, counts = np.random.default_rng(0), 3000, np.zeros((4, 4))
    source = make_draft("prompt" if draft == "prompt" else DraftModel(small))
    for _ in range(N):
        a, b = ids_of(generate(model, prompt, 2, sampler=sampler, rng=rng, draft=source,
                               num_draft_tokens=2))
        counts[a, b] += 1
    assert 0 < source.accepted < source.proposed                      # both branches taken
    expected = N * joint.ravel()
    big = expected >= 5
    obs = np.append(counts.ravel()[big], counts.ravel()[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    obs, exp = obs[exp > 0], exp[exp > 0]
    assert ((obs - exp) ** 2 / exp).sum() < chi2_critical(len(exp) - 1)


def test_prompt_lookup_proposes_the_latest_occurrence():
    seq = np.array([1, 2, 3, 9, 1, 2, 4, 5, 1, 2, 0, 0])
    drafts, q = PromptLookup(max_ngram=2).propose(seq, 10, 3, None)
    assert drafts.tolist() == [4, 5, 1] and q is None
    assert PromptLookup().propose(np.array([1, 2, 3]), 3, 3, None)[0].tolist() == []
    only_bigrams = PromptLookup(max_ngram=2, min_ngram=2)              # "2" alone is no evidence
    assert only_bigrams.propose(np.array([2, 7, 1, 2]), 4, 2, None)[0].tolist() == []
    unigrams = PromptLookup(max_ngram=2, min_ngram=1)
    assert unigrams.propose(np.array([2, 7, 1, 2]), 4, 2, None)[0].tolist() == [7, 1]
    with pytest.raises(ValueError, match="min_ngram"):
        PromptLookup(max_ngram=2, min_ngram=3)


@pytest.mark.parametrize("kwargs, match", [
    (dict(draft="ngram"), "draft"),
    (dict(draft="prompt", num_draft_tokens=0), "num_draft_tokens"),
    (dict(draft="prompt", sliding_window=4), "sliding_window"),
])
def test_bad_speculative_arguments_are_refused(kwargs, match):
    model = random_model(ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=2), 0)
    with pytest.raises(ValueError, match=match):
        list(generate(model, [1, 2], 4, **kwargs))
    with pytest.raises(TypeError, match="draft"):
        list(generate(model, [1, 2], 4, draft=3))
    with pytest.raises(ValueError, match="vocabulary"):
        other = random_model(ModelConfig(vocab_size=11, n_ctx=8, d_model=8, n_heads=2, n_layers=1), 0)
        list(generate(model, [1, 2], 4, draft=other))
    with pytest.raises(ValueError, match="layers"):
        first_layers(model, 2)


class Scripted(DraftSource):
    """A draft source that proposes 2 tokens: the true next ones (from a plain greedy run), each
    replaced by a wrong one where ``wrong(i)`` says so; counts the rounds it was asked."""

    def __init__(self, truth, P, V, wrong):
        self.truth, self.P, self.V, self.wrong, self.asked = truth, P, V, wrong, 0

    def propose(self, seq, m, k, choose):
        self.asked += 1
        n = m - self.P                                              # tokens generated so far
        ids = [(t + 1) % self.V if self.wrong(i) else t for i, t in enumerate(self.truth[n:n + min(k, 2)])]
        return np.array(ids, dtype=np.int64), None


def test_back_off_after_wasted_rounds_and_not_after_useful_ones():
    """Guesses that always miss are asked ~log times plus once per 17 steps (1, 2, 4 … 16 plain
    steps between); guesses that are half right (one of two kept) are asked every round."""
    config = ModelConfig(vocab_size=30, n_ctx=128, d_model=8, n_heads=2, n_layers=1, d_ff=8)
    model, prompt, n = random_model(config, 0), [1, 2, 3], 100
    truth = ids_of(generate(model, prompt, n, temperature=0, stop_at_eos=False))
    for wrong, most in ((lambda i: True, 12), (lambda i: i == 1, None)):
        source = Scripted(truth, len(prompt), config.vocab_size, wrong)
        got = ids_of(generate(model, prompt, n, temperature=0, stop_at_eos=False, draft=source,
                              num_draft_tokens=2))
        assert got == truth
        if most is not None:
            assert source.asked <= most
        else:
            assert source.asked >= n // 2 - 1                      # 2 tokens per round: every round
