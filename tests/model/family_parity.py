"""The parity check every tiny family fixture gets: a model's logits against the stored
transformers logits (``expected.safetensors``: ids [B, T], logits [B, T, V]), within
1e-4 · max|logit|, in one pass and through the KV cache (a prefill, then one token at a time)."""
import numpy as np

from minillm import KVCache


def assert_logits_match_with_and_without_the_cache(model, expected: dict, prefill: int) -> None:
    ids, want = expected["ids"], expected["logits"]                     # [B, T], [B, T, V]
    bound = 1e-4 * float(np.abs(want).max())
    assert np.abs(model(ids) - want).max() <= bound
    cache = KVCache(model.config, batch_size=ids.shape[0], capacity=ids.shape[1])
    steps = [model(ids[:, :prefill], cache=cache)]                      # [B, prefill, V]
    steps += [model(ids[:, t:t + 1], cache=cache) for t in range(prefill, ids.shape[1])]
    assert np.abs(np.concatenate(steps, axis=1) - want).max() <= bound
