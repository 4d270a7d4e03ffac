"""`minillm tokenize TEXT`: show where the token boundaries fall.

    $ python -m minillm tokenize "海水会吸收较多红光"
    <e6 b5> | <b7> | <e6 b0> | <b4> | ...
    ids: [38184, 115, 36365, 112, ...]
    20 tokens

    $ python -m minillm tokenize --model smollm2 "海水会吸收较多红光"     # a model's own tokenizer
    $ python -m minillm tokenize --ids "hello world"        # 31373 995   (--json: ids and pieces)

Parts of a character (a token holding only some of its UTF-8 bytes) are shown as hex bytes. The
tokenizer used is named on stderr (``tokenizer: gpt2 (default)``).
"""
from __future__ import annotations

import json
import sys

from minillm.cli._input import read_stdin
from minillm.cli.resolve import help_text, load_tokenizer
from minillm.tokenizer import render_token

DEFAULT_TOKENIZER = "gpt2"


def add_tokenizer_arguments(parser) -> None:
    """--tokenizer / --model, as ``generate`` takes them (shared with ``count``)."""
    parser.add_argument("--tokenizer", help=f"{help_text('--tokenizer')} (default: "
                                            f"{DEFAULT_TOKENIZER}, or the --model's own)")
    parser.add_argument("--model", help="use this model's tokenizer: " + help_text("--model"))
    parser.add_argument("--allow-special", action="store_true",
                        help="encode special-token strings (<|endoftext|>, ...) as special tokens "
                             "(default: as ordinary text)")


def tokenizer_from(args):
    """The tokenizer the options name: --tokenizer, else --model's, else gpt2; which one is said
    on stderr ("tokenizer: gpt2 (default)"), so a count is never read against the wrong one."""
    if args.tokenizer is None and args.model is not None:
        name, how, tok = args.model, "the --model's", load_tokenizer(args.model, "--model")
    else:
        name, how = args.tokenizer or DEFAULT_TOKENIZER, "--tokenizer" if args.tokenizer else "default"
        tok = load_tokenizer(name)
    print(f"tokenizer: {name} ({how})", file=sys.stderr)
    return tok


def encode(tok, text: str, allow_special: bool) -> list[int]:
    return tok.encode(text, allowed_special="all") if allow_special else tok.encode_ordinary(text)


def add_arguments(parser) -> None:
    parser.add_argument("text", nargs="?", help="the text (default: read standard input)")
    add_tokenizer_arguments(parser)
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--ids", action="store_true",
                       help="print only the ids, space-separated (what `detokenize` reads)")
    shown.add_argument("--json", action="store_true",
                       help='print {"ids": [...], "pieces": [...]} as one JSON object')


def run(args) -> int:
    tok = tokenizer_from(args)
    text = args.text if args.text is not None else read_stdin("the text to tokenize")
    ids = encode(tok, text, args.allow_special)
    if args.ids:
        print(" ".join(map(str, ids)))
        return 0
    if args.json:   # (a piece holding part of a character shows U+FFFD, as in `score`)
        pieces = [tok.token_bytes(i).decode("utf-8", errors="replace") for i in ids]
        print(json.dumps({"ids": ids, "pieces": pieces}, ensure_ascii=False))
        return 0
    print(" | ".join(render_token(tok.token_bytes(i)) for i in ids))
    print(f"ids: {ids}")
    print(f"{len(ids)} tokens")
    return 0
