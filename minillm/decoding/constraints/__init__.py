"""Structured output: a regular expression the generated text must match, as a mask per step.

In reading order: ``regex.py`` (pattern -> tree; the subset supported, the rest refused by name
in ``refused.py``; character sets as ranges in ``charset.py``)
· ``automaton.py`` (Thompson NFA, then a DFA by subset construction, over characters) ·
``byte_dfa.py`` (the same DFA over bytes, UTF-8 encoded; live states only; minimised) ·
``index.py`` (the vocabulary index: per state, the tokens allowed and where they lead) ·
``guide.py`` (``Regex``, ``Guide``: what generation asks at each step).
"""
from .guide import Guide, Regex
from .index import token_bytes_of

__all__ = ["Guide", "Regex", "token_bytes_of"]

# Structured output, part 2: a JSON schema or a list of choices as a regex; generation's mask
# (``generate(..., constraint=...)``: masked.py).
from .choice import Choice  # noqa: E402
from .json_schema import JsonSchema, schema_to_regex  # noqa: E402

__all__ += ["Choice", "JsonSchema", "schema_to_regex"]
