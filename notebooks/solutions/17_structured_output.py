"""Solutions to the exercises of notebook 17."""


def dfa_walk(table, state, data):
    for b in data:                       # one lookup per byte
        state = int(table[state, b])
        if state < 0:                    # no edge: the text has left the pattern (and table[-1] is a real row)
            return -1
    return state


def allowed_tokens(table, state, token_bytes):
    return [i for i, b in enumerate(token_bytes)
            if b and dfa_walk(table, state, b) >= 0]     # every byte readable; b"" never allowed
