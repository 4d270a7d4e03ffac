"""Parity with Hugging Face transformers ``generate`` (fixtures from scripts/make_*_fixtures.py).

Greedy: the 20 new tokens of ``generate(do_sample=False, max_new_tokens=20)`` exactly.
Beam search: ``generate(num_beams=B, num_return_sequences=B, do_sample=False, ...)`` for every run
in generation.json (with and without EOS, length_penalty 0.5 / 1 / 2, early_stopping False / True /
"never", minillm's "heuristic" / "pool_full" / "never"): the same sequences (HF pads finished ones with pad_token_id after EOS) and
``sequences_scores`` to an absolute 1e-4. The fixtures were drawn so that every ranking decision
has a margin >= 1e-3, so float32 rounding cannot flip a choice.
"""
import json

import numpy as np
import pytest

from minillm.decoding.beam import beam_search
from minillm.decoding.generate import generate
from minillm.io.safetensors import load_safetensors
from minillm import GPT
from tests.conftest import FIXTURES

EARLY_STOPPING = {False: "heuristic", True: "pool_full", "never": "never"}   # HF's -> minillm's
NAMES = sorted(p.parent.name for p in FIXTURES.glob("*/generation.json"))


def load(name):
    d = FIXTURES / name
    return (GPT.from_pretrained(d), load_safetensors(d / "expected.safetensors"),
            json.loads((d / "generation.json").read_text()))


@pytest.mark.parametrize("name", NAMES)
def test_greedy_20_tokens_equal_hf_generate(name):
    model, expected, _ = load(name)
    prompt = expected["greedy_prompt"][0]
    got = [s.id for s in generate(model, prompt, 20, temperature=0, stop_at_eos=False)]  # HF: eos None
    assert got == expected["greedy_ids"][0].tolist()


@pytest.mark.parametrize("name", NAMES)
def test_beam_search_equals_hf_generate(name):
    model, expected, meta = load(name)
    prompt = expected["greedy_prompt"][0]
    runs = {k: v for k, v in meta["runs"].items() if "num_beams" in v}
    assert runs, f"{name} has no beam runs"
    for run, kw in runs.items():
        hyps = beam_search(model, prompt, beam_size=kw["num_beams"],
                           max_new_tokens=kw["max_new_tokens"], length_penalty=kw["length_penalty"],
                           stop_ids=[kw["eos_token_id"]] if "eos_token_id" in kw else [],
                           stop_at_eos=False,                  # the given id replaces the model's
                           early_stopping=EARLY_STOPPING[kw["early_stopping"]],
                           num_return_sequences=kw["num_return_sequences"])
        seqs = expected[f"{run}_sequences"][:, len(prompt):]                 # [R, W] new tokens
        width, fill = seqs.shape[1], kw.get("pad_token_id")
        ours = np.array([h.ids + [fill] * (width - len(h.ids)) for h in hyps])
        np.testing.assert_array_equal(ours, seqs, err_msg=f"{name} {run}")
        np.testing.assert_allclose([h.score for h in hyps], expected[f"{run}_scores"], atol=1e-4,
                                   err_msg=f"{name} {run}")
