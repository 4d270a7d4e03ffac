"""The real model: SmolLM2-135M-Instruct (Q4_1 GGUF) answers, and matches Hugging Face.

Needs the 93 MB model file (``shared_file("models/…")``; skipped with the reason when absent;
``python -m minillm download smollm2`` fetches it for a user). Reference: tests/fixtures/
smollm2_logits (scripts/make_smollm2_fixtures.py: transformers 5.24.0 ``LlamaForCausalLM`` on the
same file, dequantised by gguf-py and un-permuted by transformers' own GGUF loader). Tolerance
2e-4 on logits up to ~38 in size: 30 float32 layers summed in a different order (observed
max |Δ| 1.0e-4). BLAS is held to one thread where threadpoolctl is available: under pytest -n 2
two workers × two BLAS threads on two cores spin-wait and run ~100x slower.
"""
import contextlib

import numpy as np
import pytest

from minillm.decoding.batch import generate_batch
from minillm.decoding.beam import beam_search
from minillm.chat.conversation import Chat
from minillm.chat.chatml import DEFAULT_SYSTEM, chatml_ids, render_chatml, stop_ids
from minillm.decoding.generate import generate
from minillm.io.gguf.read import read_gguf
from minillm.loading import load_gguf_model
from minillm.io.safetensors import load_safetensors
from tests.conftest import FIXTURES, shared_file

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture(scope="module")
def path():
    return shared_file("models/SmolLM2-135M-Instruct.Q4_1.gguf")


@pytest.fixture(scope="module", params=[True, False], ids=["engine", "plain"])
def smollm2(path, request):
    """The engine's model (the default) and the model of plain arrays (fast=False)."""
    return load_gguf_model(path, fast=request.param)


@pytest.fixture(scope="module")
def expected():
    return load_safetensors(FIXTURES / "smollm2_logits" / "expected.safetensors")


@pytest.fixture(autouse=True)
def one_blas_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        limits = contextlib.nullcontext()
    else:
        limits = threadpool_limits(1)
    with limits:
        yield


def test_config_read_from_metadata(smollm2):
    c = smollm2[0].config
    assert (c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.d_ff, c.vocab_size, c.n_ctx) == \
        (30, 576, 9, 3, 1536, 49152, 8192)
    assert c.tie_embeddings and c.rope_theta == 100000.0 and not c.attn_bias
    assert (c.bos_id, c.eos_id) == (1, 2)


def test_template_inserts_our_default_system_prompt(path):
    """minillm renders ChatML itself; the file's Jinja template must say what chatml.py does."""
    template = read_gguf(path).metadata["tokenizer.chat_template"]
    assert "messages[0]['role'] != 'system'" in template
    assert f"'<|im_start|>system\n{DEFAULT_SYSTEM}<|im_end|>\n'" in template   # real newlines
    assert "'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'" \
        in template
    assert "'<|im_start|>assistant\n'" in template


def test_a_re_export_keeps_every_key_llama_cpp_wrote(smollm2, path, tmp_path):
    """Regression: re-exporting lost tokenizer.chat_template, general.*, the padding id and
    add_space_prefix. Now every key of llama.cpp's conversion comes back with its value and GGUF
    type; only the tensor encoding's keys change (Q4_1 -> F32)."""
    model, tok = smollm2
    before = read_gguf(str(path)).metadata
    after = read_gguf(str(model.save_gguf(tmp_path / "s.gguf", tok))).metadata
    changed = {k for k in before
               if (before[k], before.types[k]) != (after.get(k), after.types.get(k))}
    assert changed == {"general.file_type", "general.quantization_version"}
    assert after["general.file_type"] == 0 and "general.quantization_version" not in after
    assert set(after) <= set(before)
    assert after["tokenizer.chat_template"].startswith("{% for message in messages %}")


def test_prompt_ids_equal_the_reference_prompt(smollm2, expected):
    _, tok = smollm2
    ids = chatml_ids(tok, QUESTION)
    assert ids == expected["ids"].tolist()
    assert ids == tok.encode(render_chatml(QUESTION), allowed_special="all")
    assert stop_ids(tok) == (0, 2)


def test_logits_match_hf_within_2e_4(smollm2, expected):
    model, _ = smollm2
    logits = model(expected["ids"])                                  # [T, V]
    assert np.abs(logits[-1] - expected["last_logits"]).max() <= 2e-4
    got_top = np.take_along_axis(logits, expected["top5_ids"], axis=1)  # [T, 5]
    assert np.abs(got_top - expected["top5_logits"]).max() <= 2e-4
    lse = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
    assert np.abs(lse - expected["logsumexp"]).max() <= 2e-4
    assert (logits.argmax(-1) == expected["top5_ids"][:, 0]).all()


def test_greedy_answer_names_paris_as_hf_does(smollm2, expected):
    model, tok = smollm2
    steps = list(generate(model, expected["ids"], 24, temperature=0, stop_ids=stop_ids(tok),
                          tokenizer=tok))
    want = expected["greedy_ids"].tolist()                          # HF keeps the stop id
    assert [s.id for s in steps] + [2] == want
    answer = "".join(s.text for s in steps)
    assert "Paris" in answer
    assert Chat(model, tok, max_new_tokens=24, temperature=0).ask(QUESTION[0]["content"]) == answer


def test_generation_ends_at_im_end_by_default(smollm2, expected):
    """SmolLM2's own metadata names <|im_end|> (2) as its EOS (tokenizer.ggml.eos_token_id), so
    with no stop ids given a ChatML reply ends there, where HF's generate ends it."""
    model, tok = smollm2
    assert model.config.eos_ids == (2,) and tok.special_tokens["<|im_end|>"] == 2
    prompt = chatml_ids(tok, QUESTION)
    want = expected["greedy_ids"].tolist()                          # ends with 2
    assert [s.id for s in generate(model, prompt, 24, temperature=0)] == want[:-1]
    assert generate_batch(model, [prompt], 24, temperature=0) == [want[:-1]]
    (best,) = beam_search(model, prompt, beam_size=1, max_new_tokens=24)
    assert best.ids == want                                         # beams keep the EOS, as HF's
    past = [s.id for s in generate(model, prompt, len(want) + 2, temperature=0, stop_at_eos=False)]
    assert past[:len(want)] == want and len(past) == len(want) + 2  # runs on past <|im_end|>
