"""JSON schema -> regex: the regex matches exactly the valid JSON texts written in the policy.

For random schemas in the supported subset (``schemas()``), random valid instances serialised with
``json.dumps`` (the policy: ", " and ": ") fullmatch the regex (Python's ``regex`` module), and
random texts that fullmatch it parse with ``json.loads`` and validate (``jsonschema`` if installed,
else the small validator below).
"""
import json

import pytest
import regex
from hypothesis import given, strategies as st

from minillm.decoding.constraints.choice import Choice, escape
from minillm.decoding.constraints.json_schema import JsonSchema, schema_to_regex

NAMES = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=4)
SCALARS = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=3)


def _leaf():
    string = st.fixed_dictionaries({"type": st.just("string")}, optional={
        "maxLength": st.integers(0, 3), "minLength": st.integers(0, 2)}).filter(
        lambda s: s.get("minLength", 0) <= s.get("maxLength", 9))
    simple = st.sampled_from(["integer", "number", "boolean", "null"]).map(lambda t: {"type": t})
    listed = st.lists(st.sampled_from(["string", "integer", "null", "boolean"]), min_size=1,
                      max_size=3, unique=True).map(lambda ts: {"type": ts})
    enum = st.lists(SCALARS, min_size=1, max_size=3, unique_by=json.dumps).map(lambda v: {"enum": v})
    return string | simple | listed | enum | SCALARS.map(lambda v: {"const": v})


def _compound(inner):
    obj = st.dictionaries(NAMES, inner, max_size=3).flatmap(lambda props: st.fixed_dictionaries(
        {"type": st.just("object"), "properties": st.just(props),
         "required": st.lists(st.sampled_from(sorted(props)), unique=True) if props else st.just([])},
        optional={"additionalProperties": st.just(False)}))
    arr = st.fixed_dictionaries({"type": st.just("array"), "items": inner},
                                optional={"minItems": st.integers(0, 2), "maxItems": st.integers(0, 3)}
                                ).filter(lambda s: s.get("minItems", 0) <= s.get("maxItems", 9))
    return obj | arr | st.lists(inner, min_size=1, max_size=3).map(lambda s: {"anyOf": s})


def schemas():
    return st.recursive(_leaf(), _compound, max_leaves=6)


def instances(s):
    """Valid instances of schema ``s`` (the supported subset), built from the schema."""
    if "anyOf" in s:
        return st.one_of([instances(x) for x in s["anyOf"]])
    if "const" in s:
        return st.just(s["const"])
    if "enum" in s:
        return st.sampled_from(s["enum"])
    types = s["type"] if isinstance(s["type"], list) else [s["type"]]
    return st.one_of([_of_type(t, s) for t in types])


def _of_type(t, s):
    if t == "object":
        props, req = s["properties"], s.get("required", [])
        return st.fixed_dictionaries({k: instances(props[k]) for k in props if k in req},
                                     optional={k: instances(props[k]) for k in props if k not in req}
                                     ).map(lambda d: {k: d[k] for k in props if k in d})  # in order
    if t == "array":
        return st.lists(instances(s["items"]), min_size=s.get("minItems", 0),
                        max_size=min(s.get("maxItems", 3), 3))
    if t == "string":
        return st.text(min_size=s.get("minLength", 0), max_size=s.get("maxLength", 5))
    return {"integer": st.integers(-10**6, 10**6), "boolean": st.booleans(), "null": st.none(),
            "number": st.integers(-99, 99) | st.floats(allow_nan=False, allow_infinity=False)}[t]


def valid(value, s) -> bool:
    """A small validator for the subset (the jsonschema package is used when installed)."""
    try:
        import jsonschema
    except ImportError:
        return _valid(value, s)
    return jsonschema.Draft202012Validator(s).is_valid(value)


def _valid(v, s) -> bool:
    if "anyOf" in s:
        return any(_valid(v, x) for x in s["anyOf"])
    if "const" in s or "enum" in s:
        return any(json.dumps(v) == json.dumps(e) for e in ([s["const"]] if "const" in s else s["enum"]))
    types = s["type"] if isinstance(s["type"], list) else [s["type"]]
    return any(_valid_type(v, t, s) for t in types)


def _valid_type(v, t, s) -> bool:
    if t == "object":
        return isinstance(v, dict) and set(s.get("required", [])) <= set(v) and all(
            k in s["properties"] and _valid(x, s["properties"][k]) for k, x in v.items())
    if t == "array":
        return isinstance(v, list) and s.get("minItems", 0) <= len(v) <= s.get("maxItems", 10**9) \
            and all(_valid(x, s["items"]) for x in v)
    if t == "string":
        return isinstance(v, str) and s.get("minLength", 0) <= len(v) <= s.get("maxLength", 10**9)
    if t in ("integer", "number"):
        return not isinstance(v, bool) and (isinstance(v, int) or (t == "number" and isinstance(v, float)))
    return {"boolean": isinstance(v, bool), "null": v is None}[t]


def dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


@given(st.data())
def test_valid_instances_match_the_regex(data):
    s = data.draw(schemas())
    pattern = schema_to_regex(s)
    value = data.draw(instances(s))
    assert regex.fullmatch(pattern, dumps(value)), (s, dumps(value))


@given(st.data())
def test_texts_matching_the_regex_parse_and_validate(data):
    """Texts close to a valid one (one character changed, dropped or inserted, everywhere, from
    a small alphabet of JSON's own characters) that still fullmatch are valid JSON under the
    schema: the regex lets nothing else through. (The valid text itself is among them.)"""
    s = data.draw(schemas())
    pattern = regex.compile(schema_to_regex(s))
    text = dumps(data.draw(instances(s)))
    chars = list('{}[]",: 0a-.e\\') + ["\n", "é"]
    edits = {text} | {e for i in range(len(text) + 1) for c in chars
                      for e in (text[:i] + c + text[i + 1:], text[:i] + text[i + 1:], text[:i] + c + text[i:])}
    matching = [e for e in edits if pattern.fullmatch(e)]
    assert text in matching
    for e in matching:
        assert valid(json.loads(e), s), (s, e)


@given(schemas(), st.text(max_size=3))
def test_json_escapes_in_strings(s, extra):
    """Every string json.dumps writes (controls as \\uXXXX, quotes and backslashes escaped)."""
    text = dumps(extra)
    assert regex.fullmatch(schema_to_regex({"type": "string"}), text)
    assert not regex.fullmatch(schema_to_regex({"type": "string"}), '"a\nb"')   # raw newline


def test_policy_and_order():
    s = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}},
         "required": ["b"]}
    p = schema_to_regex(s)
    assert regex.fullmatch(p, '{"a": 1, "b": true}') and regex.fullmatch(p, '{"b": false}')
    assert not regex.fullmatch(p, '{"b": true, "a": 1}')          # the order of properties
    assert not regex.fullmatch(p, '{"a":1,"b":true}')              # compact is not the policy
    assert not regex.fullmatch(p, '{"a": 1}')                      # b is required
    assert not regex.fullmatch(p, '{"b": true, "c": 1}')           # no additional property


@pytest.mark.parametrize("keyword", ["pattern", "$ref", "oneOf", "allOf", "format", "minimum",
                                     "not", "patternProperties"])
def test_unsupported_keywords_refused_by_name(keyword):
    with pytest.raises(ValueError, match=regex.escape(repr(keyword))):
        schema_to_regex({"type": "string", keyword: 1})


@pytest.mark.parametrize("schema, words", [
    ({}, "needs type"), ({"type": "object"}, "properties"), ({"type": "array"}, "items"),
    ({"type": "date"}, "type must be"), ({"type": "string", "maxLength": -1}, "maxLength"),
    ({"type": "array", "items": {"type": "null"}, "minItems": 3, "maxItems": 1}, "more than"),
    ({"type": "object", "properties": {}, "required": ["x"]}, "required"),
    ({"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}, "additionalProperties"),
    ({"type": "integer", "enum": ["a"]}, "no value"), ({"type": "integer", "items": {}}, "do not apply")])
def test_bad_schemas_refused_clearly(schema, words):
    with pytest.raises(ValueError, match=words):
        schema_to_regex(schema)


def test_schema_as_json_text_and_types():
    assert JsonSchema('{"type": "null"}').pattern == "null"
    with pytest.raises(ValueError, match="not valid JSON"):
        JsonSchema("{type")
    with pytest.raises(TypeError, match="dict"):
        JsonSchema(3)


@given(st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=4), st.text(max_size=4))
def test_choice_matches_exactly_its_strings(choices, other):
    p = Choice(choices).pattern
    assert all(regex.fullmatch(p, c) for c in choices)
    assert bool(regex.fullmatch(p, other)) == (other in choices)
    assert regex.fullmatch(escape(other), other)


def test_choice_refusals():
    for bad, err in (([], ValueError), ([""], ValueError), ("ab", TypeError), ([1], ValueError)):
        with pytest.raises(err):
            Choice(bad)
