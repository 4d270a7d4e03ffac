"""The command line: ``python -m minillm COMMAND …`` (or the ``minillm`` console script).

Each command lives in its own module of this package and is built on the public API, not beside
it. A command module defines ``add_arguments(parser)`` and ``run(args) -> int``; ``COMMANDS`` lists
the modules in the order ``--help`` shows them. ``build_parser`` imports every command module
(each must add its arguments); the slow work — loading a model or a tokenizer file, training —
happens only inside the chosen command's ``run``.
"""
from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
import traceback

# name -> (module, one-line help). A command appears here once its module exists.
COMMANDS: dict[str, tuple[str, str]] = {
    "tokenize": ("tokenize", "show the token boundaries, ids and count of a text"),
    "count": ("count", "count the tokens of files or standard input"),
    "generate": ("generate", "continue a prompt: streamed sampling (presets, stop strings) or beam search"),
    "train": ("train", "train a BPE tokenizer and a GPT-2- or Llama-style model on a text file"),
    "chat": ("chat", "talk to a chat model (ChatML): streamed replies, presets"),
    "finetune": ("finetune", "fine-tune a chat model on conversations (JSONL): LoRA or full"),
    "download": ("download", "download a pretrained model (smollm2) or tokenizer (deepseek-v4) into the local cache"),
    "export": ("export", "write a model and its tokenizer as one GGUF file (llama.cpp, transformers)"),
    "perplexity": ("inspect.perplexity", "the perplexity of a text file (llama-perplexity's chunks, or a sliding window)"),
    "score": ("inspect.score", "each token's log-probability (and the top-K alternatives) as JSON lines"),
    "info": ("inspect.info", "a model's facts: config, parameters, dtypes, vocabulary, chat format, metadata, tensors"),
    "detokenize": ("inspect.detokenize", "token ids back to text"),
    "serve": ("serve.command", "an OpenAI-compatible HTTP server (chat, completions, streaming) on 127.0.0.1"),
    "lens": ("lens.command", "look inside a model: the logit lens as a table, or its top attention heads"),
    "bench": ("speed.bench", "measure which form of each product is fastest on this machine (--plan)"),
}


def build_parser() -> argparse.ArgumentParser:
    from minillm import __version__
    from minillm.cli._threads import HELP as THREADS_HELP
    from minillm.cli.options import DefaultsFormatter
    parser = argparse.ArgumentParser(
        prog="minillm", epilog=THREADS_HELP,
        description="minillm: a GPT-style language model in pure NumPy, written to be read.")
    parser.add_argument("--version", action="version", version=f"minillm {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    parser._commands = {}
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(f"minillm.cli.{module_name}")
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=THREADS_HELP,
                           formatter_class=DefaultsFormatter)
        module.add_arguments(p)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
        p.set_defaults(_run=module.run)
        parser._commands[name] = p      # (main: an unknown flag gets this command's usage)
    return parser


DEBUG_HELP = "show the full traceback of an error instead of one line"
# User-chosen sizes that would only fail deep inside with a MemoryError: checked first.
SIZE_LIMITS = {"beams": 1_000, "max_new_tokens": 1_000_000}


def check_sizes(args) -> None:
    for name, limit in SIZE_LIMITS.items():
        value = getattr(args, name, None)
        if value is not None and value > limit:     # (the command checks the lower bound)
            raise ValueError(f"--{name.replace('_', '-')} must be at most {limit:,}, "
                             f"got {value:,}")


def check_no_null_bytes(args, parser=None) -> None:
    """A null byte ends a C string: no file name holds one (the system's bare "embedded null
    byte" would name neither the file nor the flag). A list (``count FILE…``) is checked item by
    item; the message names the flag, or a positional argument by its name in the usage."""
    shown = {a.dest: a.option_strings[-1] if a.option_strings else (a.metavar or a.dest.upper())
             for a in (parser._actions if parser is not None else ())}
    for name, value in vars(args).items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and "\0" in item:
                flag = shown.get(name, f"--{name.replace('_', '-')}")
                raise ValueError(f"{flag} {item!r} holds a null byte, which no file name (nor "
                                 f"argument) may")


def describe(exc: BaseException) -> str:
    """One line for an error: what went wrong, naming the file or argument, and what is allowed."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f" ({exc.filename})" if exc.filename else ""
        hint = {errno.ENOSPC: "; free some space and try again",
                errno.EACCES: "; check the permissions", errno.EROFS: "; choose a writable folder",
                errno.ENOTDIR: ": a file is where a folder should be",
                errno.EISDIR: ": a folder is where a file should be"}.get(exc.errno, "")
        return f"{exc.strerror}{where}{hint}"
    if isinstance(exc, MemoryError):
        return (f"not enough memory ({exc or 'an allocation failed'}); choose smaller sizes "
                f"(--max-new-tokens, --beams, --batch, --context …)")
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to be read"
    return str(exc) or type(exc).__name__


def refuse_unknown(parser, args, unknown: list[str]) -> None:
    """Unknown arguments: the command's own usage and, for a misspelt flag, the closest ones
    (``--temprature`` -> "did you mean --temperature?"); exit status 2, as argparse's errors."""
    import difflib
    command = parser._commands.get(getattr(args, "command", None), parser)
    known = [o for a in command._actions for o in a.option_strings if o.startswith("--")]
    flags = [u for u in unknown if u.startswith("-")]     # (an extra word is no misspelt flag)
    typed = "--" + flags[0].split("=")[0].lstrip("-").replace("_", "-") if flags else ""
    close = difflib.get_close_matches(typed, known, n=1, cutoff=0.6) if flags else []
    hint = f"; did you mean {close[0]}?" if close else f"; see {command.prog} --help"
    command.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")


def main(argv: list[str] | None = None) -> int:
    if argv is None:                        # run as a program (not called from Python code)
        from minillm.cli._threads import use_one_blas_thread
        use_one_blas_thread()
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        refuse_unknown(parser, args, unknown)           # exits 2
    if getattr(args, "_run", None) is None:
        parser.print_help()
        return 0 if argv is None and len(sys.argv) == 1 else 2
    try:
        check_no_null_bytes(args, parser._commands.get(args.command))
        check_sizes(args)
        return int(args._run(args) or 0)
    except BrokenPipeError:                 # the reader left (`minillm generate … | head`): stop
        # quietly, as Unix tools do; stdout now points at /dev/null, so the final flush is silent
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141                          # 128 + SIGPIPE, what the shell reports for `yes | head`
    except (ValueError, TypeError, OSError, MemoryError, RecursionError) as exc:
        if args.debug:
            traceback.print_exc()
        from minillm.cli.options import flag_message
        print(f"minillm {args.command}: error: {flag_message(describe(exc), args.command)}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
