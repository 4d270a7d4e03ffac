"""``response_format`` -> a constraint of minillm's structured output (decoding/constraints/).

    {"type": "text"}                                   no constraint
    {"type": "json_schema", "json_schema": {"name": ..., "schema": {...}, "strict": ...}}
                                                       JsonSchema(schema): the reply is valid
                                                       JSON under the schema (its supported subset)
    {"type": "json_object"}                            a JSON object: string keys, each value a
                                                       string, number, boolean, null or a flat
                                                       array of those

Why json_object is flat: a constraint here is a regular expression (a finite automaton), and
JSON's nesting to any depth is not regular; one level of arrays covers the common case, and a
schema is the way to ask for more structure. The JSON is written one fixed way (json_schema.py's
whitespace policy: ``{"a": 1, "b": [true, null]}``). A schema outside the supported subset is a
400 that names the keyword.
"""
from __future__ import annotations

from minillm.decoding.constraints import JsonSchema, Regex
from minillm.decoding.constraints.json_schema import COLON, COMMA, NUMBER, STRING_CHAR
from minillm.server.errors import bad

STRING = f'"{STRING_CHAR}*"'
SCALAR = f"({STRING}|{NUMBER}|true|false|null)"
ARRAY = f"\\[({SCALAR}({COMMA}{SCALAR})*)?\\]"
MEMBER = f"{STRING}{COLON}({SCALAR}|{ARRAY})"
JSON_OBJECT = f"\\{{({MEMBER}({COMMA}{MEMBER})*)?\\}}"


def constraint_of(response_format):
    """The constraint a ``response_format`` asks for, or None; a 400 for a malformed one."""
    if response_format is None:
        return None
    if not isinstance(response_format, dict) or not isinstance(response_format.get("type"), str):
        raise bad("response_format", "response_format must be an object with a type: text, "
                                     "json_object or json_schema")
    kind = response_format["type"]
    if kind == "text":
        return None
    if kind == "json_object":
        return Regex(JSON_OBJECT)
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if not isinstance(schema, dict):
            raise bad("response_format", "response_format.json_schema.schema must be a JSON "
                                         "schema object")
        try:
            return JsonSchema(schema)
        except (ValueError, TypeError) as exc:
            raise bad("response_format", f"response_format's schema: {exc}") from None
    raise bad("response_format", f"response_format.type must be text, json_object or "
                                 f"json_schema, got {kind!r}")
