"""The notebooks' exercises: every solution in notebooks/solutions passes its check and the
library's own implementation passes the same check (the exercise states the library's contract).
Correct variants and typical wrong attempts: tests/test_exercise_variants.py. ``exercises.check``
runs as many random cases as the hypothesis profile allows (tests/conftest.py)."""
import re
import types

import numpy as np
import pytest

from minillm import cross_entropy, estimate_cost, generate_simple, softmax
from minillm.io.sizes import parameter_count
from minillm.kv_cache import KVCache
from minillm.model.attention import causal_mask, scaled_dot_product
from minillm.model.embedding import embed
from minillm.lens import prefix_matching_score
from minillm.model.norm import layer_norm, rms_norm
from minillm.model.rope import apply_rope, rope_angles
from minillm.model.variants import softcap, window_mask
from minillm.sampling import allow_only, apply_temperature, min_p, top_k, top_p
from minillm.decoding.speculative import verify
from minillm.decoding.constraints.byte_dfa import ByteDFA
from minillm.decoding.constraints.index import walk_index
from minillm.tokenizer.bpe import NO_MERGE, merge_reference
from minillm.train.grad_norm import layer_norm_backward
from tests.exercise_variants.common import load_solutions

from exercises import NAMES, check  # noqa: E402  (notebooks/ is on the path: common.py)
from how_it_learns import LIBRARY as TRAINING_PIECES  # noqa: E402  (minillm/train/, the exercises' shapes)


SOLUTIONS = load_solutions()


def off_by_one_top_p(z, p):                   # stops BEFORE the token that crosses p
    probs, order = softmax(z), np.argsort(-z, kind="stable")
    keep = np.cumsum(probs[order]) < p
    keep[0] = True
    return np.where(np.isin(np.arange(len(z)), order[keep]), z, -np.inf)


def kv_append_with_the_library_cache(K, V, k_new, v_new):
    S, T, D = len(K), len(k_new), K.shape[1]
    config = types.SimpleNamespace(n_ctx=S + T, n_layers=1, n_kv_heads=1, d_head=D)
    cache = KVCache(config, batch_size=1, capacity=S + T)
    cache.store(0, K[None, None], V[None, None])                   # [1, 1, S, D]
    cache.advance(S)
    keys, values = cache.store(0, k_new[None, None], v_new[None, None])   # [1, 1, S + T, D]
    return keys[0, 0], values[0, 0]


def greedy_with_generate_simple(next_logits, prompt, n):
    class Model:                                # the toy model with the interface GPT has
        config = types.SimpleNamespace(vocab_size=len(next_logits(prompt)), n_ctx=64)
        def __call__(self, ids):
            return next_logits(list(ids))[None]                     # [1, V]: the last position
    next_logits.calls.clear()
    return list(generate_simple(Model(), prompt, n, temperature=0))


LIBRARY = {
    "bpe_merge": lambda w, ranks: merge_reference(w, lambda a, b: ranks.get(a + b, NO_MERGE)),
    "embedding_lookup": lambda wte, ids: embed(wte, np.asarray(ids)[None])[0],
    "estimate_cost": estimate_cost,
    "softmax": softmax,
    "causal_mask": lambda T: causal_mask(T, T),
    "attention_head": lambda q, k, v: scaled_dot_product(
        q[None, None], k[None, None], v[None, None], causal_mask(len(q), len(k))[None])[0][0, 0],
    "layer_norm": layer_norm,
    "rms_norm": rms_norm,
    "rope_rotate": lambda x, positions, theta: apply_rope(
        x[None, None], *(a[None, None] for a in rope_angles(np.asarray(positions), x.shape[-1], theta)))[0, 0],
    "kv_append": kv_append_with_the_library_cache,
    "cached_causal_mask": causal_mask,
    "temperature": lambda z, T: softmax(apply_temperature(z, T)),
    "top_k": top_k, "top_p": top_p, "min_p": min_p, "allow_only": allow_only,
    "option_probs": lambda z, ids: softmax(allow_only(z, ids))[ids],
    "greedy_loop": greedy_with_generate_simple,
    "cross_entropy": cross_entropy,
    "layer_norm_backward": lambda dy, x, w, eps: layer_norm_backward(dy, x, w, eps)[0],
    "decode_bytes": lambda config, n: 4 * parameter_count(config) + KVCache(config, capacity=n).nbytes(),
    "accept_drafts": lambda drafts, logits: verify(
        lambda i: softmax(logits[i]), np.asarray(drafts, dtype=np.int64), None, None, greedy=True),
    "softcap": softcap,
    "sliding_window_mask": lambda T, W: causal_mask(T, T) & window_mask(T, T, W),
    "dfa_walk": lambda table, state, data: ByteDFA(table, np.zeros(len(table), bool)).walk(state, data),
    "allowed_tokens": lambda table, state, vocab: walk_index(ByteDFA(table, np.zeros(len(table), bool)), vocab)[state][0],
    "logit_lens": lambda resid, w, head, eps: rms_norm(resid, w, eps) @ head,
    "prefix_matching": lambda pattern, n: prefix_matching_score(pattern, n),
    # notebook 19: grad_model's loss gradient, frozen.py's projection products, grad_norm, grad_attention, optim
    **{name: TRAINING_PIECES[name] for name in ("ce_grad", "linear_backward", "rms_norm_backward",
                                                "attention_backward", "adamw_step", "lr_schedule")},
}


def test_there_are_at_least_15_exercises_each_with_a_solution():
    assert len(NAMES) >= 15
    assert sorted(SOLUTIONS) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_solution_passes(name):
    result = check(name, SOLUTIONS[name], quiet=True)
    assert result.passed, result.message


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_the_library_passes_its_own_exercise(name):
    result = check(name, LIBRARY[name], quiet=True)
    assert result.passed, result.message


def test_an_unwritten_exercise_is_reported_not_raised():
    def my_top_p(logits, p):
        raise NotImplementedError
    result = check("top_p", my_top_p, quiet=True)
    assert not result.passed and "not written yet" in result.message


def test_the_off_by_one_top_p_message_names_the_sizes():
    message = check("top_p", off_by_one_top_p, quiet=True).message
    assert re.search(r"you kept \d+ tokens?.*the smallest set with mass ≥ [\d.]+ has \d+", message), message
