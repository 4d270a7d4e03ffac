"""Generation under a constraint, on the shipped random-ish tiny models of three vocabularies:
byte-level GPT-2 style (weights/shakespeare), SentencePiece-style (weights/tiny-llama) and one
with multi-byte CJK tokens (weights/songci). Every completed output fully matches the regex /
parses as JSON and validates; a constraint allowing one continuation reproduces it; no
constraint leaves generation unchanged; the mask comes before the sampler's filters.
"""
import json
from functools import lru_cache

import numpy as np
import pytest
import regex
from hypothesis import assume, given, settings, strategies as st

import minillm
from minillm.decoding.constraints import Choice, JsonSchema, Regex
from minillm.decoding.constraints.masked import mask_logits
from minillm.resources import shipped
from tests.decoding.constraints.test_schema_regex import instances, schemas, valid

MODELS = ("shakespeare", "tiny-llama", "songci")


@lru_cache(maxsize=None)
def model_and_tokenizer(name):
    return minillm.load_model(shipped(name))


def run(name, constraint, n=40, seed=0, prompt="The", **kw):
    model, tok = model_and_tokenizer(name)
    steps = list(minillm.generate(model, tok.encode(prompt), n, seed=seed, tokenizer=tok,
                                  constraint=constraint, **kw))
    return "".join(s.text for s in steps), [s.id for s in steps if s.id is not None]


def prefix_text(name, ids) -> str:
    """The text of ``ids`` without a UTF-8 character cut short at the end (max_new_tokens may
    stop a text inside one; the streamed text shows that as U+FFFD)."""
    return model_and_tokenizer(name)[1].decode_bytes(ids).decode("utf-8", "ignore")


def finished(constraint, name, ids) -> bool:
    """Did generation end because the guide is finished (not max_new_tokens)?"""
    tok = model_and_tokenizer(name)[1]
    g = constraint.guide(tok, eos_ids=[])
    state = g.start
    for i in ids:
        state = g.advance(state, i)
    return g.is_finished(state)


@pytest.mark.parametrize("name", MODELS)
@settings(max_examples=5)
@given(schema=schemas(), seed=st.integers(0, 2**16))
def test_completed_json_outputs_parse_and_validate(name, schema, seed):
    c = JsonSchema(schema)
    text, ids = run(name, c, n=30, seed=seed, temperature=1.5)
    assert regex.fullmatch(c.pattern, prefix_text(name, ids), partial=True)   # stays inside
    if finished(c, name, ids):
        assert valid(json.loads(text), schema), (schema, text)


@pytest.mark.parametrize("name", MODELS)
@settings(max_examples=5)
@given(pattern=st.sampled_from(["[0-9]{1,3}", "(ab|cd)+x", "[a-z]{2,5}!", "風|花|雪月", "-?[0-9]+\\.[0-9]"]),
       seed=st.integers(0, 2**16))
def test_completed_regex_outputs_match(name, pattern, seed):
    c = Regex(pattern)
    text, ids = run(name, c, n=12, seed=seed, temperature=1.0)
    assert regex.fullmatch(pattern, prefix_text(name, ids), partial=True)
    if finished(c, name, ids):
        assert regex.fullmatch(pattern, text)


@pytest.mark.parametrize("name", MODELS)
@settings(max_examples=4)
@given(data=st.data())
def test_one_allowed_continuation_is_reproduced(name, data):
    """A const schema (one valid text) and a one-string Choice give exactly that text."""
    value = data.draw(instances(data.draw(schemas())))
    text = json.dumps(value, ensure_ascii=False)
    n = len(text.encode()) + 2                                    # a token is at least a byte
    assume(n < 120)                                               # the models' n_ctx is 128
    assert run(name, JsonSchema({"const": value}), n=n)[0] == text
    assert run(name, Choice([text]), n=n, seed=1)[0] == text


@pytest.mark.parametrize("name", MODELS)
def test_no_constraint_unchanged(name):
    """constraint=None is the plain loop: the same tokens, same seed, as generate_simple."""
    model, tok = model_and_tokenizer(name)
    ids = tok.encode("The")
    plain = [s.id for s in minillm.generate(model, ids, 15, seed=3, constraint=None, stop_at_eos=False)]
    assert plain == list(minillm.generate_simple(model, ids, 15, seed=3))


def test_mask_before_the_filters():
    """top-k 1 under a constraint picks the best ALLOWED token (masking after top-k would leave
    nothing when the best token does not fit)."""
    model, tok = model_and_tokenizer("shakespeare")
    logits = model(np.array(tok.encode("The")))[-1]
    c = Choice(["7", "8"])
    g = c.guide(tok)
    ok = np.flatnonzero(g.allowed(g.start))
    best = int(ok[np.argmax(logits[ok])])
    text, ids = run("shakespeare", c, n=3, top_k=1)
    assert ids[0] == best and text in ("7", "8")
    masked = mask_logits(logits, g.allowed(g.start))
    assert np.isfinite(masked).sum() == len(ok) and masked.dtype == logits.dtype


def test_eos_only_where_the_text_is_complete():
    """A stop id is allowed in accepting states only: '[0-9]+' with the newline token as a stop
    id can stop after a digit, never before one."""
    model, tok = model_and_tokenizer("shakespeare")
    stop = tok.encode("\n")[0]
    g = Regex("[0-9]+").guide(tok, eos_ids=[stop])
    assert not g.allowed(g.start)[stop]
    for seed in range(5):
        text, _ = run("shakespeare", Regex("[0-9]+"), n=8, seed=seed, stop_ids=[stop])
        assert regex.fullmatch("[0-9]+", text)


def test_constraint_refusals():
    model, tok = model_and_tokenizer("shakespeare")
    with pytest.raises(ValueError, match="tokenizer"):
        list(minillm.generate(model, [1, 2], 3, constraint=Regex("a")))
    with pytest.raises(TypeError, match="Regex, JsonSchema or Choice"):
        list(minillm.generate(model, [1, 2], 3, constraint="a+", tokenizer=tok))
    with pytest.raises(ValueError, match="speculative"):
        list(minillm.generate(model, [1, 2], 3, constraint=Regex("a"), tokenizer=tok, draft="prompt"))


@pytest.mark.parametrize("name", MODELS)
def test_batch_rows_each_match(name):
    """generate_batch(..., constraint=): every row's text matches; greedy rows equal generate's."""
    model, tok = model_and_tokenizer(name)
    c = JsonSchema({"type": "object", "properties": {"n": {"type": "integer"},
                                                     "ok": {"type": "boolean"}}, "required": ["n", "ok"]})
    prompts = [tok.encode(p) for p in ("The", "A long day", "Hi")]
    rows = minillm.generate_batch(model, prompts, 25, temperature=0, constraint=c, tokenizer=tok)
    for p, row in zip(prompts, rows):
        assert regex.fullmatch(c.pattern, tok.decode(row), partial=True)
        alone = [s.id for s in minillm.generate(model, p, 25, temperature=0, constraint=c, tokenizer=tok)]
        assert row == alone


@pytest.mark.parametrize("name", MODELS)
def test_beam_hypotheses_each_match(name):
    """beam_search(..., constraint=): every returned hypothesis is a complete match; beam 1 is
    constrained greedy's tokens."""
    model, tok = model_and_tokenizer(name)
    c = Choice(["yes", "no", "maybe so", "風"])
    hyps = minillm.beam_search(model, tok.encode("The"), beam_size=3, max_new_tokens=8,
                               num_return_sequences=3, constraint=c, tokenizer=tok)
    assert hyps and all(h.ids and tok.decode(h.ids) in c.choices for h in hyps)
    greedy = [s.id for s in minillm.generate(model, tok.encode("The"), 8, temperature=0,
                                              constraint=c, tokenizer=tok)]
    one = minillm.beam_search(model, tok.encode("The"), beam_size=1, max_new_tokens=8,
                              constraint=c, tokenizer=tok)[0]
    assert one.ids == greedy
