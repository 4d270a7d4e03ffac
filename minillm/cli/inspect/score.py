"""`minillm score --model M TEXT`: each token's log-probability under the model, as JSON lines.

    $ python -m minillm score --model weights/shakespeare --top 2 "To be or not"
    {"i": 0, "id": 1198, "text": "To", "logprob": null, "top": []}
    {"i": 1, "id": 287, "text": " be", "logprob": -2.5133, "top": [{"id": 287, "text": " be", ...}]}

One object per token: its position, id, piece of text and natural-log probability given the
tokens before it (``minillm.token_logprobs``); the first token has none (null: nothing precedes
it, and no BOS is prepended). ``--top K`` adds the K likeliest tokens at that position. A piece
holding only part of a character shows U+FFFD in "text". The text must fit the model's window.
"""
from __future__ import annotations

import json
import math

from minillm.cli.inspect._common import check_range, read_input
from minillm.cli.resolve import help_text, load_model_and_tokenizer


def add_arguments(parser) -> None:
    parser.add_argument("text", nargs="?", metavar="TEXT", help="the text to score")
    parser.add_argument("--file", metavar="F", help="score the text of this file instead "
                                                    "('-': standard input)")
    parser.add_argument("--model", required=True, help=help_text("--model"))
    parser.add_argument("--top", type=int, default=0, metavar="K",
                        help="also list the K likeliest tokens at each position (default: 0, none)")


def run(args) -> int:
    from minillm import token_logprobs
    if (args.text is None) == (args.file is None):
        raise ValueError("give the text to score as TEXT or --file F (one of the two)")
    check_range("--top", args.top, 0, 100)
    if args.file is not None:
        text = read_input(args.file, "--file")
    elif not args.text:
        raise ValueError("TEXT is empty: give some text to score")
    else:
        text = args.text
    _, model, tok = load_model_and_tokenizer(args.model)
    ids = tok.encode_ordinary(text)
    if len(ids) > model.config.n_ctx:
        raise ValueError(f"the text is {len(ids):,} tokens, more than the model's context window "
                         f"of {model.config.n_ctx:,}: score a shorter text (or use perplexity)")
    logprobs, top_ids, top_lp = token_logprobs(model, ids, args.top)

    def piece(i: int) -> str:
        return tok.token_bytes(int(i)).decode("utf-8", errors="replace")

    for i, token in enumerate(ids):
        lp = float(logprobs[i])
        top = [{"id": int(t), "text": piece(t), "logprob": round(float(p), 6)}
               for t, p in zip(top_ids[i], top_lp[i]) if t >= 0]
        print(json.dumps({"i": i, "id": int(token), "text": piece(token),
                          "logprob": None if math.isnan(lp) else round(lp, 6), "top": top},
                         ensure_ascii=False))
    return 0
