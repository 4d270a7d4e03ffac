"""Solutions to the exercises of notebook 01."""


def bpe_merge_step(parts, ranks):
    """Merge the adjacent pair whose concatenation has the lowest rank (the leftmost if tied)."""
    pair_ranks = [ranks.get(a + b) for a, b in zip(parts, parts[1:])]
    candidates = [(r, i) for i, r in enumerate(pair_ranks) if r is not None]
    if not candidates:
        return list(parts)
    _, i = min(candidates)                        # lowest rank, then lowest position
    return parts[:i] + [parts[i] + parts[i + 1]] + parts[i + 2:]


def bpe_merge(word, ranks):
    """Single bytes, then the merge step until nothing changes."""
    parts = [word[i:i + 1] for i in range(len(word))]
    while True:
        merged = bpe_merge_step(parts, ranks)
        if merged == parts:
            return parts
        parts = merged
