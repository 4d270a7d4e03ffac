"""A tiktoken vocabulary (ranks, no merge list) -> the merge list that gives the same ids.

tiktoken merges by the *ranks* rule (bpe.py): a pair merges when its concatenation is a token,
the lowest rank first. GGUF, Hugging Face's tokenizer.json and llama.cpp store a merge list (the
*pairs* rule). The known construction turns ranks into merges: take the tokens in rank order;
for each token of two or more bytes, run BPE over its own bytes with only the ranks below its
own. Two parts are left, ``(left, right)``: the merge that makes the token, at the token's rank::

    b" the" (rank 262 in GPT-2), ranks < 262 only:
        [" ", "t", "h", "e"] -> [" t", "h", "e"] -> [" t", "he"]          -> merge (" t", "he")

Why the ids stay the same: whenever the ranks rule merges two parts into a token, they are the
two parts BPE makes of that token's bytes with the lower ranks, i.e. the pair listed here. It also
makes tiktoken's whole-piece look-up redundant: BPE over a token's bytes ends at that token. Both
claims are checked, not assumed: the derivation refuses a token that its lower ranks cannot
build, and tests/tokenizer/test_rank_merges.py compares the ids on corpora (llama.cpp and
`tokenizers` on an exported file: scripts/check_gguf/export.py).

    >>> merges_from_ranks({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3})
    {(b'a', b'b'): 2, (b'ab', b'b'): 3}

Cost: one small BPE per token (cl100k: 100k tokens in a few seconds); done on demand, when a
tokenizer without merges is exported, never at import.
"""
from __future__ import annotations


def lower_rank_parts(token: bytes, rank: int, encoder: dict[bytes, int]) -> list[bytes]:
    """BPE over ``token``'s bytes with the ranks rule, using only ranks below ``rank``."""
    parts = [token[i:i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best, at = rank, -1                          # a merge must rank below the token itself
        for i in range(len(parts) - 1):
            r = encoder.get(parts[i] + parts[i + 1], rank)
            if r < best:                             # strict: the leftmost of equal ranks
                best, at = r, i
        if at < 0:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    return parts


def merges_from_ranks(encoder: dict[bytes, int]) -> dict[tuple[bytes, bytes], int]:
    """{token bytes: rank} -> {(left, right): rank}, one merge per token of two or more bytes, in
    rank order. A ValueError names a token its lower ranks cannot build from two parts."""
    merges = {}
    for token, rank in sorted(encoder.items(), key=lambda kv: kv[1]):
        if len(token) < 2:
            continue
        parts = lower_rank_parts(token, rank, encoder)
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) is not made by one merge of lower-"
                             f"ranked tokens (BPE over its bytes gives {len(parts)} parts): "
                             f"no merge list gives this vocabulary's ids")
        merges[(parts[0], parts[1])] = rank
    return merges


def with_derived_merges(tok):
    """``tok`` (a ranks-rule Tokenizer) under the pairs rule with ``merges_from_ranks``: the same
    ids, so it can be written where a merge list is required (GGUF). The whole-piece look-up is
    dropped, redundant once every token is built by its merge (see the module docstring)."""
    from .files import with_metadata
    from .tokenizer import Tokenizer
    return with_metadata(Tokenizer(
        tok._encoder, merges_from_ranks(tok._encoder), tok.pattern, tok.special_tokens,
        whole_piece_lookup=False, normalizer=tok.normalizer, bos_id=tok.bos_id, eos_id=tok.eos_id,
        unk_id=tok.unk_id, post_processor=tok.post_processor, user_defined=tok.user_defined),
        tok.gguf_metadata)
