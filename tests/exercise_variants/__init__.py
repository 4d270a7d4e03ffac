"""Correct variants and typical wrong attempts for every exercise of the notebooks, in one table.

``VARIANTS[name] = (right, wrong)``: lists of ``Attempt``. tests/test_exercise_variants.py proves
that every right one passes ``check`` and every wrong one fails with a message that names the
input and carries exactly the hint it names (or none). Grouped like notebooks/exercise_checks/.
"""
from . import (attention_cache, context_options, decoding, families, formulas, memory_bound,
               positions, sampling, text_tokens, training)
from . import finetune, learning, lens, structured
from .common import Attempt

VARIANTS: dict[str, tuple[list[Attempt], list[Attempt]]] = {}
for _module in (text_tokens, positions, attention_cache, formulas, sampling, decoding, training, memory_bound,
                context_options, families):
    VARIANTS.update(_module.VARIANTS)
VARIANTS.update(finetune.VARIANTS)                    # notebook 15
VARIANTS.update(structured.VARIANTS)                  # notebook 17
VARIANTS.update(lens.VARIANTS)                        # notebook 18
VARIANTS.update(learning.VARIANTS)                    # notebook 19

__all__ = ["VARIANTS", "Attempt"]
