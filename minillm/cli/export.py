"""``minillm export MODEL --gguf OUT``: one GGUF file for llama.cpp, transformers or minillm.

    python -m minillm export weights/shakespeare --gguf shakespeare.gguf
    python -m minillm export weights/shakespeare --gguf shakespeare-f16.gguf --dtype f16
    llama-cli -m shakespeare.gguf -p "ROMEO:"          # llama.cpp, if installed

MODEL is anything ``--model`` takes (a checkpoint folder, a .gguf file, a downloaded model's name).
The file holds the weights and the tokenizer; a tokenizer whose pre-tokenisation pattern llama.cpp
has no name for is refused (its ids would silently differ). See ``minillm/io/gguf_export.py``.
Metadata the source carries (chat template, ``general.*``, padding id, ...) is written back unless
dropped: ``--drop-metadata tokenizer.chat_template --drop-metadata 'general.*'``.
"""
from __future__ import annotations

import sys

from minillm.cli.resolve import help_text, load_model_and_tokenizer
from minillm.io.gguf_carry import drop
from minillm.io.gguf_export import DTYPES


def add_arguments(parser) -> None:
    parser.add_argument("model", help=help_text("--model"))
    parser.add_argument("--gguf", required=True, metavar="OUT", help="the GGUF file to write")
    parser.add_argument("--dtype", default="f32", choices=sorted(DTYPES),
                        help="type of the weight matrices (norms and biases stay f32)")
    parser.add_argument("--tokenizer", help="instead of the model's own: " + help_text("--tokenizer"))
    parser.add_argument("--drop-metadata", action="append", default=[], metavar="KEY",
                        help="a metadata key the source carries not to write back (repeatable; "
                             "'general.*' drops a prefix)")


def run(args) -> int:
    path, model, tokenizer = load_model_and_tokenizer(args.model, args.tokenizer)
    drop(model, tokenizer, args.drop_metadata)
    out = model.save_gguf(args.gguf, tokenizer, dtype=args.dtype)
    size = out.stat().st_size / 1e6
    print(f"minillm: {path} -> {out} ({args.dtype}, {size:.1f} MB)", file=sys.stderr)
    print(out)
    return 0
