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


def score_full_options(next_logprobs, prompt, options):
    sums = np.array([sum(next_logprobs(prompt + option[:k])[option[k]] for k in range(len(option)))
                     for option in options])               # Σ log p of each option's tokens
    e = np.exp(sums - sums.max())
    return e / e.sum()
