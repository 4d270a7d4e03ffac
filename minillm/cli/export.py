"""``minillm export MODEL --gguf OUT``: one GGUF file for llama.cpp, transformers or minillm.

    python -m minillm export weights/shakespeare --gguf shakespeare.gguf
    python -m minillm export weights/shakespeare --gguf shakespeare-f16.gguf --dtype f16
    llama-cli -m shakespeare.gguf -p "ROMEO:"          # llama.cpp, if installed

MODEL is anything ``--model`` takes (a checkpoint folder, a .gguf file, a downloaded model's name).
The file holds the weights and the tokenizer; a tokenizer whose pre-tokenisation pattern llama.cpp
has no name for is refused (its ids would silently differ). See ``minillm/io/gguf/export.py``.

OUT is written whole or not at all (a temp file renamed into place: ``io/atomic.py``). It is
refused when it is one of the export's inputs (the source .gguf, or any file of the model folder,
compared by identity: a link or a hard link to one counts), when it is a link, and, unless
``--overwrite``, when it exists.
Metadata the source carries (chat template, ``general.*``, padding id, ...) is written back unless
dropped: ``--drop-metadata tokenizer.chat_template --drop-metadata 'general.*'``.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from minillm.cli.resolve import help_text, load_model_and_tokenizer
from minillm.io.gguf.carry import drop
from minillm.io.gguf.export import DTYPES


def add_arguments(parser) -> None:
    parser.add_argument("model", help=help_text("--model"))
    parser.add_argument("--gguf", required=True, metavar="OUT", help="the GGUF file to write")
    parser.add_argument("--dtype", default="f32", choices=sorted(DTYPES),
                        help="type of the weight matrices (norms and biases stay f32)")
    parser.add_argument("--tokenizer", help="instead of the model's own: " + help_text("--tokenizer"))
    parser.add_argument("--overwrite", action="store_true",
                        help="replace OUT if it exists (never an input of the export, never a link)")
    parser.add_argument("--drop-metadata", action="append", default=[], metavar="KEY",
                        help="a metadata key the source carries not to write back (repeatable; "
                             "'general.*' drops a prefix)")


def run(args) -> int:
    check_target(Path(args.gguf), inputs(args), args.overwrite)
    path, model, tokenizer = load_model_and_tokenizer(args.model, args.tokenizer)
    drop(model, tokenizer, args.drop_metadata)
    out = model.save_gguf(args.gguf, tokenizer, dtype=args.dtype)
    size = out.stat().st_size / 1e6
    print(f"minillm: {path} -> {out} ({args.dtype}, {size:.1f} MB)", file=sys.stderr)
    from minillm.io.gguf.gemma import llama_cpp_notes
    for note in llama_cpp_notes(model.config):       # (Gemma layer patterns llama.cpp fixes)
        print(f"minillm: note: {note}", file=sys.stderr)
    print(out)
    return 0


def inputs(args) -> list[Path]:
    """The files the export reads: the source .gguf, or every file of the model folder except
    .gguf files (config, weights, tokenizer and its side files); the same for ``--tokenizer``."""
    from minillm.cli.resolve import resolve_model_path
    from minillm.tokenizer.formats.locate import locate
    found = []
    for name in filter(None, (args.model, args.tokenizer)):
        try:
            path = Path(name) if Path(name).exists() else \
                resolve_model_path(name) if name == args.model else locate(name)
        except (FileNotFoundError, ValueError):
            continue                 # (the loader names what is wrong with it)
        if path.is_dir():
            found += [p for p in path.iterdir() if p.is_file() and p.suffix != ".gguf"]
        else:
            found.append(path)
    return found


def check_target(out: Path, sources: list[Path], overwrite: bool) -> None:
    """Refuse an OUT that is an input, a link, a folder, or (without ``--overwrite``) a file."""
    from minillm.io.atomic import refuse_link
    refuse_link(out)
    if not out.parent.is_dir():          # said now: not as the temporary file the write makes
        raise FileNotFoundError(f"--gguf {out}: the folder {out.parent} does not exist; create "
                                f"it first or choose a path in an existing folder")
    if not out.exists():
        return
    for source in sources:
        if os.path.samefile(out, source):
            raise ValueError(f"--gguf {out} is {source}, an input of this export: writing it "
                             f"would destroy the model being read; choose another path")
    if out.is_dir():
        raise ValueError(f"--gguf {out} is a folder: give the path of the file to write")
    if not overwrite:
        raise ValueError(f"--gguf {out} exists: pass --overwrite to replace it, or choose "
                         f"another path")
