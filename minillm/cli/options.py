"""What the commands share: ``--help`` with defaults, sampling options, ``--stop`` escapes, and
the timings line of ``generate`` and ``chat``.

Finding a model or a tokenizer by name is ``resolve.py`` (every command uses it).
"""
from __future__ import annotations

import argparse
import re
import time

from minillm.sampling import PRESETS

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}


def unescape(text: str) -> str:
    r"""Backslash escapes as in a Python string, so ``--stop "\n\n"`` means two newlines.

    ``\n \t \r \0 \\ \' \"``, ``\xHH`` and ``\uHHHH``; any other backslash is kept as it is.
    Example: ``unescape(r"a\nb\x41\q") == "a\nbA\\q"``.
    """
    def one(m: re.Match) -> str:
        code = m.group(1)
        if code[0] in "xu" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _ESCAPES.get(code, m.group(0))
    return re.sub(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", one, text, flags=re.S)


class DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` shows every option's default, unless its help already names one or there is
    none to show (None, or False for an on/off flag)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


def add_sampling_arguments(parser, default_preset: str | None = None) -> None:
    parser.add_argument("--preset", default=default_preset, choices=sorted(PRESETS),
                        help="sampling preset")
    parser.add_argument("-t", "--temperature", type=float, help="T >= 0; 0 = greedy (overrides the preset)")
    parser.add_argument("--top-k", type=int, help="keep the k most likely tokens (0 = off)")
    parser.add_argument("--top-p", type=float, help="keep the smallest set with mass >= p (1 = off)")
    parser.add_argument("--min-p", type=float, help="keep tokens with p >= min_p · p_max (0 = off)")
    parser.add_argument("--seed", type=seed, help="random seed: same seed, same text (none "
                        "given: one is drawn and printed on the timings line, to replay the run)")
    add_penalty_arguments(parser)


def add_penalty_arguments(parser) -> None:
    """llama.cpp's three penalty flags, with its formulas (sampling/penalties.py). One difference:
    llama.cpp counts the last 64 tokens (``--repeat-last-n``); minillm counts the whole text, the
    prompt for the repetition penalty (as HF does), the generated tokens for the other two (as
    OpenAI does)."""
    parser.add_argument("--repeat-penalty", type=float, metavar="THETA",
                        help="divide a seen token's positive logit by THETA, multiply a negative "
                             "one (CTRL; > 0, 1 = off; llama.cpp's --repeat-penalty)")
    parser.add_argument("--frequency-penalty", type=float, metavar="A",
                        help="subtract A x (times a token was generated) from its logit (0 = off)")
    parser.add_argument("--presence-penalty", type=float, metavar="A",
                        help="subtract A from the logit of every token generated so far (0 = off)")


def add_reference_argument(parser) -> None:
    parser.add_argument("--reference", action="store_true",
                        help="run the readable model, minillm/model/'s code (load_model(path, "
                             "fast=False)), instead of the engine: slower, the same tokens; edit "
                             "model/attention.py and see the change here")


def seed(text: str) -> int:
    """``--seed``'s type: an integer >= 0 (NumPy's generators take no negative seed)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"seeds are integers >= 0 (e.g. --seed 0), got {text!r}")
    return value


def sampling_kwargs(args) -> dict:
    """The sampling options that were given, as keyword arguments for ``generate`` / ``Chat``:
    with a penalty flag, one ``sampler=`` (the preset and settings, then the penalties)."""
    names = ("preset", "temperature", "top_k", "top_p", "min_p")
    given = {n: getattr(args, n) for n in names if getattr(args, n) is not None}
    penalties = {name: getattr(args, flag) for flag, name in PENALTIES.items()
                 if getattr(args, flag, None) is not None}
    if not penalties:
        return given
    import dataclasses

    from minillm.decoding.generate_args import make_sampler
    return {"sampler": dataclasses.replace(make_sampler(**given), **penalties)}


# the flag's dest -> the Sampler field it sets
PENALTIES = {"repeat_penalty": "repetition_penalty", "frequency_penalty": "frequency_penalty",
             "presence_penalty": "presence_penalty"}
# the library's argument names -> the flags that set them: errors say what the user typed
FLAG_NAMES = {"top_p": "--top-p", "top_k": "--top-k", "min_p": "--min-p",
              "temperature": "--temperature", "repetition_penalty": "--repeat-penalty",
              "frequency_penalty": "--frequency-penalty", "presence_penalty": "--presence-penalty",
              "max_new_tokens": "--max-new-tokens", "beam_size": "--beams",
              "length_penalty": "--length-penalty", "top_n": "--logprobs",
              "stop strings": "--stop strings", "seed": "--seed"}


# names a command's flags set under another name than the sampling ones (--context is n_ctx)
COMMAND_FLAGS = {
    "train": {"batch": "--batch", "n_ctx": "--context", "vocab_size": "--vocab-size",
              "val_fraction": "--val-fraction", "warmup": "--warmup", "steps": "--steps",
              "weight_decay": "--weight-decay", "d_model": "--d-model", "n_heads": "--heads",
              "n_layers": "--layers", "n_kv_heads": "--kv-heads", "eval_every": "--eval-every",
              "log_every": "--log-every", "checkpoint_every": "--checkpoint-every"},
    "finetune": {"rank": "--lora", "epochs": "--epochs", "steps": "--steps", "batch": "--batch",
                 "batch_size": "--batch", "alpha": "--alpha", "warmup": "--warmup",
                 "max_tokens": "--max-tokens", "eval_every": "--eval-every",
                 "checkpoint_every": "--checkpoint-every"},
}


def flag_message(message: str, command: str | None = None) -> str:
    """A library error in the CLI's words: ``top_p must be in (0, 1]`` -> ``--top-p must be …``.
    Only a name that says what is wrong is renamed: ``NAME must``, ``NAME (3) must``, ``NAME and
    --flag must`` and ``divisible by NAME``; ``command`` adds its own names (train's n_ctx is
    ``--context``)."""
    flags = FLAG_NAMES | COMMAND_FLAGS.get(command, {})
    names = "|".join(sorted(flags, key=len, reverse=True))
    subject = rf"(?<![\w\-=])({names})(?=(?: \([^)]*\))?(?: and \S+)? must\b)"
    divisor = rf"(?<=divisible by )({names})(?![\w\-])"
    return re.sub(f"{subject}|{divisor}", lambda m: flags[m.group(1) or m.group(2)], message)


def draw_seed() -> int:
    """A fresh seed for an unseeded run, from the operating system's entropy: printed on the
    timings line, so ``--seed N`` replays the run."""
    import secrets
    return secrets.randbelow(2**31)


class Timings:
    """Times one generation, llama.cpp-style: the prompt (until the first new token: the prefill
    and one sample) and the rest (tokens 2 … n). ``line()`` is what goes to stderr::

        minillm: prompt 12 tokens 0.05 s (240.0 tokens/s) | generated 100 tokens 1.20 s
        (82.5 tokens/s) | context 112/128 (88%)
    """

    def __init__(self, reference: bool = False):
        self.start, self.first = time.perf_counter(), None
        self.reference = reference      # --reference: the line says model/'s code ran

    def token(self) -> None:
        """Call at each new token."""
        if self.first is None:
            self.first = time.perf_counter()

    def seconds(self) -> tuple[float, float]:
        """(prompt, generation) seconds so far, as the timings line counts them."""
        end = time.perf_counter()
        if self.first is None:
            return end - self.start, 0.0
        return self.first - self.start, end - self.first

    def line(self, prompt_tokens: int, generated: int, context_used: int, n_ctx: int,
             cached: int = 0, seed: int | None = None) -> str:
        """The timings line. ``cached``: prompt tokens the KV cache already held (a chat's earlier
        turns): the prompt rate counts only the others. Without any ``token()`` call (beam
        search: every beam finishes together) one time is given for prompt and generation.
        ``seed``: the seed the run drew from, shown last (``| seed 12345``)."""
        end = time.perf_counter()
        if self.first is None:
            total = end - self.start
            prompt = f"prompt {prompt_tokens} tokens"
            gen = f"generated {generated} tokens {total:.2f} s in all ({_rate(generated, total)})"
        else:
            prefill, rest = self.first - self.start, end - self.first
            new = prompt_tokens - cached
            prompt = (f"prompt {prompt_tokens} tokens" + (f" ({cached} cached)" if cached else "")
                      + f" {prefill:.2f} s ({_rate(new, prefill)})")
            # the first new token came with the prompt: the rate is over the other generated - 1
            gen = f"generated {generated} tokens {rest:.2f} s ({_rate(generated - 1, rest)})"
        share = 100 * context_used / n_ctx
        ran = " | ran minillm/model/ (--reference)" if self.reference else ""
        seeded = "" if seed is None else f" | seed {seed}"
        return (f"minillm: {prompt} | {gen} | context {context_used}/{n_ctx} ({share:.0f}%)"
                f"{ran}{seeded}")


def _rate(n: int, seconds: float) -> str:
    return f"{n / seconds:.1f} tokens/s" if n > 0 and seconds > 0 else "- tokens/s"


# --- Structured output (generate, chat): --regex / --json-schema / --choice ---------------------

SCHEMA_LIMIT = 1 << 20            # a JSON schema file larger than 1 MiB is refused


def add_constraint_arguments(parser) -> None:
    """The three ways to constrain the reply, one at a time (argparse refuses two)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--regex", metavar="P", help="the reply fully matches the regex P")
    group.add_argument("--json-schema", metavar="FILE",
                       help="the reply is JSON valid under the schema in FILE ('-': standard input)")
    group.add_argument("--choice", metavar="A,B,C", help="the reply is one of these comma-separated strings")


def constraint_of(args):
    """The ``constraint=`` of the flags given (None without one); errors name the flag."""
    from minillm.decoding.constraints import Choice, JsonSchema, Regex
    try:
        if args.regex is not None:
            return Regex(args.regex)
        if args.json_schema is not None:
            from minillm.cli._input import read_text
            return JsonSchema(read_text(args.json_schema, SCHEMA_LIMIT, "--json-schema"))
        if args.choice is not None:
            return Choice(args.choice.split(","))
    except (ValueError, TypeError) as exc:
        flag = "--regex" if args.regex is not None else "--json-schema" if args.json_schema \
            is not None else "--choice"
        raise type(exc)(f"{flag}: {exc}") from None
    return None
