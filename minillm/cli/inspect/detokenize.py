"""`minillm detokenize IDS…`: token ids back to text (the inverse of ``tokenize --ids``).

    $ python -m minillm detokenize --model weights/shakespeare 1198 287 393
    To be or
    $ python -m minillm tokenize --ids "hello" | python -m minillm detokenize      # gpt2 both ways

The ids come as arguments, or on standard input: separated by spaces or commas, or as a JSON
list (``[1198, 287]``). Each must be an integer in [0, vocabulary size). Bytes that do not form
whole UTF-8 characters are shown as U+FFFD.
"""
from __future__ import annotations

import json
import re
import sys

from minillm.cli._input import read_stdin
from minillm.cli.tokenize import DEFAULT_TOKENIZER
from minillm.cli.resolve import help_text

MAX_IDS = 10_000_000


def add_arguments(parser) -> None:
    parser.add_argument("ids", nargs="*", metavar="IDS",
                        help="token ids (default: read standard input: ids or a JSON list)")
    parser.add_argument("--tokenizer", help=f"{help_text('--tokenizer')} (default: "
                                            f"{DEFAULT_TOKENIZER}, or the --model's own)")
    parser.add_argument("--model", help="use this model's tokenizer: " + help_text("--model"))


def parse_ids(text: str) -> list[int]:
    """'1 2,3' or '[1, 2, 3]' -> [1, 2, 3]; anything else is a ValueError saying what was read."""
    text = text.strip()
    if text.startswith("["):
        try:
            values = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            raise ValueError("IDS: the input starts with '[' but is not a JSON list of ids") from None
        if not isinstance(values, list):
            raise ValueError("IDS: expected a JSON list of ids")
    else:
        values = [v for v in re.split(r"[\s,]+", text) if v]
    ids = []
    for v in values:
        if isinstance(v, str) and re.fullmatch(r"[+-]?\d+", v):
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"IDS: {v!r} is not an integer token id")
        ids.append(v)
    if not ids:
        raise ValueError("IDS: no token ids given (as arguments or on standard input)")
    if len(ids) > MAX_IDS:
        raise ValueError(f"IDS: {len(ids):,} ids; at most {MAX_IDS:,}")
    return ids


def run(args) -> int:
    from minillm.cli.tokenize import tokenizer_from
    text = " ".join(args.ids) if args.ids else read_stdin("token ids to detokenize")
    ids = parse_ids(text)
    tok = tokenizer_from(args)
    bad = [i for i in ids if not 0 <= i < tok.vocab_size]
    if bad:
        raise ValueError(f"IDS: {bad[0]} is not a token id of this tokenizer; ids are in "
                         f"[0, {tok.vocab_size - 1:,}]" + (f" ({len(bad)} such ids)" if len(bad) > 1 else ""))
    sys.stdout.write(tok.decode(ids) + "\n")
    return 0
