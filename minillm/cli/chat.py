"""``python -m minillm chat --model PATH``: talk to a chat model in its own format, replies streamed.

PATH is a .gguf file, a checkpoint directory with a tokenizer, or the name of a downloaded model
(``smollm2``, see ``python -m minillm download``). Interactive when stdin is a terminal (type
``/help`` for the commands: ``/reset``, ``/context``, ``/exit``; Ctrl-C cuts a reply short,
Ctrl-D leaves). Otherwise every line of stdin is one user turn and each reply is printed on its
own line, so ``echo "Hi" | python -m minillm chat --model smollm2`` works.

After each reply one line goes to stderr: prompt and generated tokens, tokens/s, and how much of
the context window the conversation now fills (old turns are dropped when it would overflow):
the same count ``/context`` gives and the next turn's prompt shows as cached
(``Chat.context_tokens``). A line starting with ``/`` is a command, answered here; an unknown one
gets the list of commands. ``/candidates K`` shows, for each token of the following replies, the K
most likely tokens before and after the sampling settings (``/candidates 0``: off);
``--reference`` runs the readable model (minillm/model/'s code) instead of the engine.

The chat format (ChatML, Llama 3 headers, Gemma turns, Phi-3 tags, Mistral [INST], OLMo 2's
Tülu tags, SmolLM3's metadata block: minillm/chat/formats/) is recognised from the model's chat
template; one line on stderr says which (or that none was recognised and ChatML is used);
``--chat-format NAME`` chooses it. ``--stop STRING`` ends a reply at a string (as generate's);
the penalty flags are generate's (cli/options.py); without ``--seed`` one is drawn and shown on
every timings line, so ``--seed N`` replays the conversation.
"""
from __future__ import annotations

import dataclasses
import sys

from minillm.cli.candidates import MAX_CANDIDATES, table
from minillm.cli.options import (Timings, add_constraint_arguments, add_reference_argument,
                                 add_sampling_arguments, constraint_of, draw_seed, sampling_kwargs,
                                 unescape)
from minillm.decoding.stop_strings import StopText
from minillm.cli.resolve import help_text, load_model_and_tokenizer

HELP = """commands:
  /help     this list
  /context  how much of the context window the conversation fills
  /reset    forget the conversation (the system prompt stays)
  /candidates K  show each token's K most likely alternatives, before and after sampling (0: off)
  /exit     leave (also /quit or Ctrl-D); Ctrl-C cuts a reply short
a line starting with '/' is a command, never sent to the model (start it with a space to send it)"""
COMMANDS = ("/help", "/context", "/reset", "/candidates", "/exit", "/quit")


def add_arguments(parser) -> None:
    parser.add_argument("-m", "--model", required=True, help=help_text("--model"))
    parser.add_argument("--system", default=None,
                        help="system prompt (default: the model template's, for SmolLM2 "
                             "'You are a helpful AI assistant named SmolLM, …')")
    add_sampling_arguments(parser, default_preset="chat")
    parser.add_argument("--stop", action="append", default=[],
                        help=r"end a reply at this string, backslash escapes allowed (\n, \t, "
                             r"\xHH; repeatable); the reply kept is the text before it")
    parser.add_argument("-n", "--max-new-tokens", type=int, default=None,
                        help="longest reply in tokens (default: 256, or half the context window "
                             "if that is smaller)")
    add_reference_argument(parser)
    add_constraint_arguments(parser)
    parser.add_argument("--chat-format", default=None, metavar="NAME",
                        help="the conversation's format (default: the one the model's chat "
                             "template names, else ChatML): " + ", ".join(_format_names()))


def _format_names() -> list[str]:
    from minillm.chat.formats import FORMATS
    return list(FORMATS)


def run(args) -> int:
    from minillm.chat.conversation import Chat
    from minillm.chat.formats import get_format
    if args.chat_format is not None:
        get_format(args.chat_format)                # a wrong name fails before the model loads
    _, model, tokenizer = load_model_and_tokenizer(args.model, reference=args.reference)
    if args.seed is None:                       # drawn, used and shown: --seed replays the chat
        args.seed = draw_seed()
    chat = Chat(model, tokenizer, system=args.system, max_new_tokens=args.max_new_tokens,
                seed=args.seed, chat_format=args.chat_format, constraint=constraint_of(args),
                **sampling_kwargs(args))
    if args.stop:                               # checked as generate's: non-empty strings
        stops = StopText(tuple(unescape(s) for s in args.stop)).stops
        chat.settings = dataclasses.replace(chat.settings, stop_strings=stops)
    print(f"minillm chat: {chat.format_note}", file=sys.stderr)
    interactive = sys.stdin.isatty()
    if interactive:
        print(f"minillm chat: {args.model} ({model.config.n_layers} layers, "
              f"{model.num_parameters() / 1e6:.0f}M parameters, n_ctx {model.config.n_ctx}). "
              f"/help for commands.", file=sys.stderr)
    for line in _turns(interactive):
        command = line.rstrip()
        if command in ("/exit", "/quit"):
            break
        if command.startswith("/"):                 # answered here, never sent to the model
            if command.split()[0] == "/candidates":
                print(_candidates(chat, command), file=sys.stderr)
                continue
            if command == "/reset":
                chat.reset()
            known = command in COMMANDS
            print(_context(chat) if command in ("/reset", "/context") else
                  HELP if known else f"unknown command {command.split()[0]!r}; {HELP}",
                  file=sys.stderr)
            continue
        if not command.strip():
            continue
        _reply(chat, line, interactive, args.reference, args.seed)
    return 0


def _candidates(chat, command: str) -> str:
    """``/candidates K``: turn the tables on (K from 1 to 50) or off (0)."""
    words = command.split()
    k = int(words[1]) if len(words) == 2 and words[1].isdigit() else None
    if k is None or k > MAX_CANDIDATES:
        return f"/candidates K: K a whole number from 0 (off) to {MAX_CANDIDATES}, got {command!r}"
    chat.show_candidates(k)
    return "candidates off" if k == 0 else f"showing the {k} most likely tokens at each step"


def _reply(chat, line: str, interactive: bool, reference: bool = False, seed=None) -> None:
    timings, shown = Timings(reference), chat.settings.top_n > 0
    try:
        for n, step in enumerate(s for s in chat.send_steps(line) if s.id is not None or s.text):
            timings.token()
            print(step.text or "", end="", flush=True)
            if shown and step.id is not None:
                print("\n" + table(step, chat.tokenizer, n + 1), file=sys.stderr, flush=True)
    except KeyboardInterrupt:                   # Ctrl-C cuts the reply short, not the chat
        if not interactive:
            raise
    print(flush=True)
    prompt, cached, generated = chat.last_turn
    n_ctx = chat.model.config.n_ctx
    print(timings.line(prompt, generated, chat.context_tokens(), n_ctx, cached=cached, seed=seed),
          file=sys.stderr)


def _context(chat) -> str:
    n, n_ctx = chat.context_tokens(), chat.model.config.n_ctx
    return (f"context: {n}/{n_ctx} tokens ({100 * n / n_ctx:.0f}%) in {len(chat.messages)} "
            f"messages; a reply may add up to {chat.max_new_tokens}")


def _turns(interactive: bool):
    """User turns: prompted lines from a terminal, or the lines of piped stdin."""
    if not interactive:
        for line in sys.stdin:
            yield line.rstrip("\n")
        return
    while True:
        try:
            yield input("> ")
        except EOFError:
            print(file=sys.stderr)
            return
