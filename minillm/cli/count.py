"""`minillm count [FILE ...]`: count the tokens of files (or of standard input).

    $ python -m minillm count --tokenizer cl100k README.md
    1234  README.md

Special-token strings in the text are counted as ordinary text unless --allow-special.
"""
from __future__ import annotations

import sys
from pathlib import Path

from minillm.tokenizer import Tokenizer


def add_arguments(parser) -> None:
    parser.add_argument("files", nargs="*", help="files to count (none or '-': standard input)")
    parser.add_argument("--tokenizer", default="gpt2",
                        help="gpt2, r50k, cl100k, o200k, or a path to a tokenizer (default: gpt2)")
    parser.add_argument("--allow-special", action="store_true",
                        help="count special-token strings as one special token each")


def run(args) -> int:
    tok = Tokenizer.load(args.tokenizer)
    total = 0
    names = args.files or ["-"]
    for name in names:
        if name == "-":
            text = sys.stdin.read()
        else:
            path = Path(name)
            if not path.is_file():
                raise FileNotFoundError(f"no such file: {name}")
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
        ids = (tok.encode(text, allowed_special="all") if args.allow_special
               else tok.encode_ordinary(text))
        total += len(ids)
        print(f"{len(ids)}\t{name}")
    if len(names) > 1:
        print(f"{total}\ttotal")
    return 0
