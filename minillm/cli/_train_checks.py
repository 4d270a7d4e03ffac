"""What ``minillm train`` refuses before it starts, so a run never fails hours in or overwrites
something it did not write:

* a model whose parameters, gradients and AdamW state (16 bytes per parameter) exceed the
  machine's memory;
* an OUT that is a file, holds files minillm did not write, or is not empty (unless ``--resume``
  or ``--overwrite``);
* a symbolic link at any name minillm writes, renames or deletes in OUT (a file, or a checkpoint
  folder ``checkpoint``, ``best`` and their ``.tmp`` / ``.old``): minillm never writes or deletes
  outside OUT, nor through a link it did not make.

The command itself: train.py. Example::

    check_out(Path("runs/tiny"), resume=False, overwrite=False)   # ValueError if it is not empty
"""
from __future__ import annotations

import os
from pathlib import Path

# the files minillm train writes in OUT (besides the checkpoint folders)
WRITTEN = ("tokenizer.json", "tokenizer_config.json", "tokenizer.json.vocab", "config.json",
           "model.safetensors", "train_log.jsonl", "val_sample.txt", "eval.json")


def check_memory(config) -> None:
    """Parameters, gradients and AdamW's m and v: 16 bytes per parameter must fit in memory."""
    from minillm.io.sizes import parameter_count
    need = 16 * parameter_count(config)
    try:
        have = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):       # not every system reports it
        return
    if need > have:
        raise ValueError(f"--layers {config.n_layers} --d-model {config.d_model} --vocab-size "
                         f"{config.vocab_size} --context {config.n_ctx} make "
                         f"{parameter_count(config):,} parameters: training needs {need / 1e9:.1f} "
                         f"GB, this machine has {have / 1e9:.1f} GB")


def check_out(out: Path, resume: bool, overwrite: bool) -> None:
    """Refuse to train into a folder holding something else, unless told to."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder")
    from minillm.io.atomic import refuse_link
    from minillm.train.checkpoint import foreign_files
    for name in WRITTEN:
        refuse_link(out / name)
    if out.is_dir() and (foreign := foreign_files(out)):
        raise ValueError(f"{foreign[0]} was not written by minillm, which would have to replace "
                         f"its folder: move it elsewhere first")
    if resume or overwrite or not out.exists():
        return
    from minillm.io.atomic import owned_temp
    held = sorted(p.name for p in out.iterdir() if not owned_temp(p.name))  # (a killed save's)
    if held:
        shown = ", ".join(held[:5]) + (", …" if len(held) > 5 else "")
        raise ValueError(f"--out {out} is not empty ({shown}): choose a new or empty folder, "
                         f"--resume to continue the run in it, or --overwrite to replace the "
                         f"files minillm writes there")
