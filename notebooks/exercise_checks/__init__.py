"""The exercises' contracts and judges, grouped like the notebooks (``exercises.check`` runs them).

Each ``Exercise`` has a ``task`` (what to write), hand-picked ``cases`` that catch the usual
mistakes, a hypothesis ``strategy`` for random cases, ``judge(fn, case)`` (None when ``fn`` is
right, else a sentence) and ``show(case)`` (the case in words).
"""
from .core import Exercise
from . import (attention_cache, context_options, decoding, families, formulas, memory_bound,
               positions, sampling, text_tokens, training)
from . import backprop, finetune, lens, structured, updates

EXERCISES: dict[str, Exercise] = {}
for _module in (text_tokens, positions, attention_cache, formulas, sampling, decoding, training, memory_bound,
                context_options, families):
    for _exercise in _module.EXERCISES:
        EXERCISES[_exercise.name] = _exercise
for _exercise in finetune.EXERCISES:                 # notebook 15
    EXERCISES[_exercise.name] = _exercise
for _exercise in structured.EXERCISES:              # notebook 17
    EXERCISES[_exercise.name] = _exercise
for _exercise in lens.EXERCISES + backprop.EXERCISES + updates.EXERCISES:   # notebooks 18, 19
    EXERCISES[_exercise.name] = _exercise

__all__ = ["EXERCISES", "Exercise"]
