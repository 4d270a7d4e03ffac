"""The classic findings on SmolLM2-135M-Instruct (the development data's GGUF; skipped without
it): the logit lens finds " Paris" at the top of the last layer only, and the model has induction
heads whose ablation undoes what the second repeat of a random sequence gains."""
import numpy as np
import pytest

from minillm import load_model
from minillm.functional import log_softmax
from minillm.lens import ablate_heads, lens_table, prefix_matching_scores, repeated_random_tokens

from tests.conftest import shared_file



@pytest.fixture(scope="module")
def smollm2():
    return load_model(shared_file("models/SmolLM2-135M-Instruct.Q4_1.gguf"), fast=False)


def test_the_logit_lens_finds_paris_at_the_last_layer(smollm2):
    model, tok = smollm2
    top, prob = lens_table(model, np.array(tok.encode("The capital of France is")))
    paris = tok.encode(" Paris")[0]
    assert top[-1, -1] == paris and prob[-1, -1] > 0.5
    assert paris not in top[:-1, -1]                                # no earlier layer has it on top


def second_repeat_loss(logits, ids, n):
    nll = -np.take_along_axis(log_softmax(logits[:, :-1]), ids[:, 1:, None], -1)[..., 0]
    return float(nll[:, n:].mean()), float(nll[:, :n - 1].mean())


def test_ablating_the_top_prefix_matching_heads_undoes_the_induction(smollm2):
    """Seed 0, 4 sequences of 50 random tokens seen twice: the second repeat's loss is a
    quarter of the first's; mean-ablating the 10 heads of highest prefix-matching score brings
    most of it back, 10 random heads (seed 0) hardly any."""
    model, _ = smollm2
    n, k = 50, 10
    ids = repeated_random_tokens(model.config.vocab_size, n, batch=4, seed=0)
    second, first = second_repeat_loss(model(ids), ids, n)
    assert second < first / 2
    scores = prefix_matching_scores(model, ids, n)                  # [L, H]
    top = [divmod(int(i), model.config.n_heads) for i in np.argsort(-scores, axis=None)[:k]]
    picks = np.random.default_rng(0).choice(scores.size, k, replace=False)
    rand = [divmod(int(i), model.config.n_heads) for i in picks]
    lost_top = second_repeat_loss(ablate_heads(model, ids, top, "mean"), ids, n)[0] - second
    lost_rand = second_repeat_loss(ablate_heads(model, ids, rand, "mean"), ids, n)[0] - second
    assert lost_top > (first - second) / 2 and lost_rand < lost_top / 4
