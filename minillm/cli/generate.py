"""``minillm generate``: continue a prompt, streaming the text to stdout as it is generated.

    python -m minillm generate "To be, or not to be"                       # weights/shakespeare
    python -m minillm generate --model DIR --preset chat --seed 0 "Once upon a time"
    python -m minillm generate -t 0.8 --top-k 50 --top-p 0.9 --max-new-tokens 50 --stop "\\n\\n" "Hi"
    python -m minillm generate --beams 4 --max-new-tokens 20 "The sea is"
    python -m minillm generate --prompt-file chapter1.txt      # or '-': the prompt from stdin
    python -m minillm generate --reference "ROMEO:"             # minillm/model/'s code runs
    python -m minillm generate --show-candidates 5 -t 0.8 --top-p 0.9 "ROMEO:"
    python -m minillm generate -m weights/shakespeare -n 20 --repeat-penalty 1.1 -p "ROMEO:"
    python -m minillm generate --json --logprobs 5 "ROMEO:"     # one JSON object per token
    python -m minillm generate --prompts prompts.jsonl -t 0      # many prompts, batched (cli/machine/)

stdout gets the prompt (as nanoGPT, llama.cpp and Hugging Face pipelines print it; ``--no-echo``
leaves it out) and then the generated text; stderr gets what was loaded and, at the end, one line
of timings: prompt and generated tokens, tokens/s, and how much of the context window was used.
Sampling stops at the model's end-of-text token (when it has one) or a ``--stop`` string
(backslash escapes work: ``--stop "\\n\\n"`` stops at a blank line). ``--reference`` runs the
readable model (minillm/model/) instead of the engine, and the timings line says so;
``--show-candidates K`` prints, on stderr, each step's K most likely tokens before and after the
sampling settings (cli/candidates.py). ``--json`` / ``--json-final`` / ``--logprobs K`` and
``--prompts FILE.jsonl`` write JSON lines instead of the text (cli/machine/). Without ``--seed``
a seed is drawn and shown on the timings line (``| seed 12345``): ``--seed 12345`` replays it.
"""
from __future__ import annotations

import sys

from minillm.cli.candidates import check_candidates, table
from minillm.cli.machine.flags import check_output_flags
from minillm.cli.machine.json_steps import dumps, final_object, token_object
from minillm.cli.options import (Timings, add_constraint_arguments, add_reference_argument,
                                 add_sampling_arguments, constraint_of, draw_seed, sampling_kwargs,
                                 unescape)
from minillm.cli.resolve import help_text, load_model_and_tokenizer

DEFAULT_MODEL = "weights/shakespeare"


def add_arguments(parser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("prompt", nargs="?", help="the text to continue")
    source.add_argument("-p", "--prompt", dest="prompt_option", metavar="PROMPT",
                        help="the text to continue, as a flag (llama.cpp's -p)")
    source.add_argument("--prompt-file", metavar="FILE",
                        help="read the prompt from FILE, exactly as it is ('-': standard input); "
                             "for prompts too long for one argument")
    source.add_argument("--prompts", metavar="FILE.jsonl",
                        help='many prompts, one {"prompt": "…"} a line (optionally with its own '
                             '"max_new_tokens"), batched; one JSON result a line, in order')
    parser.add_argument("-m", "--model", default=DEFAULT_MODEL, help=help_text("--model"))
    parser.add_argument("--tokenizer", help="instead of the model's own: " + help_text("--tokenizer"))
    add_sampling_arguments(parser)
    parser.add_argument("-n", "--max-new-tokens", type=int, default=100, help="most tokens to generate")
    parser.add_argument("--beams", type=int, help="beam search with this many beams (deterministic)")
    parser.add_argument("--length-penalty", type=float, default=1.0, help="beam search only")
    parser.add_argument("--stop", action="append", default=[],
                        help=r"stop string, backslash escapes allowed (\n, \t, \xHH; repeatable)")
    parser.add_argument("--no-echo", action="store_true", help="do not print the prompt first")
    parser.add_argument("--show-candidates", type=int, metavar="K",
                        help="print each step's K most likely next tokens with their probabilities "
                             "before and after the sampling settings (on stderr)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true",
                        help="stdout: one JSON object per token (id, text, logprob, top), no echo")
    output.add_argument("--json-final", action="store_true",
                        help="stdout: one JSON object at the end (text, ids, finish_reason, "
                             "timings, seed)")
    parser.add_argument("--logprobs", type=int, metavar="K",
                        help="with --json/--json-final: each token's K most likely alternatives "
                             "and their log-probabilities")
    add_reference_argument(parser)
    parser.add_argument("--sliding-window", action="store_true",
                        help="when the context is full, forget all but the newest n_ctx // 2 tokens "
                             "instead of failing")
    add_constraint_arguments(parser)


def run(args) -> int:
    if args.prompts is None:
        args.prompt = _prompt(args)                      # before the model loads: fail fast
    show = None if args.show_candidates is None else check_candidates(args.show_candidates)
    check_output_flags(args, show)
    constraint = constraint_of(args)                     # before the model loads, too
    if constraint is not None and args.prompts is not None:
        raise ValueError("--prompts takes no --regex, --json-schema or --choice (one constraint "
                         "per run: give the prompt itself)")
    path, model, tokenizer = load_model_and_tokenizer(args.model, args.tokenizer, args.reference)
    print(f"minillm: {path} ({model.num_parameters():,} parameters, n_ctx {model.config.n_ctx})",
          file=sys.stderr)
    eos = tokenizer.eos_id if tokenizer.eos_id is not None else model.config.eos_id
    if args.prompts is not None:
        return _prompts(args, model, tokenizer, eos)
    prompt_ids = tokenizer.encode(args.prompt)
    if args.beams is not None:
        if show is not None:
            raise ValueError("--show-candidates shows how a token is sampled; --beams does not "
                             "sample (leave out one of them)")
        return _beams(args, model, tokenizer, prompt_ids, eos, constraint)
    from minillm.decoding.generate import generate
    if args.seed is None:                            # drawn, used and shown: --seed replays it
        args.seed = draw_seed()
    timings, as_json = Timings(args.reference), args.json or args.json_final
    top_n = show or args.logprobs or 0
    steps = generate(model, prompt_ids, args.max_new_tokens, **sampling_kwargs(args),
                     top_n=top_n, logprobs=show is not None or as_json,
                     seed=args.seed, stop_ids=() if eos is None else (eos,),
                     stop_strings=tuple(unescape(s) for s in args.stop), tokenizer=tokenizer,
                     sliding_window=model.config.n_ctx // 2 if args.sliding_window else None,
                     constraint=constraint)
    if not as_json:
        _echo(args)                  # after generate() checked every flag: errors get a line
    ids, pieces, tokens, code = [], [], [], 0
    try:
        for step in steps:
            if step.id is not None:
                ids.append(step.id)
                timings.token()
            if as_json:
                pieces.append(step.text)
                if step.id is not None or step.text:
                    tokens.append(token_object(step, tokenizer))
                    if args.json:
                        print(dumps(tokens[-1]), flush=True)
                continue
            sys.stdout.write(step.text)
            sys.stdout.flush()
            if show is not None and step.id is not None:
                print("\n" + table(step, tokenizer, len(ids)), file=sys.stderr, flush=True)
    except KeyboardInterrupt:       # Ctrl-C: the text so far ends its line, the timings follow
        code = 130                  # (128 + SIGINT, as the shell reports it)
    if args.json_final:
        print(dumps(final_object("".join(pieces), ids, args.max_new_tokens, len(prompt_ids),
                                 timings.seconds(), args.seed,
                                 tokens if args.logprobs else None)))
    elif not args.json:
        sys.stdout.write("\n")
    sys.stdout.flush()
    if code:
        print(f"minillm: interrupted after {len(ids)} tokens", file=sys.stderr)
    n_ctx = model.config.n_ctx
    used = min(len(prompt_ids) + len(ids), n_ctx)     # a sliding window never holds more
    print(timings.line(len(prompt_ids), len(ids), used, n_ctx, seed=args.seed), file=sys.stderr)
    return code


def _prompts(args, model, tokenizer, eos) -> int:
    """``--prompts FILE.jsonl``: every line's result on stdout, in order (cli/machine/)."""
    from minillm.cli.machine.prompts_file import read_prompts, run_prompts
    rows = read_prompts(args.prompts, args.max_new_tokens)
    if args.seed is None:
        args.seed = draw_seed()
    run_prompts(rows, model, tokenizer, args.max_new_tokens, lambda line: print(line, flush=True),
                seed=args.seed, stop_ids=() if eos is None else (eos,), **sampling_kwargs(args))
    print(f"minillm: {len(rows)} prompts | seed {args.seed}", file=sys.stderr)
    return 0


def _prompt(args) -> str:
    """The positional prompt, -p's, or the --prompt-file's text (argparse refuses two)."""
    if args.prompt_option is not None:
        args.prompt = args.prompt_option
    if args.prompt_file is None:
        if args.prompt is None:
            raise ValueError("generate needs a prompt: PROMPT, or --prompt-file FILE ('-' for "
                             "standard input), -p PROMPT, or --prompts FILE.jsonl")
        text = args.prompt
    else:
        from minillm.cli._input import TEXT_LIMIT, read_text
        text = read_text(args.prompt_file, TEXT_LIMIT, "--prompt-file")
    if not text:
        raise ValueError("the prompt is empty: give some text with PROMPT or -p PROMPT, or a "
                         "non-empty --prompt-file")
    return text


def _echo(args) -> None:
    """The prompt on stdout (unless --no-echo), once the options are known to be valid."""
    if not args.no_echo:
        sys.stdout.write(args.prompt)
        sys.stdout.flush()


def _beams(args, model, tokenizer, prompt_ids, eos, constraint=None) -> int:
    sampling = (args.preset, args.temperature, args.top_k, args.top_p, args.min_p, args.seed,
                args.repeat_penalty, args.frequency_penalty, args.presence_penalty)
    if any(x is not None for x in sampling) or args.stop or args.sliding_window:
        raise ValueError("--beams is deterministic: it takes no sampling options, --stop or "
                         "--sliding-window (only --max-new-tokens and --length-penalty)")
    from minillm.decoding.beam import beam_search
    timings = Timings(args.reference)
    try:
        best = beam_search(model, prompt_ids, beam_size=args.beams,
                           max_new_tokens=args.max_new_tokens, length_penalty=args.length_penalty,
                           stop_ids=() if eos is None else eos,
                           constraint=constraint, tokenizer=tokenizer)[0]
    except KeyboardInterrupt:      # nothing printed yet: beams are compared only at the end
        print("minillm: interrupted (beam search prints its answer once it has finished)",
              file=sys.stderr)
        return 130
    ends = {eos, *model.config.eos_ids}                    # the model's EOS ids stop beams too
    ids = best.ids[:-1] if best.ids and best.ids[-1] in ends else best.ids
    _echo(args)
    sys.stdout.write(tokenizer.decode(ids) + "\n")
    print(f"minillm: beam score {best.score:.4f} (Σ log p {best.logprob:.4f})", file=sys.stderr)
    used = len(prompt_ids) + len(best.ids)
    print(timings.line(len(prompt_ids), len(best.ids), used, model.config.n_ctx), file=sys.stderr)
    return 0
