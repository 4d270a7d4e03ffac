"""`minillm perplexity --model M FILE`: the perplexity of a text, as llama-perplexity computes it.

    $ python -m minillm perplexity --model weights/shakespeare --ctx 128 play.txt
    [1]45.7960,[2]45.6626,[3]43.8806,...
    Final estimate: PPL = 35.4387 +/- 0.99289

The text is tokenized once and cut into chunks of --ctx tokens, each scored on its second half
(minillm.perplexity: the rule and where it differs from llama.cpp). ``--stride S`` scores a
sliding window instead (every token once, with at least ctx − S tokens of context). The running
estimate after each chunk goes to stdout as llama.cpp prints it; progress goes to stderr.
"""
from __future__ import annotations

import sys
import time

from minillm.cli.inspect._common import check_range, read_input
from minillm.cli.resolve import help_text, load_model_and_tokenizer

DEFAULT_CTX = 512           # llama-perplexity's default n_ctx (or the model's window, if smaller)


def add_arguments(parser) -> None:
    parser.add_argument("file", metavar="FILE", help="the text to score (UTF-8; '-': standard input)")
    parser.add_argument("--model", required=True, help=help_text("--model"))
    parser.add_argument("--ctx", type=int, metavar="N",
                        help=f"tokens per chunk (default: {DEFAULT_CTX}, or the model's context "
                             f"window if smaller)")
    parser.add_argument("--stride", type=int, metavar="S",
                        help="sliding window: a window every S tokens, each scoring only its new "
                             "tokens (1 <= S <= --ctx; default: llama.cpp's chunks)")
    parser.add_argument("--batch", type=int, default=1, metavar="B",
                        help="chunks per forward pass (more: faster, more memory)")


def run(args) -> int:
    from minillm import perplexity
    check_range("--ctx", args.ctx, 3 if args.stride is None else 2,
                why=" (a chunk scores its second half, minus its last token)"
                if args.stride is None else "")
    check_range("--stride", args.stride, 1, args.ctx)
    check_range("--batch", args.batch, 1, 1024)
    text = read_input(args.file, "FILE")
    _, model, tok = load_model_and_tokenizer(args.model)
    n_ctx = model.config.n_ctx
    ctx = args.ctx if args.ctx is not None else min(DEFAULT_CTX, n_ctx)
    check_range("--ctx", ctx, 2, n_ctx, f" (the model's context window is {n_ctx:,})")
    check_range("--stride", args.stride, 1, ctx, f" (the --ctx of {ctx:,})")
    ids = tok.encode_ordinary(text)
    need = 2 if args.stride is not None else 2 * ctx
    if len(ids) < need:
        raise ValueError(f"FILE {args.file} is {len(ids):,} tokens; --ctx {ctx:,} needs at least "
                         f"{need:,}: give a longer text or a smaller --ctx")
    print(f"perplexity: {len(ids):,} tokens, --ctx {ctx:,}"
          + (f", --stride {args.stride:,}" if args.stride else ", second half of each chunk"),
          file=sys.stderr)
    start, shown = time.perf_counter(), [0]

    def progress(done: int, total: int, running: list) -> None:
        for k in range(shown[0], done):             # the running estimate, as llama.cpp prints it
            print(f"[{k + 1}]{running[k]:.4f},", end="", flush=True)
        shown[0] = done
        elapsed = time.perf_counter() - start
        print(f"\rperplexity: chunk {done}/{total}, {elapsed:.1f} s, about "
              f"{elapsed / done * (total - done):.0f} s left ", end="" if done < total else "\n",
              file=sys.stderr, flush=True)

    result = perplexity(model, ids, ctx, stride=args.stride, batch=args.batch, progress=progress)
    print()
    print(f"Final estimate: PPL = {result.ppl:.4f} +/- {result.error:.5f}")
    return 0
