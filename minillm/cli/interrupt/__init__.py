"""Ctrl-C in ``train`` and ``finetune``: the first one asks the run to stop after the current step
(it then writes a checkpoint that ``--resume`` continues from exactly); a second one stops at once.

    with FirstInterrupt() as stop:       # SIGINT's handler, restored on leaving
        train(..., stop=stop)            # the loop calls stop() between steps

The training loops never install a handler themselves (a library must not take over a process's
signals): they take a ``stop`` callable, and this is the one the CLI passes. Why a flag and not
KeyboardInterrupt: an exception can land in the middle of AdamW's update or of a checkpoint's
rename, and the state it leaves cannot be resumed exactly; a flag is read only between steps.
"""
from __future__ import annotations

import signal
import sys


class FirstInterrupt:
    """A callable that is True once Ctrl-C (SIGINT) was pressed; a second SIGINT raises
    KeyboardInterrupt as Python's own handler does. Only in the main thread (signals go there)."""

    def __init__(self, note: str = "stopping after this step to write a checkpoint "
                                   "(Ctrl-C again to stop at once, without it)"):
        self.note, self.pressed, self._previous = note, False, None

    def __call__(self) -> bool:
        return self.pressed

    def _handle(self, signum, frame) -> None:
        if self.pressed:                        # the second Ctrl-C: at once
            raise KeyboardInterrupt
        self.pressed = True
        print(f"\nminillm: interrupted: {self.note}", file=sys.stderr, flush=True)

    def __enter__(self) -> "FirstInterrupt":
        self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        signal.signal(signal.SIGINT, self._previous)

    def install(self) -> "FirstInterrupt":
        """``__enter__`` for a run whose end is a ``finally: restore()`` further down."""
        return self.__enter__()

    def restore(self) -> None:
        self.__exit__()


def interrupted(exc) -> int:
    """Say where an interrupted run stopped and how to continue it; -> 130 (128 + SIGINT)."""
    where = (f"the checkpoint in {exc.checkpoint} holds them: run the same command with "
             f"--resume to continue exactly" if exc.checkpoint is not None else "nothing written")
    print(f"minillm: interrupted after step {exc.step} of {exc.total}; {where}", file=sys.stderr)
    return 130
