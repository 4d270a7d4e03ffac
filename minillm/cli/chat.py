"""``python -m minillm chat --model PATH``: talk to a chat model (ChatML), replies streamed.

PATH is a .gguf file, a checkpoint directory with a tokenizer, or the name of a downloaded model
(``smollm2``, see ``python -m minillm download``). Interactive when stdin is a terminal:
``/reset`` forgets the conversation, Ctrl-C cuts a reply short, ``/exit`` or Ctrl-D leaves.
Otherwise every line of stdin is one user turn and each reply is printed on its own line, so
``echo "Hi" | python -m minillm chat --model smollm2`` works.
"""
from __future__ import annotations

import sys

from minillm.cli.options import add_sampling_arguments, resolve_model_path, sampling_kwargs


def add_arguments(parser) -> None:
    parser.add_argument("--model", required=True,
                        help="a .gguf file, a checkpoint directory, or a downloaded model's name")
    parser.add_argument("--system", default=None,
                        help="system prompt (default: the model template's, for SmolLM2 "
                             "'You are a helpful AI assistant named SmolLM, …')")
    add_sampling_arguments(parser, default_preset="chat")
    parser.add_argument("--max-new-tokens", type=int, default=None,
                        help="longest reply in tokens (default: 256, or half the context window "
                             "if that is smaller)")


def run(args) -> int:
    from minillm.chat import Chat
    from minillm.loading import load_model
    model, tokenizer = load_model(resolve_model_path(args.model))
    if tokenizer is None:
        raise ValueError(f"{args.model} carries no tokenizer; chat needs one")
    chat = Chat(model, tokenizer, system=args.system, max_new_tokens=args.max_new_tokens,
                seed=args.seed, **sampling_kwargs(args))
    interactive = sys.stdin.isatty()
    if interactive:
        print(f"minillm chat: {args.model} ({model.config.n_layers} layers, "
              f"{model.num_parameters() / 1e6:.0f}M parameters). /reset, /exit.", file=sys.stderr)
    for line in _turns(interactive):
        if line in ("/exit", "/quit"):
            break
        if line == "/reset":
            chat.reset()
            continue
        if not line.strip():
            continue
        try:
            for piece in chat.send(line):
                print(piece, end="", flush=True)
        except KeyboardInterrupt:                   # Ctrl-C cuts the reply short, not the chat
            if not interactive:
                raise
        print(flush=True)
    return 0


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
