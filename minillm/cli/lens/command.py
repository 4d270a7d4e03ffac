"""`minillm lens --model M "PROMPT"`: the logit lens as a table, or the top attention heads.

    $ python -m minillm lens --model weights/shakespeare "To be or not to"
    $ python -m minillm lens --model weights/shakespeare --heads --score prefix

The table has a row per layer (0: the embeddings, L: the model's own output) and a column per
prompt position; each cell is the lens's top next token there and its probability.
``--heads`` lists the heads with the highest score: ``prefix`` (prefix-matching, measured on
``--batch`` random sequences of ``--repeat`` tokens seen twice) or ``copying`` (the OV
circuit's eigenvalues). Both are defined in minillm/lens/induction.py.
"""
from __future__ import annotations

import sys

from minillm.cli.inspect._common import check_range
from minillm.cli.resolve import help_text, load_model_and_tokenizer

MAX_POSITIONS = 64          # a table wider than this is unreadable on a terminal
CELL = 12                   # characters a cell shows of its token


def add_arguments(parser) -> None:
    parser.add_argument("prompt", nargs="?", help="the text whose logit lens is shown")
    parser.add_argument("--model", required=True, help=help_text("--model"))
    parser.add_argument("--heads", action="store_true",
                        help="list the top attention heads by --score instead of the lens table")
    parser.add_argument("--score", choices=("prefix", "copying"), default="prefix",
                        help="the head score --heads ranks by")
    parser.add_argument("--top", type=int, default=10, help="how many heads --heads lists")
    parser.add_argument("--repeat", type=int, default=20,
                        help="--score prefix: the length of the random sequence seen twice")
    parser.add_argument("--batch", type=int, default=4,
                        help="--score prefix: how many random sequences to average over")
    parser.add_argument("--seed", type=int, default=0, help="--score prefix: the random tokens' seed")


def check_args(args) -> None:
    if args.heads and args.prompt is not None:
        raise ValueError("--heads scores heads on random repeated tokens: give no PROMPT with it")
    if not args.heads and args.prompt is None:
        raise ValueError("PROMPT is required (or --heads to list the top heads)")
    if not args.heads:
        for flag, value, default in (("--top", args.top, 10), ("--repeat", args.repeat, 20),
                                     ("--batch", args.batch, 4), ("--seed", args.seed, 0)):
            if value != default:
                raise ValueError(f"{flag} only applies with --heads")
    check_range("--top", args.top, 1, 10_000)
    check_range("--repeat", args.repeat, 1, 100_000)
    check_range("--batch", args.batch, 1, 64)
    check_range("--seed", args.seed, 0, 2**63 - 1)


def cell(text: str, p: float) -> str:
    shown = repr(text)[1:-1]
    shown = shown if len(shown) <= CELL else shown[:CELL - 1] + "…"
    return f"{shown:<{CELL}} {p:4.2f}"


def print_table(model, tok, prompt: str) -> None:
    import numpy as np
    from minillm.lens import lens_table
    ids = tok.encode(prompt)
    if not ids:
        raise ValueError("PROMPT encodes to no tokens")
    limit = min(MAX_POSITIONS, model.config.n_ctx)
    if len(ids) > limit:
        raise ValueError(f"PROMPT is {len(ids):,} tokens; the table shows at most {limit} "
                         f"(positions within the model's window, and a terminal's width)")
    top, prob = lens_table(model, np.array(ids))                    # [L + 1, T] each
    width = CELL + 5
    header = "layer " + " ".join(f"{repr(tok.decode([i]))[1:-1][:width]:<{width}}" for i in ids)
    lines = [header]
    for layer in range(top.shape[0]):
        cells = " ".join(cell(tok.decode([int(t)]), float(p)) for t, p in zip(top[layer], prob[layer]))
        lines.append(f"{layer:>5} {cells}")
    sys.stdout.write("\n".join(lines) + "\n")


def print_heads(model, args) -> None:
    import numpy as np
    from minillm.lens import copying_scores, prefix_matching_scores, repeated_random_tokens
    c = model.config
    if args.score == "prefix":
        if 2 * args.repeat > c.n_ctx:
            raise ValueError(f"--repeat {args.repeat} is too long: the sequence seen twice must "
                             f"fit the model's window of {c.n_ctx} (at most {c.n_ctx // 2})")
        ids = repeated_random_tokens(c.vocab_size, args.repeat, batch=args.batch, seed=args.seed)
        scores = prefix_matching_scores(model, ids, args.repeat)    # [L, H]
    else:
        scores = copying_scores(model)                              # [L, H]
    order = np.argsort(-scores, axis=None, kind="stable")[:args.top]
    lines = [f"layer  head  {args.score} score"]
    for flat in order:
        layer, head = divmod(int(flat), c.n_heads)
        lines.append(f"{layer:>5} {head:>5}  {float(scores[layer, head]):.3f}")
    sys.stdout.write("\n".join(lines) + "\n")


def run(args) -> int:
    check_args(args)
    _, model, tok = load_model_and_tokenizer(args.model, reference=True)
    if args.heads:
        print_heads(model, args)
    else:
        print_table(model, tok, args.prompt)
    return 0
