"""A real chat model behind the server (SmolLM2-135M-Instruct; skipped with the reason when the
file is absent): its own chat template is recognised, the reply is ``generate`` over the chat
format's ids stopping at its end-of-turn token, and the official client streams it."""
from __future__ import annotations

import pytest

from minillm import generate, load_model
from tests.conftest import shared_file
from tests.server.conftest import start

openai = pytest.importorskip("openai", reason="the openai package (the [test] extra) drives this test")
MESSAGES = [{"role": "user", "content": "What colour is the sea? One word."}]


@pytest.fixture(scope="module")
def smol():
    model, tok = load_model(shared_file("models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    server = start(model, tok, name="smollm2", slots=2, capacity=256)
    yield server, model, tok
    server.stop(grace=1.0)


def test_smollm2_chat_is_generate_over_its_own_format(smol):
    server, model, tok = smol
    assert server.served.format.name == "smollm2" and not server.served.text_stops
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    r = client.chat.completions.create(model="smollm2", messages=MESSAGES, max_tokens=24,
                                       temperature=0)
    fmt = server.served.format
    expected = list(generate(model, fmt.ids(tok, MESSAGES), 24, temperature=0, tokenizer=tok,
                             stop_ids=fmt.stop_ids(tok)))
    assert r.choices[0].message.content == "".join(s.text for s in expected)
    assert r.choices[0].message.content.strip() and "<|im_end|>" not in r.choices[0].message.content
    assert r.usage.completion_tokens == sum(s.id is not None for s in expected)
    streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model="smollm2", messages=MESSAGES, max_tokens=24, temperature=0, stream=True))
    assert streamed == r.choices[0].message.content
