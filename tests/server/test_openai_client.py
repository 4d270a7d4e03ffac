"""The official ``openai`` Python client drives the server: chat, completions, streaming,
logprobs, stop, seed and structured output, each checked against the library itself
(``minillm.generate`` with the same prompt ids and seed gives the same tokens)."""
from __future__ import annotations

import json
import math

import pytest

from minillm import generate, get_format

openai = pytest.importorskip("openai", reason="the openai package (pip install openai; the "
                                              "[test] extra) drives these tests")

HI = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Good morrow"}]


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)


def library_text(tiny, ids, n, **kwargs):
    model, tok = tiny
    steps = list(generate(model, ids, n, tokenizer=tok, **kwargs))
    return "".join(s.text for s in steps), steps


def test_a_completion_equals_generate_with_the_same_seed(client, tiny):
    """/v1/completions with a seed is ``generate(prompt ids, seed=...)``: same text, same count."""
    r = client.completions.create(model="tiny-llama", prompt="To be, or", max_tokens=12, seed=7,
                                  temperature=0.9, extra_body={"top_k": 40, "min_p": 0.02})
    text, steps = library_text(tiny, tiny[1].encode_ordinary("To be, or"), 12, seed=7,
                               temperature=0.9, top_k=40, min_p=0.02)
    assert r.choices[0].text == text
    assert r.usage.completion_tokens == len(steps) == 12
    assert r.usage.prompt_tokens == len(tiny[1].encode_ordinary("To be, or"))
    assert r.choices[0].finish_reason == "length"


def test_a_chat_reply_is_generated_from_the_chat_format(client, tiny):
    """/v1/chat/completions renders the messages in the model's chat format (ChatML here, as
    plain text: the shipped tokenizer has no ChatML tokens) and generates from those ids."""
    r = client.chat.completions.create(model="tiny-llama", messages=HI, max_tokens=10, seed=3,
                                       temperature=0.8)
    ids = get_format("smollm2").ids(tiny[1], HI)
    text, _ = library_text(tiny, ids, 10, seed=3, temperature=0.8,
                           stop_strings=("<|im_end|>", "<|endoftext|>"))
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].message.content == text
    assert r.usage.prompt_tokens == len(ids)


def test_a_stream_sends_one_chunk_per_token_and_the_same_text(client):
    """stream=True: a role chunk, one content chunk per token, a finish chunk, the usage chunk
    (stream_options.include_usage), then [DONE]; the text equals the reply without streaming."""
    args = dict(model="tiny-llama", messages=HI, max_tokens=9, seed=11, temperature=1.0)
    whole = client.chat.completions.create(**args)
    chunks = list(client.chat.completions.create(**args, stream=True,
                                                 stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    content = [c for c in chunks[1:] if c.choices and c.choices[0].delta.content is not None]
    assert len(content) == whole.usage.completion_tokens == 9
    assert "".join(c.choices[0].delta.content for c in content) == whole.choices[0].message.content
    assert chunks[-2].choices[0].finish_reason == "length"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 9


def test_a_streamed_completion_concatenates_to_the_whole_one(client):
    args = dict(model="tiny-llama", prompt="My lord", max_tokens=8, seed=5)
    whole = client.completions.create(**args)
    pieces = [c.choices[0].text for c in client.completions.create(**args, stream=True) if c.choices]
    assert "".join(pieces) == whole.choices[0].text


def test_chat_logprobs_are_the_models_raw_log_probabilities(client, tiny):
    """logprobs/top_logprobs: each token's log p under the raw model distribution (Step.logprob),
    the top alternatives best first, their bytes the token's UTF-8."""
    r = client.chat.completions.create(model="tiny-llama", messages=HI, max_tokens=6, seed=2,
                                       logprobs=True, top_logprobs=3)
    ids = get_format("smollm2").ids(tiny[1], HI)
    _, steps = library_text(tiny, ids, 6, seed=2, logprobs=True, top_n=3,
                            stop_strings=("<|im_end|>", "<|endoftext|>"))
    content = r.choices[0].logprobs.content
    assert len(content) == len(steps)
    for entry, step in zip(content, steps):
        assert math.isclose(entry.logprob, step.logprob, rel_tol=1e-5, abs_tol=1e-6)
        assert entry.bytes == list(tiny[1].token_bytes(step.id))
        tops = [t.logprob for t in entry.top_logprobs]
        assert len(tops) == 3 and tops == sorted(tops, reverse=True)
        assert [t.token for t in entry.top_logprobs] == \
            [tiny[1].decode([i]) for i, _ in step.top]


def test_completion_logprobs_have_tokens_offsets_and_top_dicts(client):
    r = client.completions.create(model="tiny-llama", prompt="Hark", max_tokens=5, seed=4, logprobs=2)
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == 5
    assert all(v <= 0 for v in lp.token_logprobs)
    assert all(len(top) <= 2 for top in lp.top_logprobs)
    assert lp.text_offset == [sum(map(len, lp.tokens[:i])) for i in range(5)]
    assert "".join(lp.tokens) == r.choices[0].text


def test_a_stop_string_ends_the_reply_and_is_not_shown(client):
    """stop: the reply ends where a stop string appears (finish_reason "stop"), the string and
    what follows cut away; the text is the unstopped reply's up to that point."""
    args = dict(model="tiny-llama", prompt="The king", seed=9, temperature=0.0)
    free = client.completions.create(**args, max_tokens=40).choices[0].text
    stop = free[5:8]
    assert stop.strip(), "the test needs a visible stop string"
    r = client.completions.create(**args, max_tokens=40, stop=[stop, "\x00never"])
    assert r.choices[0].finish_reason == "stop"
    assert r.choices[0].text == free[:free.index(stop)]


def test_the_same_seed_gives_the_same_text_and_another_seed_another(client):
    args = dict(model="tiny-llama", messages=HI, max_tokens=12, temperature=1.0)
    a, b, c = (client.chat.completions.create(**args, seed=s).choices[0].message.content
               for s in (21, 21, 22))
    assert a == b
    assert a != c


def test_json_schema_response_format_gives_json_that_fits(client):
    """response_format json_schema: the reply is JSON valid under the schema (structured output)."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"},
                                               "n": {"type": "integer"}},
              "required": ["ok", "n"]}
    r = client.chat.completions.create(
        model="tiny-llama", messages=HI, max_tokens=40, seed=1, temperature=0.7,
        response_format={"type": "json_schema", "json_schema": {"name": "t", "schema": schema}})
    value = json.loads(r.choices[0].message.content)
    assert set(value) == {"ok", "n"} and isinstance(value["ok"], bool) and isinstance(value["n"], int)
    assert r.choices[0].finish_reason == "stop"


def test_json_object_response_format_is_generate_under_the_json_object_pattern(client, tiny):
    """response_format json_object: the reply is ``generate(..., constraint=Regex(JSON_OBJECT))``
    (the random tiny model rarely closes a string, so the text is checked as that, not parsed)."""
    from minillm import Regex
    from minillm.server.structured import JSON_OBJECT
    r = client.chat.completions.create(model="tiny-llama", messages=HI, max_tokens=30, seed=0,
                                       temperature=0.7, response_format={"type": "json_object"})
    ids = get_format("smollm2").ids(tiny[1], HI)
    text, _ = library_text(tiny, ids, 30, seed=0, temperature=0.7, constraint=Regex(JSON_OBJECT),
                           stop_strings=("<|im_end|>", "<|endoftext|>"))
    assert r.choices[0].message.content == text and text.startswith('{"')


@pytest.mark.parametrize("value", [{}, {"a": 1}, {"a": "x", "b": [1, True, None]},
                                   {"k": -2.5e3, "é": "\n"}])
def test_the_json_object_pattern_matches_flat_json_objects(value):
    import re
    from minillm.server.structured import JSON_OBJECT
    assert re.fullmatch(JSON_OBJECT, json.dumps(value, ensure_ascii=False))


@pytest.mark.parametrize("text", ['[1]', '{"a": {"b": 1}}', '{"a":1}', '{"a": [[1]]}', '"x"'])
def test_the_json_object_pattern_refuses_other_json(text):
    import re
    from minillm.server.structured import JSON_OBJECT
    assert not re.fullmatch(JSON_OBJECT, text)


def test_models_lists_the_served_model(client):
    assert [m.id for m in client.models.list().data] == ["tiny-llama"]


def test_an_unknown_model_is_a_404_the_client_raises(client):
    with pytest.raises(openai.NotFoundError) as err:
        client.chat.completions.create(model="gpt-4", messages=HI, max_tokens=2)
    assert err.value.body["code"] == "model_not_found"


def test_n_choices_are_n_seeds_and_choice_0_is_the_single_reply(client):
    """n = 3: three choices (indices 0-2), choice i the reply of n = 1 with seed + i; usage counts
    the prompt once and every choice's tokens; a stream carries each choice's chunks by index."""
    args = dict(model="tiny-llama", messages=HI, max_tokens=7, temperature=1.0)
    r = client.chat.completions.create(**args, seed=40, n=3)
    single = [client.chat.completions.create(**args, seed=40 + i).choices[0] for i in range(3)]
    assert [c.index for c in r.choices] == [0, 1, 2]
    assert [c.message.content for c in r.choices] == [c.message.content for c in single]
    assert r.usage.completion_tokens == 3 * 7
    texts = ["", "", ""]
    for chunk in client.chat.completions.create(**args, seed=40, n=3, stream=True):
        for c in chunk.choices:
            texts[c.index] += c.delta.content or ""
    assert texts == [c.message.content for c in r.choices]


def test_n_above_eight_is_a_clear_400(client):
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model="tiny-llama", messages=HI, max_tokens=2, n=9)
    assert err.value.body["param"] == "n"
