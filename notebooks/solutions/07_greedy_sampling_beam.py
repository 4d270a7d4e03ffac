"""Solutions to the exercises of notebook 07."""
import numpy as np


def beam_step(scores, logprobs, beam_size):
    total = scores[:, None] + logprobs                                   # [B, V]
    V = logprobs.shape[1]
    best = sorted(range(total.size), key=lambda i: (-total.flat[i], i))[:beam_size]
    return [(i // V, i % V, float(total.flat[i])) for i in best]


def sequence_logprob(logprobs, ids):
    return float(sum(logprobs[t, i] for t, i in enumerate(ids)))
