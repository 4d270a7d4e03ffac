"""`minillm count [FILE ...]`: count the tokens of files (or of standard input).

    $ python -m minillm count --model weights/shakespeare README.md
    tokens  chars  chars/token  % of 128  file
    2914    10251  3.52         2276.6%   README.md

One tab-separated row per file (and a total row for several): tokens, characters, characters per
token (how well the tokenizer compresses this text), and -- with ``--context N``, or ``--model``,
whose n_ctx is the default -- the share of a context window of N tokens the text would fill.
Special-token strings in the text are counted as ordinary text unless --allow-special. The
tokenizer used is named on stderr; reading a terminal, a line on stderr says input is awaited.
"""
from __future__ import annotations


from minillm.cli.resolve import model_context
from minillm.cli._input import TEXT_LIMIT, read_stdin, read_text
from minillm.cli.tokenize import add_tokenizer_arguments, encode, tokenizer_from


def add_arguments(parser) -> None:
    parser.add_argument("files", nargs="*", help="files to count (none or '-': standard input)")
    add_tokenizer_arguments(parser)
    parser.add_argument("--context", type=int, metavar="N",
                        help="context window in tokens, for the %% column (default: the "
                             "--model's n_ctx; none without --model)")


def run(args) -> int:
    tok = tokenizer_from(args)
    context = args.context if args.context is not None else (
        model_context(args.model) if args.model else None)
    if context is not None and context <= 0:
        raise ValueError(f"--context must be a positive number of tokens, got {context}")
    names = args.files or ["-"]
    print("\t".join(["tokens", "chars", "chars/token"]
                    + ([f"% of {context}"] if context else []) + ["file"]))
    total_tokens = total_chars = 0
    for name in names:
        text = _read(name)
        n = len(encode(tok, text, args.allow_special))
        total_tokens, total_chars = total_tokens + n, total_chars + len(text)
        print(_row(n, len(text), context, name))
    if len(names) > 1:
        print(_row(total_tokens, total_chars, context, "total"))
    return 0


def _read(name: str) -> str:
    if name == "-":
        return read_stdin("the text to count (or name FILEs)", TEXT_LIMIT, "surrogateescape")
    return read_text(name, TEXT_LIMIT, errors="surrogateescape")   # (any bytes are counted)


def _row(tokens: int, chars: int, context: int | None, name: str) -> str:
    ratio = f"{chars / tokens:.2f}" if tokens else "-"
    share = [f"{100 * tokens / context:.1f}%"] if context else []
    return "\t".join([str(tokens), str(chars), ratio, *share, name])
