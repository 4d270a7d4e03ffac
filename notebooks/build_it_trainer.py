"""Your BPE trainer's two functions, each graded on its own (notebook 14, section 1).

    "merge"      (ids, pair, new_id) -> ids with EVERY occurrence of pair replaced by new_id, left
                 to right:  merge([1, 2, 3, 1, 2], (1, 2), 9) = [9, 3, 9];  merge([1, 1, 1], (1, 1), 9) = [9, 1]
    "train_bpe"  (words: lists of byte ids, n_merges) -> the merged pairs, in order: count EVERY
                 adjacent pair of every word ("aaa" holds (a, a) twice), take the most frequent
                 (ties: the smallest pair), give it id 256 + k, merge it in every word; stop early
                 when no pair is left

The library's are ``merge_word`` and ``train_naive`` (minillm/tokenizer/train.py). A BPE encoder
loops until no merge applies, so a ``merge`` that replaces only the first occurrence still encodes
right — and a trainer counting a pair once per word agrees on texts whose words rarely repeat a
pair. Hence the toys below, where each of those mistakes changes the answer; a known mistake is
named (``MERGE_BUGS``, ``TRAIN_BUGS``) when the learner's answer is what it computes.
"""
from __future__ import annotations

import copy
from collections import Counter

from minillm.tokenizer.train import merge_word, train_naive


def library_merge(ids, pair, new_id):
    return list(merge_word(tuple(ids), tuple(pair), new_id))


def library_train(words, n_merges):
    return [tuple(p) for p in train_naive(dict(Counter(tuple(w) for w in words)), n_merges)]


MERGE_CASES = [([1, 2, 3, 1, 2], (1, 2), 9),        # two occurrences
               ([1, 1, 1], (1, 1), 9),              # overlapping: left to right -> [9, 1]
               ([1, 1, 1, 1], (1, 1), 9),           # back to back -> [9, 9]
               ([4, 1, 2], (1, 2), 300),            # at the end
               ([5, 6, 7], (1, 2), 9),              # absent: unchanged
               ([7], (7, 7), 9)]                    # too short to hold a pair

_TEXTBOOK = list(b"aaabdaaabac")                    # (a, a) twice in one word
TRAIN_CASES = [([_TEXTBOOK], 3),
               ([[1, 2, 1, 2, 1, 2], [3, 4], [3, 4]], 2),   # (1, 2): 3 times in one word; (3, 4): 2 words
               ([[5, 6], [1, 2]], 2),                         # a tie: the smallest pair first
               ([[1, 2]], 3),                                 # one merge possible: stop after it
               ([list(b" the"), list(b" then"), list(b" cat"), list(b" hat"), list(b"the")], 5)]


def _first_only(ids, pair, new_id):
    ids = list(ids)
    for i in range(len(ids) - 1):
        if (ids[i], ids[i + 1]) == tuple(pair):
            return ids[:i] + [new_id] + ids[i + 2:]
    return ids


def _from_the_right(ids, pair, new_id):
    return library_merge(list(ids)[::-1], tuple(pair)[::-1], new_id)[::-1]


def _train_with(count, tie=min, merge=library_merge, first_id=256):
    def train(words, n_merges):
        words, pairs = [list(w) for w in words], []
        for k in range(n_merges):
            counts = count(words)
            if not counts:
                break
            top = max(counts.values())
            pair = tie(p for p, c in counts.items() if c == top)
            pairs.append(pair)
            words = [merge(w, pair, first_id + k) for w in words]
        return pairs
    return train


def _every_pair(words):
    return Counter(p for w in words for p in zip(w, w[1:]))


def _once_per_word(words):
    return Counter(p for w in words for p in set(zip(w, w[1:])))


MERGE_BUGS = [
    ("it replaces only the first occurrence of the pair; merge replaces every one, left to right "
     "(a BPE encoder's loop hides this, training does not: the word keeps the pair and its count)", _first_only),
    ("it merges from the right ([1, 1, 1] -> [1, 9]); merge scans left to right ([1, 1, 1] -> [9, 1])",
     _from_the_right),
]
TRAIN_BUGS = [
    ("it counts each pair once per word (a set of the word's pairs); count every occurrence: "
     "\"aaa\" holds (a, a) twice, and a word holding a pair 3 times adds 3", _train_with(_once_per_word)),
    ("ties go to the largest pair; among equally frequent pairs the smallest (left, right) wins",
     _train_with(_every_pair, tie=max)),
    ("it merges only the first occurrence of each pair in a word (your merge?): every occurrence is "
     "replaced, or the word keeps the pair", _train_with(_every_pair, merge=_first_only)),
    ("new ids start at 257; the first merge gets 256 (ids 0…255 are the bytes)",
     _train_with(_every_pair, first_id=257)),
]
PARTS = {"merge": (library_merge, MERGE_CASES, MERGE_BUGS, ("ids", "pair", "new_id")),
         "train_bpe": (library_train, TRAIN_CASES, TRAIN_BUGS, ("words", "n_merges"))}


def _as_list(got, name):
    """The answer as a list of ints (merge) or of (int, int) pairs (train_bpe), or None."""
    try:
        if name == "merge":
            return [int(i) for i in got]
        return [tuple(int(i) for i in p) for p in got]
    except (TypeError, ValueError):
        return None


def trainer_difference(name, fn) -> str | None:
    """None when ``fn`` equals the library's ``name`` on every toy; else what differs, in words."""
    library, cases, bugs, names = PARTS[name]
    unwritten = 0
    for i, args in enumerate(cases):
        mine_args = copy.deepcopy(args)
        try:
            got = fn(*mine_args)
        except NotImplementedError:
            unwritten += 1
            continue
        except Exception as error:
            return f"your {name} raised {type(error).__name__}: {error} (toy input {i}: {_shown(names, args)})"
        where = f" (toy input {i}: {_shown(names, args)})"
        for n, a, a0 in zip(names, mine_args, args):
            if a != a0:
                return (f"your {name} changed its input {n} in place (now {a!r}): the caller still needs "
                        f"it; build a new list" + where)
        if got is None:
            return f"your {name} returned None — did you forget `return`?" + where
        want, mine = library(*copy.deepcopy(args)), _as_list(got, name)
        if mine is None:
            return f"your {name} returned {type(got).__name__} {got!r}: return a list of " + \
                ("ids" if name == "merge" else "(left id, right id) pairs") + where
        if mine != want:
            why = next((m for m, bug in bugs if bug(*copy.deepcopy(args)) == mine), None)
            return f"your {name} gives {mine} where the library's gives {want}" + (f": {why}" if why else "") + where
    if unwritten == len(cases):
        raise NotImplementedError
    if unwritten:
        return f"your {name} raised NotImplementedError on some toy inputs: a branch not written yet"
    return None


def _shown(names, args) -> str:
    return ", ".join(f"{n} {a!r}" for n, a in zip(names, args))


__all__ = ["PARTS", "trainer_difference", "library_merge", "library_train"]
