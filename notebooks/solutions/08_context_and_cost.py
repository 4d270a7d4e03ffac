"""Solutions to the exercises of notebook 08."""


def sliding_window(ids, n_ctx):
    return ids[-n_ctx:]


def estimate_cost(n_in, n_out, price_in, price_out):
    return n_in / 1e6 * price_in + n_out / 1e6 * price_out


def fit_turns(turns, n_ctx):
    kept = list(turns)                                   # a copy: the caller's list stays whole
    while sum(n for _, n in kept) > n_ctx and len(kept) > 1:
        kept.pop(1)                                      # the oldest turn after the system prompt
    return kept
