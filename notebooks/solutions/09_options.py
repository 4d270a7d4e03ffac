"""Solutions to the exercises of notebook 09."""
import numpy as np


def allow_only(logits, allowed):
    out = np.full_like(logits, -np.inf)
    out[allowed] = logits[allowed]
    return out


def option_probs(logits, option_ids):
    z = logits[option_ids]
    e = np.exp(z - z.max())
    return e / e.sum()
