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
    "07_greedy_sampling_beam": [                          # low ends, then high ends
        {"CONTINUE": '{"很": {"好": 0.9, "不错": 0.05, "棒": 0.05}, "真": {"好": 0.9, "不错": 0.05, "棒": 0.05}, '
                     '"挺": {"好": 1.0}, "非常": {"好": 1.0}}',               # beam and greedy agree
         "BEAM": "1", "N_NEW": "2", "PROMPT": '"浣溪沙\\n"', "LENGTH_PENALTY": "0.0"},
        {"BEAM": "8", "N_NEW": "64", "LENGTH_PENALTY": "3.0"}],
    "08_context_and_cost": [
        {"parts": '{"system instructions": 0, "conversation history": 30_000}', "TOY_WINDOW": "1",
         "NAME": '" Quillon"', "windows": "[1]", "PRICE_IN": "0.0", "PRICE_OUT": "0.0",
         "KEY_DAY": "1", "OVERLAP": "0", "SMALL_WINDOW": "48"},
        {"TOY_WINDOW": "len(TOY_TEXT)", "windows": "[len(ids), needed, needed // 2]", "PRICE_IN": "1000.0",
         "PRICE_OUT": "1000.0", "PLACES": '[" barrel", " cabin", " boat"]', "HIDDEN": '" boat"',
         "KEY_DAY": "16", "OVERLAP": "24", "SMALL_WINDOW": "min(128, model.config.n_ctx)"}],
    "09_options": [{"QUESTION": '"Which is a colour?\\nA. Blue\\nB. Seven\\nC. Dog\\nAnswer with A, B or C."',
                    "LETTERS": '["A", "B", "C"]', "FULL": '["A. Blue", "B. Seven", "C. Dog"]', "ANSWER": '"A"',
                    "PRESET": '"creative"', "POSITION_BIAS": "[-5, -5, -5, -5]", "N_QUESTIONS": "1"},
                   {"POSITION_BIAS": "[5, -5, 5, -5]", "N_QUESTIONS": "2"}],   # 20 questions: the default
    "10_training": [{"settings": "TrainSettings(steps=10, batch=1, lr=1e-5, min_lr=1e-5, warmup=2, eval_every=5, "
                                 "eval_windows=4, log_every=2, checkpoint_every=10, seed=1)",
                     "config": "ModelConfig(vocab_size=tok.vocab_size, n_ctx=8, d_model=8, n_heads=2, n_layers=1)",
                     "PEEK_STEPS": "20", "TINY_TOKENS": "config.n_ctx + 1"},
                    {"settings": "TrainSettings(steps=20, batch=64, lr=1.0, min_lr=1e-1, warmup=2, eval_every=10, "
                                 "eval_windows=4, log_every=2, checkpoint_every=20, seed=1)",   # lr 1: the loss rises first
                     "config": "ModelConfig(vocab_size=tok.vocab_size, n_ctx=128, d_model=256, n_heads=4, n_layers=1)",
                     "PEEK_STEPS": "500", "TINY_TOKENS": "len(train_ids)"},
                    {"settings": "TrainSettings(steps=10, batch=2, lr=3e-3, min_lr=3e-4, warmup=2, eval_every=5, "
                                 "eval_windows=4, log_every=2, checkpoint_every=10, seed=1)",
                     "config": "ModelConfig(vocab_size=tok.vocab_size, n_ctx=16, d_model=16, n_heads=2, n_layers=4)"}],
    "11_thinking_is_tokens": [{"QUESTION": '"What is 2 + 5?"', "ANSWER": '"7"', "LIMITS": '{"direct": 1, "step by step": 2}',
                               "PROMPTS": '{"direct": QUESTION + " Just the number.", '
                                          '"step by step": QUESTION + " Think it through."}',
                               "TOY_DIGITS": "1", "N_PROBLEMS": "1", "MEASURE_LIMIT": "1",
                               "PRICE_IN_PER_M": "0.0", "PRICE_OUT_PER_M": "0.0", "TRACE_LENGTHS": "[1]",
                               "REPEATS": "1"},
                              {"TOY_DIGITS": "12", "LIMITS": '{"direct": 256, "step by step": 256}', "N_PROBLEMS": "1",
                               "MEASURE_LIMIT": "256", "PRICE_IN_PER_M": "1000.0", "PRICE_OUT_PER_M": "1000.0",
                               "TRACE_LENGTHS": "[1_000_000]", "REPEATS": "10"}],
    "12_past_the_memory_bound": [
        {"gpt2": "ModelConfig(vocab_size=50257, n_ctx=1024, d_model=1024, n_heads=16, n_layers=24)", "BATCH_SIZES": "(1,)",
         "BUDGETS": "[1]", "SLOTS": "1", "VERSE": '"JULIET:\\nO Romeo, Romeo!\\n"', "NUM_DRAFT": "1"},
        {"BATCH_SIZES": "(32,)", "BUDGETS": "[60]", "SLOTS": "12", "NUM_DRAFT": "12"}],
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


# A knob turned past its stated range stops the notebook where the knob is set, with a message that
# names the knob and the range its "Try this" states (nbhelpers.knob_range), not somewhere later.
OUT_OF_RANGE = {
    "07_greedy_sampling_beam": ("BEAM", "0", "from 1 to 8"),
    "08_context_and_cost": ("TOY_WINDOW", "0", "from 1 to 22"),
    "09_options": ("POSITION_BIAS", "[9, 0, 0, 0]", "from -5 to 5"),
    "10_training": ("settings", "TrainSettings(steps=5)", "from 10 to 2000"),
    "11_thinking_is_tokens": ("TOY_DIGITS", "13", "from 1 to 12"),
    "12_past_the_memory_bound": ("SLOTS", "0", "from 1 to 12"),
}


@pytest.mark.parametrize("name", sorted(OUT_OF_RANGE))
def test_a_knob_outside_its_range_is_named_with_the_range(name, tmp_path):
    knob, value, says = OUT_OF_RANGE[name]
    script = tmp_path / f"{name}.py"
    script.write_text(with_knobs((SOURCES / f"{name}.py").read_text(encoding="utf-8"), {knob: value}),
                      encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(REPO / "notebooks")}
    done = subprocess.run([sys.executable, str(script)], cwd=REPO / "notebooks", env=env,
                          capture_output=True, text=True, timeout=600)
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    assert done.returncode != 0 and last.startswith("ValueError") and says in last, \
        f"{name} with {knob} = {value}: expected a ValueError naming the range ({says}); got:\n{done.stderr[-1500:]}"


def test_knob_range_names_the_knob_and_its_range():
    sys.path.insert(0, str(REPO / "notebooks"))
    import nbhelpers
    nbhelpers.knob_range("BEAM", 3, 1, 8)
    nbhelpers.knob_range("SIZES", [1, 32], 1, 32)
    for bad in (0, 9, 2.5 + 7, True, "3", [1, 33]):
        with pytest.raises(ValueError, match=r"BEAM = .*from 1 to 8"):
            nbhelpers.knob_range("BEAM", bad, 1, 8)
