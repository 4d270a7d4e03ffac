"""A dict that fills itself: the caches behind fast encoding.

`Memo(compute, size)[key]` returns the stored value, or computes, stores and returns it
(`dict.__missing__`). Because a hit is a plain dict look-up, the encoder can run it from C over a
whole list, `map(memo.__getitem__, pieces)`, and Python code runs only for keys never seen::

    >>> squares = Memo(lambda x: x * x, size=1000)
    >>> list(map(squares.__getitem__, [3, 4, 3]))   # computes 9 and 16 once each
    [9, 16, 9]

When it holds `size` entries it is emptied wholesale before the next one is added: cheaper than
an LRU's bookkeeping on every hit, and a text's frequent keys come back within a few pieces.
"""
from __future__ import annotations

from typing import Callable


class Memo(dict):
    def __init__(self, compute: Callable, size: int):
        super().__init__()
        self.compute, self.size = compute, size

    def __missing__(self, key):
        if len(self) >= self.size:
            self.clear()
        value = self[key] = self.compute(key)
        return value
