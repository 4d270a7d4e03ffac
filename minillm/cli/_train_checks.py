"""What ``minillm train`` refuses before it starts, so a run never fails hours in, overwrites
something it did not write, or leaves a half-made OUT behind:

* a model whose parameters, gradients and AdamW state (16 bytes per parameter) exceed the
  machine's memory;
* an OUT that is a file, holds files minillm did not write, or is not empty (unless ``--resume``
  or ``--overwrite``);
* an OUT that is a symbolic link, or would be created through one (io/out_guard.py);
* a symbolic link at any name minillm writes, renames or deletes in OUT (a file, or a checkpoint
  folder ``checkpoint``, ``best`` and their ``.tmp`` / ``.old``): minillm never writes or deletes
  outside OUT, nor through a link it did not make;
* an input (``--data``, ``--eval``, the model or an adapter's base) that is a file the run
  writes or deletes in OUT (``check_inputs``): ``--overwrite`` would destroy it;
* a ``--pattern`` that ``Tokenizer.train`` would refuse (tokenizer/train.py's check_trainable:
  one the loader would refuse, or one that matches the empty string), before OUT is made;
* an ``--lr`` (or ``--min-lr``) that is not a finite positive number (``check_rates``);
* a ``--warmup`` longer than ``--steps`` (the learning rate would never reach ``--lr``);
* a text too short for one training and one validation window of ``--context`` + 1 tokens
  (checked once the tokenizer has encoded it, before anything is written into OUT).

The command itself: train.py. Example::

    check_out(Path("runs/tiny"), resume=False, overwrite=False)   # ValueError if it is not empty
    check_schedule(steps=60, warmup=100)                          # ValueError naming both
"""
from __future__ import annotations

from pathlib import Path

# the files minillm train writes in OUT (besides the checkpoint folders)
WRITTEN = ("tokenizer.json", "tokenizer_config.json", "tokenizer.json.vocab", "config.json",
           "model.safetensors", "train_log.jsonl", "val_sample.txt", "eval.json")


def check_memory(config) -> None:
    """Parameters, gradients and AdamW's m and v: 16 bytes per parameter must fit in memory."""
    from minillm.io.sizes import parameter_count
    from minillm.kv_cache_sizes import memory_bytes
    need, have = 16 * parameter_count(config), memory_bytes()
    if have is not None and need > have:                # (not every system reports it)
        raise ValueError(f"--layers {config.n_layers} --d-model {config.d_model} --vocab-size "
                         f"{config.vocab_size} --context {config.n_ctx} make "
                         f"{parameter_count(config):,} parameters: training needs {need / 1e9:.1f} "
                         f"GB, this machine has {have / 1e9:.1f} GB")


def check_out(out: Path, resume: bool, overwrite: bool) -> None:
    """Refuse to train into a folder holding something else, unless told to."""
    if resume and overwrite:
        raise ValueError("--resume continues the run in --out and --overwrite replaces it: "
                         "choose one")
    from minillm.io.out_guard import refuse_linked_path
    refuse_linked_path(out, "--out")            # (OUT itself, or a folder it would create)
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
    from minillm.io.folder_lock import RUN_LOCK       # (a run's lock: its own, or a killed one's)
    held = sorted(p.name for p in out.iterdir() if not owned_temp(p.name) and p.name != RUN_LOCK)
    if held:
        shown = ", ".join(held[:5]) + (", …" if len(held) > 5 else "")
        raise ValueError(f"--out {out} is not empty ({shown}): choose a new or empty folder, "
                         f"--resume to continue the run in it, or --overwrite to replace the "
                         f"files minillm writes there")


def check_inputs(out: Path, inputs: dict, written: tuple[str, ...]) -> None:
    """No input (``{flag: path}``; the model's adapter bases too) is a file the run writes or
    deletes in OUT (io/out_guard.py): refused before anything is deleted, naming it."""
    from minillm.io.out_guard import refuse_inputs_inside
    model = inputs.get("--model")
    bases = {"--model's base": b for b in adapter_bases(Path(model))} if model else {}
    refuse_inputs_inside(out, {**inputs, **bases}, lambda name: finetune_owned(name, written))


def finetune_owned(name: str, written: tuple[str, ...]) -> bool:
    """Whether a run writes or deletes OUT/name (what ``--overwrite`` clears, the log, the
    checkpoint folders and their spares)."""
    from minillm.io.folder_lock import RUN_LOCK
    from minillm.io.hf.shards import is_weights_name
    from minillm.train.checkpoint import SUFFIXES
    from minillm.train.sft.resume import EARLIER
    return name in (*WRITTEN, *written, *EARLIER, RUN_LOCK) or is_weights_name(name) or \
        name in {f + s for f in ("checkpoint", "best") for s in SUFFIXES}


def adapter_bases(path: Path) -> list[Path]:
    """The base models an adapter folder's chain names (paths only; at most 8 links: a
    longer or broken chain is the loader's to refuse)."""
    from minillm.train.lora.files import adapter_base, is_adapter_folder
    bases = []
    for _ in range(8):
        try:
            if not (path.is_dir() and is_adapter_folder(path)):
                break
            path = adapter_base(path)
        except (OSError, ValueError):
            break
        if not isinstance(path, Path):           # a downloaded model's name: not in OUT
            break
        bases.append(path)
    return bases


def check_pattern(stages) -> None:
    """``--pattern`` stages (names expanded), refused now, in the flag's words, as
    ``Tokenizer.train`` would refuse them once the data is read."""
    if stages is not None:
        from minillm.tokenizer.train import check_trainable
        check_trainable(stages, "--pattern")


def check_schedule(steps: int, warmup: int) -> None:
    """The learning rate climbs for ``warmup`` steps: it must reach its peak within ``steps``."""
    if steps < 1:
        raise ValueError(f"--steps must be a positive integer (optimizer steps), got {steps}")
    if warmup > steps:
        raise ValueError(f"--warmup {warmup} is longer than --steps {steps}: the learning rate "
                         f"would still be climbing when training ends and never reach --lr; "
                         f"pass --warmup {max(1, steps // 10)} (a tenth of the steps) or more "
                         f"--steps")


def check_rates(lr: float, min_lr: float | None = None) -> None:
    """``--lr`` (and train's ``--min-lr``): finite and positive, the final one at most the peak."""
    import math
    if not (math.isfinite(lr) and lr > 0):
        raise ValueError(f"--lr must be a finite number > 0 (e.g. 2e-3), got {lr!r}")
    if min_lr is not None and not (math.isfinite(min_lr) and 0 < min_lr <= lr):
        raise ValueError(f"--min-lr must be a finite number in (0, --lr {lr:g}], got {min_lr!r}")


def check_data(n_train: int, n_val: int, context: int) -> None:
    """Training draws windows of ``context`` + 1 tokens, validation tiles them: both need one."""
    for part, n in (("training", n_train), ("validation", n_val)):
        if n < context + 1:
            raise ValueError(f"the {part} text is {n:,} tokens, fewer than --context {context} "
                             f"+ 1: give a longer --data text, a smaller --context"
                             + (" or a larger --val-fraction" if part == "validation" else ""))
