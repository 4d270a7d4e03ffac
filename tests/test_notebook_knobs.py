"""Every knob bends: each notebook's source runs again with other values for every knob its
"Try this" cell names (the defaults run as the notebooks themselves, under nbmake). A run passes
when it ends without an exception: what holds only at the defaults is printed as a checked claim
(nbhelpers.claim), not asserted. How a knob is set: tests/notebook_knobs.py.

Values are chosen cheap (short prompts, few tokens, small vocabularies) so the whole test stays
within a few minutes of CI on 2 cores; several knobs of a notebook share one run.
"""
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.notebook_knobs import with_knobs

SOURCES = REPO / "scripts" / "notebook_sources"

KNOBS = {
    "01_tokens": [
        {"SENTENCE": '"The sea looks blue: water absorbs red light."', "TOY_WORD": 'b"abcabc"',
         "TOY_RANKS": '{b"bc": 0, b"abc": 1, b"ca": 2}', "PHRASES": '["海水", "蓝色"]',
         "TRAIN_VOCAB": "300"}],
    "02_embeddings": [
        {"TOY_IDS": "[0, 0, 2]", "CHARS": 'list("山水")', "GROUPS": '{"animals": [" cat", " dog", " horse"], '
                                                                   '"numbers": [" one", " two", " three"]}'}],
    "03_attention": [
        {"Q": "np.eye(4)", "K": "np.ones((4, 4))", "V": "np.arange(16.0).reshape(4, 4)",
         "SENTENCE": '"Water absorbs red light, so it looks blue."', "QUERY": '" so"',
         "TARGET": '"Water"', "OTHER": '" light"', "layers": "[1]", "heads": "[0]",
         "X_src": "np.array([[1., 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1]])",
         "Y_tgt": "np.array([[1., 1, 0, 0], [0, 0, 1, 1]])", "TURNS": "1", "USER": "10", "ANSWER": "5"}],
    "04_autoregressive": [{"PROMPT": '"Once upon a time"', "N_NEW": "3", "TRAIN_TEXT": '"We like tea"',
                           "NEW_WORD": '" red"'}],
    "05_kv_cache": [{"N_TOY": "3", "D": "2", "PROMPT": '"JULIET.\\n"', "N_NEW": "5",
                     "LENGTHS": "[16, 32, 64, 128]"}],
    "06_sampling": [{"article_table": "{0.5: [0.6, 0.25, 0.1, 0.05], 1.0: [0.5, 0.3, 0.15, 0.05], "
                                      "1.5: [0.4, 0.3, 0.2, 0.1]}",
                     "PROMPTS": '["The sky is", "Two plus two is"]', "MIN_P": "0.3",
                     "PRESETS": '{**PRESETS, "chat": Sampler(temperature=0.7, top_k=20, top_p=0.5)}'}],
    "07_greedy_sampling_beam": [
        {"CONTINUE": '{"很": {"好": 0.9, "不错": 0.05, "棒": 0.05}, "真": {"好": 0.9, "不错": 0.05, "棒": 0.05}, '
                     '"挺": {"好": 1.0}, "非常": {"好": 1.0}}',               # beam and greedy agree
         "BEAM": "2", "N_NEW": "6", "PROMPT": '"浣溪沙\\n"', "LENGTH_PENALTY": "0.0"}],
    "08_context_and_cost": [{"parts": '{"system instructions": 500, "conversation history": 30_000}',
                             "NAME": '" Quillon"', "windows": "[len(ids), needed, needed // 2]",
                             "PRICE_IN": "1.0", "PRICE_OUT": "4.0",
                             "KEY_DAY": "10", "HIDDEN": '" boat"', "OVERLAP": "20", "SMALL_WINDOW": "64"}],
    "09_options": [{"QUESTION": '"Which is a colour?\\nA. Blue\\nB. Seven\\nC. Dog\\nAnswer with A, B or C."',
                    "LETTERS": '["A", "B", "C"]', "FULL": '["A. Blue", "B. Seven", "C. Dog"]',
                    "PRESET": '"creative"'}],
    "10_training": [{"settings": "TrainSettings(steps=60, batch=8, lr=1e-2, min_lr=1e-3, warmup=5, eval_every=20, "
                                 "eval_windows=8, log_every=10, checkpoint_every=60, seed=1)",
                     "config": "ModelConfig(vocab_size=tok.vocab_size, n_ctx=64, d_model=32, n_heads=2, n_layers=1)",
                     "TINY_TOKENS": "400"}],
    "11_thinking_is_tokens": [{"QUESTION": '"What is 2 + 5?"', "LIMITS": '{"direct": 8, "step by step": 16}',
                               "PROMPTS": '{"direct": QUESTION + " Just the number.", '
                                          '"step by step": QUESTION + " Think it through."}',
                               "PRICE_IN_PER_M": "1.0", "PRICE_OUT_PER_M": "4.0", "TRACE_LENGTHS": "[50]",
                               "REPEATS": "1"}],
    "12_past_the_memory_bound": [
        {"gpt2": "ModelConfig(vocab_size=50257, n_ctx=1024, d_model=1024, n_heads=16, n_layers=24)", "BATCH_SIZES": "(1, 2)",
         "BUDGETS": "[3, 5]", "SLOTS": "2", "VERSE": '"JULIET:\\nO Romeo, Romeo!\\n"', "NUM_DRAFT": "3"}],
    "13_formulas": [  # each knob at both ends of its stated range
        {"DIMS": "[1]", "SAMPLES": "1_000", "SHARPNESS": "0.5", "THETA": "10", "PAIRS": "1", "OFFSET": "-100",
         "GELU_RANGE": "1", "N_HEADS": "1", "N_KV": "1"},
        {"DIMS": "[1024]", "SAMPLES": "50_000", "SHARPNESS": "20", "THETA": "1_000_000", "PAIRS": "32",
         "OFFSET": "100", "GELU_RANGE": "10", "N_HEADS": "32", "N_KV": "32"}],
    "14_build_it": [  # each knob at both ends of its stated range
        {"PROMPT": '"J"', "N_NEW": "1", "BPE_TEXT": '"ab"', "N_MERGES": "1", "QUESTION": '"What is the capital of Italy?"'},
        {"PROMPT": '"ROMEO. " * 11 + "ROMEO"', "N_NEW": "40", "BPE_TEXT": '"aaabdaaabac" * 20', "N_MERGES": "50"}],
}
CASES = [(name, i) for name, runs in KNOBS.items() for i in range(len(runs))]


def named_knobs(name: str) -> set[str]:
    """The backticked names in the notebook's "Try this" paragraphs (its first, and those of
    later sections)."""
    text = (SOURCES / f"{name}.py").read_text(encoding="utf-8")
    paragraphs = re.findall(r"\*\*Try this:\*\*(.*?)(?:\n#?\s*\n|\n# %%)", text, re.S)
    return {knob for paragraph in paragraphs for knob in re.findall(r"`(\w+)`", paragraph)}


def test_every_notebook_has_knob_runs_for_every_knob_it_names():
    assert sorted(KNOBS) == sorted(p.stem for p in SOURCES.glob("[0-9][0-9]_*.py"))
    missing = {name: named_knobs(name) - {k for run in runs for k in run} for name, runs in KNOBS.items()}
    assert not any(missing.values()), f"knobs named in 'Try this' but never turned: {missing}"


def test_a_knob_is_set_right_after_its_first_binding():
    source = "import numpy as np\nA, B = 1, 2\nC = {\n  1: 2}\nprint(A + B, C)\n"
    changed = with_knobs(source, {"B": "5", "C": "{}", "np": "None"})
    namespace = {}
    exec(changed, namespace)
    assert (namespace["A"], namespace["B"], namespace["C"], namespace["np"]) == (1, 5, {}, None)
    with pytest.raises(ValueError, match="no top-level assignment of 'Z'"):
        with_knobs(source, {"Z": "1"})


@pytest.mark.parametrize("name, run", CASES, ids=lambda v: str(v))
def test_the_notebook_runs_with_other_knob_values(name, run, tmp_path):
    knobs = KNOBS[name][run]
    script = tmp_path / f"{name}.py"
    script.write_text(with_knobs((SOURCES / f"{name}.py").read_text(encoding="utf-8"), knobs),
                      encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(REPO / "notebooks")}
    done = subprocess.run([sys.executable, str(script)], cwd=REPO / "notebooks", env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{name} with {knobs}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
