"""Seeded mutations: of raw bytes (flip, overwrite, truncate, splice, extreme integers) and of
JSON structure (replace a value with one of the wrong type or an extreme size, delete or add a
key, nest deeply). Every mutation is a pure function of (input, random.Random)."""
import copy
import json
import random
import struct

EXTREME_INTS = (0, 1, 2**31 - 1, 2**32 - 1, 2**32, 2**62, 2**63 - 1, 2**64 - 1)
ODD_VALUES = ("10", 10.7, True, False, None, [], {}, -1, 0, 2**63, 10**9, 2**32 - 1, "x" * 300,
              [1, 2], {"type": "?"}, "", 1e308, float("nan"), "(a|aa)+$", [[[[[]]]]])


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One to three random byte-level edits."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        if not b:
            b = bytearray(rng.randbytes(rng.randint(0, 64)))
            continue
        kind, i = rng.randrange(8), rng.randrange(len(b))
        if kind == 0:
            b[i] ^= 1 << rng.randrange(8)                              # flip a bit
        elif kind == 1:
            b[i] = rng.randrange(256)                                  # overwrite a byte
        elif kind == 2:
            del b[rng.randrange(len(b) + 1):]                          # truncate
        elif kind == 3:
            j = rng.randrange(i, min(len(b), i + 64) + 1)
            del b[i:j]                                                 # delete a range
        elif kind == 4:
            b[i:i] = rng.randbytes(rng.randint(1, 16))                 # insert random bytes
        elif kind == 5 and len(b) >= 8:
            i = rng.randrange(0, len(b) - 7)
            if rng.random() < 0.5:
                i -= i % 8                                             # an aligned field
            b[i:i + 8] = struct.pack("<Q", rng.choice(EXTREME_INTS))   # an extreme u64
        elif kind == 6 and len(b) >= 4:
            i = rng.randrange(0, len(b) - 3)
            b[i:i + 4] = struct.pack("<I", rng.choice(EXTREME_INTS) & 0xFFFFFFFF)
        else:
            j = rng.randrange(len(b))
            b[i:i] = b[j:j + rng.randint(1, 32)]                       # duplicate a range
    return bytes(b)


def _odd(rng):
    return copy.deepcopy(rng.choice(ODD_VALUES))      # a fresh object: the constants stay intact


def _paths(value, path=(), depth=0, out=None, limit=400):
    """Some paths into a JSON value (dict keys, list indices), breadth-limited."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    out.append(path)
    if depth < 6:
        if isinstance(value, dict):
            for k in list(value)[:20]:
                _paths(value[k], path + (k,), depth + 1, out, limit)
        elif isinstance(value, list) and value:
            for k in {0, len(value) - 1, len(value) // 2}:
                _paths(value[k], path + (k,), depth + 1, out, limit)
    return out


def mutate_json(value, rng: random.Random):
    """A copy of ``value`` with one to three structural edits."""
    value = json.loads(json.dumps(value))
    for _ in range(rng.randint(1, 3)):
        paths = _paths(value)
        path = rng.choice(paths[1:] or paths)
        if not path:
            return _odd(rng)
        parent = value
        for k in path[:-1]:
            parent = parent[k]
        key, kind = path[-1], rng.randrange(6)
        if kind <= 2:
            parent[key] = _odd(rng)                        # wrong type / extreme
        elif kind == 3 and isinstance(parent, dict):
            del parent[key]
        elif kind == 3:
            try:
                parent.append(copy.deepcopy(parent[key]))               # a duplicate entry
            except RecursionError:
                parent.append(None)
        elif kind == 4 and isinstance(parent, dict):
            parent[f"unknown_{rng.randrange(99)}"] = _odd(rng)
        else:
            nested = parent[key]
            for _ in range(rng.choice((2, 50, 5000))):
                nested = [nested]
            parent[key] = nested
    return value


def dumps(value) -> bytes:
    """JSON text (NaN allowed, as a careless writer would)."""
    try:
        return json.dumps(value).encode()
    except RecursionError:
        return b"[" * 5000 + b"]" * 5000
