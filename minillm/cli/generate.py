"""``minillm generate``: continue a prompt, streaming the text to stdout as it is generated.

    python -m minillm generate "To be, or not to be"                       # weights/shakespeare
    python -m minillm generate --model DIR --preset chat --seed 0 "Once upon a time"
    python -m minillm generate -t 0.8 --top-k 50 --top-p 0.9 --max-new-tokens 50 --stop "\\n\\n" "Hi"
    python -m minillm generate --beams 4 --max-new-tokens 20 "The sea is"
    python -m minillm generate --prompt-file chapter1.txt      # or '-': the prompt from stdin
    python -m minillm generate --reference "ROMEO:"             # minillm/model/'s code runs
    python -m minillm generate --show-candidates 5 -t 0.8 --top-p 0.9 "ROMEO:"

stdout gets the prompt (as nanoGPT, llama.cpp and Hugging Face pipelines print it; ``--no-echo``
leaves it out) and then the generated text; stderr gets what was loaded and, at the end, one line
of timings: prompt and generated tokens, tokens/s, and how much of the context window was used.
Sampling stops at the model's end-of-text token (when it has one) or a ``--stop`` string
(backslash escapes work: ``--stop "\\n\\n"`` stops at a blank line). ``--reference`` runs the
readable model (minillm/model/) instead of the engine, and the timings line says so;
``--show-candidates K`` prints, on stderr, each step's K most likely tokens before and after the
sampling settings (cli/candidates.py).
"""
from __future__ import annotations

import sys

from minillm.cli.candidates import check_candidates, table
from minillm.cli.options import (Timings, add_constraint_arguments, add_reference_argument,
                                 add_sampling_arguments, constraint_of, sampling_kwargs, unescape)
from minillm.cli.resolve import help_text, load_model_and_tokenizer

DEFAULT_MODEL = "weights/shakespeare"


def add_arguments(parser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("prompt", nargs="?", help="the text to continue")
    source.add_argument("--prompt-file", metavar="FILE",
                        help="read the prompt from FILE, exactly as it is ('-': standard input); "
                             "for prompts too long for one argument")
    parser.add_argument("--model", default=DEFAULT_MODEL, help=help_text("--model"))
    parser.add_argument("--tokenizer", help="instead of the model's own: " + help_text("--tokenizer"))
    add_sampling_arguments(parser)
    parser.add_argument("--max-new-tokens", type=int, default=100, help="most tokens to generate")
    parser.add_argument("--beams", type=int, help="beam search with this many beams (deterministic)")
    parser.add_argument("--length-penalty", type=float, default=1.0, help="beam search only")
    parser.add_argument("--stop", action="append", default=[],
                        help=r"stop string, backslash escapes allowed (\n, \t, \xHH; repeatable)")
    parser.add_argument("--no-echo", action="store_true", help="do not print the prompt first")
    parser.add_argument("--show-candidates", type=int, metavar="K",
                        help="print each step's K most likely next tokens with their probabilities "
                             "before and after the sampling settings (on stderr)")
    add_reference_argument(parser)
    parser.add_argument("--sliding-window", action="store_true",
                        help="when the context is full, forget all but the newest n_ctx // 2 tokens "
                             "instead of failing")
    add_constraint_arguments(parser)


def run(args) -> int:
    args.prompt = _prompt(args)                          # before the model loads: fail fast
    show = None if args.show_candidates is None else check_candidates(args.show_candidates)
    constraint = constraint_of(args)                     # before the model loads, too
    path, model, tokenizer = load_model_and_tokenizer(args.model, args.tokenizer, args.reference)
    print(f"minillm: {path} ({model.num_parameters():,} parameters, n_ctx {model.config.n_ctx})",
          file=sys.stderr)
    prompt_ids = tokenizer.encode(args.prompt)
    eos = tokenizer.eos_id if tokenizer.eos_id is not None else model.config.eos_id
    if args.beams is not None:
        if show is not None:
            raise ValueError("--show-candidates shows how a token is sampled; --beams does not "
                             "sample (leave out one of them)")
        return _beams(args, model, tokenizer, prompt_ids, eos, constraint)
    from minillm.decoding.generate import generate
    timings = Timings(args.reference)
    steps = generate(model, prompt_ids, args.max_new_tokens, **sampling_kwargs(args),
                     top_n=show or 0, logprobs=show is not None,
                     seed=args.seed, stop_ids=() if eos is None else (eos,),
                     stop_strings=tuple(unescape(s) for s in args.stop), tokenizer=tokenizer,
                     sliding_window=model.config.n_ctx // 2 if args.sliding_window else None,
                     constraint=constraint)
    _echo(args)                      # after generate() checked every flag: errors get a line
    generated = 0
    for step in steps:
        if step.id is not None:
            generated += 1
            timings.token()
        sys.stdout.write(step.text)
        sys.stdout.flush()
        if show is not None and step.id is not None:
            print("\n" + table(step, tokenizer, generated), file=sys.stderr, flush=True)
    sys.stdout.write("\n")
    n_ctx = model.config.n_ctx
    used = min(len(prompt_ids) + generated, n_ctx)     # a sliding window never holds more
    print(timings.line(len(prompt_ids), generated, used, n_ctx), file=sys.stderr)
    return 0


def _prompt(args) -> str:
    """The positional prompt, or the --prompt-file's text (argparse refuses both)."""
    if args.prompt_file is None:
        if args.prompt is None:
            raise ValueError("generate needs a prompt: PROMPT, or --prompt-file FILE ('-' for "
                             "standard input)")
        return args.prompt
    from minillm.cli._input import TEXT_LIMIT, read_text
    return read_text(args.prompt_file, TEXT_LIMIT, "--prompt-file")


def _echo(args) -> None:
    """The prompt on stdout (unless --no-echo), once the options are known to be valid."""
    if not args.no_echo:
        sys.stdout.write(args.prompt)
        sys.stdout.flush()


def _beams(args, model, tokenizer, prompt_ids, eos, constraint=None) -> int:
    sampling = (args.preset, args.temperature, args.top_k, args.top_p, args.min_p, args.seed)
    if any(x is not None for x in sampling) or args.stop or args.sliding_window:
        raise ValueError("--beams is deterministic: it takes no sampling options, --stop or "
                         "--sliding-window (only --max-new-tokens and --length-penalty)")
    from minillm.decoding.beam import beam_search
    timings = Timings(args.reference)
    best = beam_search(model, prompt_ids, beam_size=args.beams, max_new_tokens=args.max_new_tokens,
                       length_penalty=args.length_penalty, stop_ids=() if eos is None else eos,
                       constraint=constraint, tokenizer=tokenizer)[0]
    ends = {eos, *model.config.eos_ids}                    # the model's EOS ids stop beams too
    ids = best.ids[:-1] if best.ids and best.ids[-1] in ends else best.ids
    _echo(args)
    sys.stdout.write(tokenizer.decode(ids) + "\n")
    print(f"minillm: beam score {best.score:.4f} (Σ log p {best.logprob:.4f})", file=sys.stderr)
    used = len(prompt_ids) + len(best.ids)
    print(timings.line(len(prompt_ids), len(best.ids), used, model.config.n_ctx), file=sys.stderr)
    return 0
