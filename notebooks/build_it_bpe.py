"""Your BPE encoder, run on a real tokenizer's merges and graded against it (notebook 14).

The part ``bpe(ids, merges)`` encodes one pre-token: ``ids`` its byte ids, ``merges``
``{(left id, right id): new id}``. The rule (minillm/tokenizer/bpe.py): while some adjacent pair
is in ``merges``, merge the pair learned EARLIEST — the lowest rank, which for these tokenizers is
the smallest new id — everywhere in the list, left to right::

    merges {(l, l): ll, (e, ll): ell}:  [h, e, l, l, o] -> [h, e, ll, o] -> [h, ell, o]

``encode_with(bpe, tok, text)`` cuts ``text`` into the tokenizer's pre-tokens and runs ``bpe`` on
each. ``bpe_difference`` finds the first text where yours and the tokenizer disagree and, when
your output is one of the known wrong rules below on that text, names it. ``probe_texts(tok)`` are
the texts graded: a few where the merge order shows, then the text of every merged token of the
vocabulary — so every merge is applied at least once (a token's text encodes as that token), and
a rule that goes wrong only on some late merges (a missing pair ranked as ``len(merges)``, which
is below the new ids of merges learned after it) cannot pass.
"""
from __future__ import annotations

from minillm.tokenizer.train import merge_word

from build_it_toys import bpe_texts


def merges_of(tok) -> dict:
    """``{(left id, right id): new id}`` of a byte-level BPE tokenizer, in rank order (new ids
    increase with rank: checked, so that "the smallest new id first" is the rank rule)."""
    if tok.merges is None:
        raise ValueError("the BPE part needs a tokenizer with a merge list (tok.merges is None: "
                         "tiktoken's rule, ranks from the vocabulary)")
    ids_of = tok.encoder                                          # {token bytes: id}
    ranked = sorted(tok.merges, key=tok.merges.get)               # (left bytes, right bytes)
    merges = {(ids_of[a], ids_of[b]): ids_of[a + b] for a, b in ranked}
    new = list(merges.values())
    if any(x >= y for x, y in zip(new, new[1:])):
        raise ValueError("this tokenizer's merged ids do not increase with rank")
    return merges


def encode_with(bpe, tok, text: str, merges: dict | None = None) -> list[int]:
    """``text`` -> ids: the tokenizer's pre-tokens, each encoded by ``bpe(byte ids, merges)``."""
    merges = merges_of(tok) if merges is None else merges
    out = []
    for piece in tok.pre_tokenizer.split(text):                             # merges never cross pre-tokens
        ids = [tok.encoder[bytes([b])] for b in piece.encode("utf-8")]
        got = bpe(list(ids), merges)
        if got is None:
            raise ValueError("your bpe returned None — did you forget `return`?")
        out.extend(int(i) for i in got)
    return out


def merge_left_to_right(ids, pair, new_id):
    return list(merge_word(tuple(ids), tuple(pair), new_id))     # the library trainer's step


def merge_right_to_left(ids, pair, new_id):
    return merge_left_to_right(ids[::-1], pair[::-1], new_id)[::-1]


def _bpe(choose, merge=merge_left_to_right):
    def bpe(ids, merges):
        while True:
            pairs = [p for p in zip(ids, ids[1:]) if p in merges]
            if not pairs:
                return ids
            pair = choose(pairs, merges)
            ids = merge(ids, pair, merges[pair])
    return bpe


def _missing_ranked_as_len(ids, merges):
    """The rule with a missing pair's rank written as len(merges) instead of ∞."""
    while len(ids) > 1:
        pair = min(zip(ids, ids[1:]), key=lambda p: merges.get(p, len(merges)))
        if pair not in merges:
            return ids
        ids = merge_left_to_right(ids, pair, merges[pair])
    return ids


lowest_first = _bpe(lambda pairs, m: min(pairs, key=m.get))

WRONG_ORDERS = [
    ("it merges the highest-ranked pair first; BPE merges the pair learned earliest (the lowest "
     "rank, the smallest new id) first", _bpe(lambda pairs, m: max(pairs, key=m.get))),
    ("it merges the first pair found (the leftmost pair in merges); BPE merges the lowest-ranked "
     "pair present, wherever it is", _bpe(lambda pairs, m: pairs[0])),
    ("it merges from right to left (\"aaa\" -> [a, aa]); BPE replaces a pair left to right "
     "(\"aaa\" -> [aa, a])", _bpe(lambda pairs, m: min(pairs, key=m.get), merge_right_to_left)),
    ("a pair missing from merges is ranked as len(merges); merges' values are new ids, not 0, 1, "
     "2, …, so that rank sits below every merge learned after it, the missing pair wins the min and "
     "the loop stops early: rank a missing pair as math.inf", _missing_ranked_as_len),
]


def show_ids(tok, ids) -> str:
    return "[" + ", ".join(f"{i} {tok.decode([i])!r}" for i in ids) + "]"


def probe_texts(tok, prompt=None) -> list[str]:
    """The texts a bpe is graded on: ``prompt`` (when a text), the toys' texts (bpe_texts), then
    the text of every merged token that is whole UTF-8, in rank order."""
    vocab = {i: b for b, i in tok.encoder.items()}
    texts = []
    for new_id in merges_of(tok).values():
        try:
            texts.append(vocab[new_id].decode("utf-8"))
        except UnicodeDecodeError:                    # part of a character: covered inside words
            continue
    return ([prompt] if isinstance(prompt, str) else []) + bpe_texts() + texts


def bpe_difference(bpe, tok, texts) -> str | None:
    """None when ``bpe`` encodes every text as the tokenizer does; else the first text where it
    does not, what it gave, and which wrong order it is (when it is one)."""
    merges = merges_of(tok)
    for text in texts:
        want = tok.encode(text)
        try:
            got = encode_with(bpe, tok, text, merges)
        except NotImplementedError:
            raise
        except Exception as error:
            return f"your bpe raised {type(error).__name__} on {text!r}: {error}"
        if got == want:
            continue
        why = next((m for m, wrong in WRONG_ORDERS if encode_with(wrong, tok, text, merges) == got), None)
        return (f"your bpe encodes {text!r} as {show_ids(tok, got)} where the tokenizer has "
                f"{show_ids(tok, want)}" + (f": {why}" if why else ""))
    return None
