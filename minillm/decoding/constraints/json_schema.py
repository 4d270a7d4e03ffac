"""A JSON schema -> a regular expression whose matches are exactly the valid JSON texts, written
one fixed way.

Whitespace policy (fixed, so that one value has one text): Python's ``json.dumps`` defaults —
one space after ``:`` and after ``,``, none elsewhere, no newline::

    {"name": "Ada", "age": 36, "tags": ["x", "y"]}

Strings hold any character but ``"``, ``\\`` and the controls U+0000-U+001F, or one of JSON's
escapes ``\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX`` (an escape counts as one character for
``minLength``/``maxLength``). Integers are written ``-?(0|[1-9][0-9]*)``; numbers may add a
fraction and an exponent.

Supported: ``type`` (object, array, string, number, integer, boolean, null, or a list of them),
``properties``, ``required``, ``additionalProperties``, ``enum``, ``const``, ``items`` (one
schema), ``minItems``/``maxItems``, ``anyOf``, ``minLength``/``maxLength``, nesting; ``title``,
``description``, ``default``, ``examples``, ``$schema``, ``$id``, ``$comment`` are ignored.
Objects: the properties come in the order ``properties`` lists them; a required one is always
there, an optional one may be present or absent. No other key is ever generated, whatever
``additionalProperties`` says (false, true or absent; a schema for it is refused). Every other
keyword (``pattern``, ``$ref``, ``oneOf``, ``allOf``, ``format``, ``minimum`` …) is refused by name.

Example: ``schema_to_regex({"type": "boolean"}) == "(true|false)"``.
"""
from __future__ import annotations

import json

from .choice import escape
from .guide import Regex

SUPPORTED = ("type", "properties", "required", "additionalProperties", "enum", "const", "items",
             "minItems", "maxItems", "anyOf", "minLength", "maxLength")
IGNORED = ("title", "description", "default", "examples", "$schema", "$id", "$comment")
TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
# what the keywords of one type are, so that a type list applies each to its own type
_OWN = {"object": ("properties", "required", "additionalProperties"),
        "array": ("items", "minItems", "maxItems"), "string": ("minLength", "maxLength")}

_CONTROLS = "".join(chr(c) for c in range(0x20))         # U+0000-U+001F, literal in the class
STRING_CHAR = '([^"\\\\' + _CONTROLS + ']|\\\\(["\\\\/bfnrt]|u[0-9a-fA-F]{4,4}))'
INTEGER = "-?(0|[1-9][0-9]*)"
NUMBER = INTEGER + "(\\.[0-9]+)?([eE](\\+|-)?[0-9]+)?"
_SIMPLE = {"integer": INTEGER, "number": NUMBER, "boolean": "(true|false)", "null": "null"}
COMMA, COLON = ", ", ": "                                  # the whitespace policy


def schema_to_regex(schema) -> str:
    """The regex (the constraints package's subset: literals, classes, groups, ``|``, ``? * +``,
    ``{m,n}``) that matches exactly the JSON texts valid under ``schema``, written per the policy."""
    if not isinstance(schema, dict):
        raise TypeError(f"a JSON schema is a dict (a JSON object), got {type(schema).__name__}")
    unknown = sorted(set(schema) - set(SUPPORTED) - set(IGNORED))
    if unknown:
        raise ValueError(f"JSON schema keyword(s) {', '.join(map(repr, unknown))} not supported; "
                         f"supported: {', '.join(SUPPORTED)}")
    if "anyOf" in schema:
        subs = schema["anyOf"]
        if not isinstance(subs, list) or not subs or set(schema) - {"anyOf", *IGNORED}:
            raise ValueError("anyOf must be a non-empty list of schemas, with no other keyword beside it")
        return _alternation([schema_to_regex(s) for s in subs])
    types = _types(schema)
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        if not isinstance(values, list) or not values:
            raise ValueError("enum must be a non-empty list of JSON values")
        kept = [v for v in values if types is None or _type_of(v) in types
                or (_type_of(v) == "integer" and "number" in types)]
        if not kept:
            raise ValueError(f"no value of enum/const {values!r} has the type {types}")
        return _alternation([escape(_dumps(v)) for v in kept])
    if types is None:
        raise ValueError("a schema needs type, enum, const or anyOf (an empty schema, any JSON "
                         "value, is not supported)")
    return _alternation([_one_type(t, schema) for t in types])


def _types(schema) -> list[str] | None:
    """``type`` as a list (or None), each name checked; ``properties`` alone implies object."""
    given = schema.get("type")
    if given is None:
        return ["object"] if "properties" in schema else ["array"] if "items" in schema else None
    names = given if isinstance(given, list) else [given]
    bad = [t for t in names if t not in TYPES]
    if bad or not names:
        raise ValueError(f"type must be one of {TYPES} or a non-empty list of them, got {given!r}")
    stray = [k for t, ks in _OWN.items() if t not in names for k in ks if k in schema]
    if stray:
        raise ValueError(f"keyword(s) {stray} do not apply to type {given!r}")
    return list(dict.fromkeys(names))


def _one_type(name: str, schema) -> str:
    if name == "object":
        return _object(schema)
    if name == "array":
        return _array(schema)
    if name == "string":
        lo, hi = _bounds(schema, "minLength", "maxLength")
        return '"' + _repeat(STRING_CHAR, lo, hi) + '"'
    return _SIMPLE[name]


def _object(schema) -> str:
    r"""``{`` + the properties in order + ``}``. Each present property after the first is
    preceded by ``, ``; the first present one is any property up to the first required one:

        body = kv_0 rest(1) | kv_1 rest(2) | ... | kv_r rest(r+1)   (| empty, if none is required)
        rest(i) = (, kv_i)? (, kv_i+1) ...    (``?`` on the optional ones)
    """
    props = schema.get("properties")
    if props is None:
        raise ValueError('an object schema needs "properties" (free-form objects are not supported)')
    if not isinstance(props, dict):
        raise ValueError("properties must be an object mapping names to schemas")
    required = schema.get("required", [])
    if not isinstance(required, list) or any(r not in props for r in required):
        raise ValueError(f"required must be a list of names in properties, got {required!r}")
    extra = schema.get("additionalProperties", False)
    if not isinstance(extra, bool):
        raise ValueError("additionalProperties must be true or false (only the listed properties "
                         "are ever generated); a schema for it is not supported")
    names = list(props)
    kv = [escape(_dumps(n) + COLON) + schema_to_regex(props[n]) for n in names]
    must = [n in required for n in names]
    later = [_rest(kv[i + 1:], must[i + 1:]) for i in range(len(names))]
    first = [kv[i] + later[i] for i in range(len(names)) if not any(must[:i])]
    body = _alternation(first) if first else ""
    if not any(must) and first:
        body = f"({body})?"                                   # nothing required: {} too
    return "\\{" + body + "\\}"


def _rest(kv: list[str], must: list[bool]) -> str:
    return "".join(f"({escape(COMMA)}{p})" + ("" if m else "?") for p, m in zip(kv, must))


def _array(schema) -> str:
    """``[`` + lo..hi items separated by ``, `` + ``]``."""
    items = schema.get("items")
    if not isinstance(items, dict):
        raise ValueError("an array schema needs items: one schema (tuple forms are not supported)")
    lo, hi = _bounds(schema, "minItems", "maxItems")
    item = schema_to_regex(items)
    if hi == 0:
        return "\\[\\]"
    more = _repeat(f"({escape(COMMA)}{item})", max(lo - 1, 0), None if hi is None else hi - 1)
    listed = f"({item}{more})" + ("?" if lo == 0 else "")
    return "\\[" + listed + "\\]"


def _bounds(schema, low: str, high: str) -> tuple[int, int | None]:
    lo, hi = schema.get(low, 0), schema.get(high)
    for name, v in ((low, lo), (high, hi)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
    if hi is not None and hi < lo:
        raise ValueError(f"{low} ({lo}) is more than {high} ({hi})")
    return lo, hi


def _repeat(unit: str, lo: int, hi: int | None) -> str:
    """``unit`` lo..hi times (hi None: no limit), in the subset's quantifiers."""
    if hi is None:
        return (f"{unit}{{{lo},{lo}}}" if lo else "") + f"{unit}*"
    return "" if hi == 0 else f"{unit}{{{lo},{hi}}}"


def _alternation(parts: list[str]) -> str:
    parts = list(dict.fromkeys(parts))
    return parts[0] if len(parts) == 1 else "(" + "|".join(parts) + ")"


def _dumps(value) -> str:
    """One JSON value in the whitespace policy (non-ASCII written as itself)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _type_of(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "?")


class JsonSchema:
    """A constraint: the reply is a JSON text valid under ``schema`` (a dict, or its JSON text),
    in the whitespace policy above. ``.schema``, ``.pattern`` (``schema_to_regex``) and
    ``.guide(tokenizer)``, as ``Regex`` has. Example::

        JsonSchema({"type": "object", "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"]}).pattern  == '\\\\{"ok": (true|false)\\\\}'
    """

    def __init__(self, schema):
        if isinstance(schema, (str, bytes)):
            try:
                schema = json.loads(schema)
            except json.JSONDecodeError as e:
                raise ValueError(f"the JSON schema is not valid JSON: {e}") from None
        self.schema = schema
        self.pattern = schema_to_regex(schema)

    def guide(self, tokenizer, eos_ids=None):
        """The token-level guide of ``pattern`` (``Regex.guide``: built once, cached)."""
        return Regex(self.pattern).guide(tokenizer, eos_ids)

    def __repr__(self) -> str:
        return f"JsonSchema({json.dumps(self.schema)})"
