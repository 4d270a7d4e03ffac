"""``minillm generate``: continue a prompt, streaming the text to stdout as it is generated.

    python -m minillm generate "To be, or not to be"                       # weights/shakespeare
    python -m minillm generate --model DIR --preset chat --seed 0 "Once upon a time"
    python -m minillm generate -t 0.8 --top-k 50 --top-p 0.9 --max-new-tokens 50 --stop "\\n\\n" "Hi"
    python -m minillm generate --beams 4 --max-new-tokens 20 "The sea is"

Only the generated text goes to stdout (pipe it anywhere); what was loaded goes to stderr.
Sampling stops at the model's end-of-text token (when it has one) or a ``--stop`` string.
"""
from __future__ import annotations

import sys

from minillm.cli.options import add_sampling_arguments, resolve_model_path, sampling_kwargs

DEFAULT_MODEL = "weights/shakespeare"


def add_arguments(parser) -> None:
    parser.add_argument("prompt", help="the text to continue")
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help=f"checkpoint directory, .gguf file or downloaded model name (default: "
                             f"{DEFAULT_MODEL}, looked up in the current directory, then in the repository)")
    parser.add_argument("--tokenizer", help="gpt2 | PATH, for a model that carries no tokenizer")
    add_sampling_arguments(parser)
    parser.add_argument("--max-new-tokens", type=int, default=100, help="default 100")
    parser.add_argument("--beams", type=int, help="beam search with this many beams (deterministic)")
    parser.add_argument("--length-penalty", type=float, default=1.0, help="beam search only")
    parser.add_argument("--stop", action="append", default=[], help="stop string (repeatable)")
    parser.add_argument("--sliding-window", action="store_true",
                        help="when the context is full, forget all but the newest n_ctx // 2 tokens "
                             "instead of failing")


def run(args) -> int:
    from minillm.loading import load_model
    path = resolve_model_path(args.model)
    model, tokenizer = load_model(path)
    if args.tokenizer is not None:
        from minillm.tokenizer.tokenizer import Tokenizer
        tokenizer = Tokenizer.load(args.tokenizer)
    if tokenizer is None:
        raise ValueError(f"{path} carries no tokenizer: pass --tokenizer gpt2 or --tokenizer PATH")
    print(f"minillm: {path} ({model.num_parameters():,} parameters, n_ctx {model.config.n_ctx})",
          file=sys.stderr)
    prompt_ids = tokenizer.encode(args.prompt)
    eos = tokenizer.eos_id if tokenizer.eos_id is not None else model.config.eos_id
    if args.beams is not None:
        return _beams(args, model, tokenizer, prompt_ids, eos)
    from minillm.generate import generate
    steps = generate(model, prompt_ids, args.max_new_tokens, **sampling_kwargs(args),
                     seed=args.seed, stop_ids=() if eos is None else (eos,),
                     stop_strings=tuple(args.stop), tokenizer=tokenizer,
                     sliding_window=model.config.n_ctx // 2 if args.sliding_window else None)
    for step in steps:
        sys.stdout.write(step.text)
        sys.stdout.flush()
    sys.stdout.write("\n")
    return 0


def _beams(args, model, tokenizer, prompt_ids, eos) -> int:
    sampling = (args.preset, args.temperature, args.top_k, args.top_p, args.min_p, args.seed)
    if any(x is not None for x in sampling) or args.stop or args.sliding_window:
        raise ValueError("--beams is deterministic: it takes no sampling options, --stop or "
                         "--sliding-window (only --max-new-tokens and --length-penalty)")
    from minillm.beam import beam_search
    best = beam_search(model, prompt_ids, beam_size=args.beams, max_new_tokens=args.max_new_tokens,
                       length_penalty=args.length_penalty, stop_ids=() if eos is None else eos)[0]
    ends = {eos, *model.config.eos_ids}                    # the model's EOS ids stop beams too
    ids = best.ids[:-1] if best.ids and best.ids[-1] in ends else best.ids
    print(f"minillm: beam score {best.score:.4f} (Σ log p {best.logprob:.4f})", file=sys.stderr)
    sys.stdout.write(tokenizer.decode(ids) + "\n")
    return 0
