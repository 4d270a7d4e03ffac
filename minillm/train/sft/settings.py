"""What fixes a fine-tuning run besides the model and the data: ``FinetuneSettings``, checked when
made, saved with every checkpoint (in optimizer.safetensors' metadata, as JSON) and compared on
``resume`` (resume.py) through ``saved_settings``:

    saved_settings({"rank": 8, …, "checkpoint_every": 50})        # written before eval_every
        -> {"rank": 8, …, "checkpoint_every": 50, "eval_every": None, "recompute": False}

A setting added since checkpoints were first written (``ADDED``) is absent from an older one: that
run had its default behaviour, so it takes the default. Any other name missing, or a name this
version does not know (a newer minillm's), is refused by name: guessing could resume a different
run.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

ADDED = ("eval_every", "recompute")     # newer than the first checkpoints: absent = the default


@dataclass
class FinetuneSettings:
    """What fixes a fine-tuning run besides the model and the data (saved with each checkpoint)."""
    rank: int = 8
    alpha: float | None = None          # None: 2 · rank (s = 2)
    targets: list | None = None         # None: every projection (lora/adapters.py)
    full: bool = False                  # True: every weight is trained, no adapters
    steps: int | None = None            # None: epochs × ⌈conversations / batch⌉
    epochs: int = 1
    batch: int = 4
    lr: float = 1e-3
    min_lr: float | None = None         # None: lr / 10
    warmup: int = 0
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    seed: int = 0
    max_tokens: int | None = None       # None: the model's context
    pack: bool = False
    checkpoint_every: int = 50
    eval_every: int | None = None       # None: the held-out score after the last step only
    recompute: bool = False             # True: the same step in less memory (train/memory/)

    def __post_init__(self):
        for name in ("rank", "epochs", "batch", "checkpoint_every"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("steps", "eval_every", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value <= 0):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
        if not isinstance(self.recompute, bool):
            raise ValueError(f"recompute must be True or False, got {self.recompute!r}")
        for name in ("warmup", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        min_lr = self.lr / 10 if self.min_lr is None else self.min_lr
        lr_is_number = isinstance(self.lr, (int, float)) and not isinstance(self.lr, bool)
        if not (lr_is_number and 0 < min_lr <= self.lr < math.inf):
            raise ValueError(f"need 0 < min_lr ≤ lr, both finite, got lr={self.lr!r}, "
                             f"min_lr={self.min_lr!r}")
        if not 0 < self.grad_clip < math.inf or not 0 <= self.weight_decay < math.inf:
            raise ValueError(f"grad_clip must be > 0 and weight_decay >= 0, both finite, got "
                             f"{self.grad_clip!r}, {self.weight_decay!r}")
        if self.targets is not None:
            self.targets = list(self.targets)


def saved_settings(saved: dict, where) -> dict:
    """A checkpoint's saved settings (a dict from JSON) with every field of today's
    ``FinetuneSettings``: the ``ADDED`` ones it lacks at their defaults. ``where``: the file, for
    the errors (a name not known here, or another one missing)."""
    defaults = {f.name: f.default for f in fields(FinetuneSettings)}
    unknown = sorted(set(saved) - set(defaults))
    if unknown:
        raise ValueError(f"{where} holds settings this minillm does not know ({', '.join(unknown)}):"
                         f" a newer minillm wrote it; resume with that one or start in an empty "
                         f"directory")
    missing = [name for name in defaults if name not in saved and name not in ADDED]
    if missing:
        raise ValueError(f"{where} lacks the settings {', '.join(missing)}: not a checkpoint "
                         f"minillm finetune wrote; start in an empty directory")
    return {name: saved.get(name, default) for name, default in defaults.items()}
