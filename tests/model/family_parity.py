"""The parity check every tiny family fixture gets: a model's logits against the stored
transformers logits and beams (``expected.safetensors``: ids [B, T], logits [B, T, V]), within
1e-4 · max|logit|, in one pass and through the KV cache (a prefill, then one token at a time)."""
import numpy as np

from minillm import KVCache
from minillm.decoding.beam import beam_search


def assert_logits_match_with_and_without_the_cache(model, expected: dict, prefill: int) -> None:
    ids, want = expected["ids"], expected["logits"]                     # [B, T], [B, T, V]
    bound = 1e-4 * float(np.abs(want).max())
    assert np.abs(model(ids) - want).max() <= bound
    cache = KVCache(model.config, batch_size=ids.shape[0], capacity=ids.shape[1])
    steps = [model(ids[:, :prefill], cache=cache)]                      # [B, prefill, V]
    steps += [model(ids[:, t:t + 1], cache=cache) for t in range(prefill, ids.shape[1])]
    assert np.abs(np.concatenate(steps, axis=1) - want).max() <= bound


def assert_beam4_matches(model, expected: dict) -> None:
    """Beam search (4 beams, 8 new tokens, all 4 returned) gives transformers' sequences, in its
    order, with scores within 1e-4 (``beam4_sequences`` hold the prompt too)."""
    prompt = expected["greedy_prompt"][0]
    beams = beam_search(model, prompt, beam_size=4, max_new_tokens=8, num_return_sequences=4)
    assert [b.ids for b in beams] == expected["beam4_sequences"][:, len(prompt):].tolist()
    np.testing.assert_allclose([b.score for b in beams], expected["beam4_scores"], atol=1e-4)
