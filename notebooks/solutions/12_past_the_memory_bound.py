"""Solutions to the exercises of notebook 12."""
import numpy as np

from minillm.io.sizes import parameter_count


def decode_bytes(config, n):
    weights = parameter_count(config)                                       # every weight, once
    cache = 2 * config.n_layers * config.n_kv_heads * n * config.d_head     # K and V, n positions
    return 4 * (weights + cache)                                            # float32: 4 bytes


def roofline(intensity, peak, bandwidth):
    return np.minimum(peak, np.asarray(intensity) * bandwidth)   # np.minimum: numbers and arrays


def accept_drafts(drafts, logits):
    out = []
    for i, d in enumerate(drafts):
        best = int(np.argmax(logits[i]))       # the target's choice after the context + out
        if d != best:
            return out + [best]                # the first miss is replaced; later drafts are moot
        out.append(d)
    return out + [int(np.argmax(logits[len(drafts)]))]   # every draft agreed: one bonus token
