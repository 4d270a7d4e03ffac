"""`minillm tokenize TEXT`: show where the token boundaries fall.

    $ python -m minillm tokenize "海水会吸收较多红光"
    <e6 b5> | <b7> | 水 | ...
    ids: [38184, 115, 36365, ...]
    20 tokens

Parts of a character (a token holding only some of its UTF-8 bytes) are shown as hex bytes.
"""
from __future__ import annotations

import sys

from minillm.tokenizer import Tokenizer, render_token


def add_arguments(parser) -> None:
    parser.add_argument("text", nargs="?", help="the text (default: read standard input)")
    parser.add_argument("--tokenizer", default="gpt2",
                        help="gpt2, r50k, cl100k, o200k, or a path to a tokenizer file/directory "
                             "(default: gpt2)")
    parser.add_argument("--allow-special", action="store_true",
                        help="encode special-token strings (<|endoftext|>, ...) as special tokens "
                             "(default: as ordinary text)")


def run(args) -> int:
    text = args.text if args.text is not None else sys.stdin.read()
    tok = Tokenizer.load(args.tokenizer)
    ids = (tok.encode(text, allowed_special="all") if args.allow_special
           else tok.encode_ordinary(text))
    print(" | ".join(render_token(tok.token_bytes(i)) for i in ids))
    print(f"ids: {ids}")
    print(f"{len(ids)} tokens")
    return 0
