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
    # 01-06: each knob at both ends of the range its "Try this" states (a low run, a high run)
    "01_tokens": [
        {"SENTENCE": '"海"', "TOY_WORD": 'b"a"', "TOY_RANKS": "{}", "PHRASES": '["红"]', "TRAIN_VOCAB": "257"},
        {"SENTENCE": '"大海常呈蓝色。" * 71 + "海水海"', "TOY_WORD": 'b"abcdabcdabcdabcd"',
         "TOY_RANKS": '{b"ab": 0, b"cd": 1, b"abcd": 99}', "PHRASES": '["红光", "蓝光", "大海", "蓝色"]',
         "TRAIN_VOCAB": "2048"}],
    "02_embeddings": [
        {"TOY_IDS": "[0]", "CHARS": '["春"]', "GROUPS": '{"numbers": [" one", " two"], "family": [" mother", " father"]}'},
        {"TOY_IDS": "[0, 1, 2, 2, 1, 0, 1, 2]", "CHARS": 'list("春秋月花山水酒愁红东西南")',
         "GROUPS": '{"colours": [" red", " blue", " green", " yellow", " black", " white", " brown", " grey"], '
                   '"numbers": [" one", " two", " three", " four", " five", " six", " seven", " eight"], '
                   '"family": [" mother", " father", " brother", " sister", " son", " daughter", " uncle", " aunt"], '
                   '"places": [" London", " Paris", " Rome", " France", " England", " Italy", " Spain", " Berlin"], '
                   '"animals": [" dog", " cat", " horse", " cow", " bird", " fish", " sheep", " lion"], '
                   '"body": [" hand", " head", " eye", " heart", " face", " arm", " foot", " leg"]}'}],
    "03_attention": [
        {"Q": "np.full((4, 4), -10.)", "K": "np.full((4, 4), -10.)", "V": "np.full((4, 4), -10.)",
         "SENTENCE": '"sea light it"', "QUERY": '" it"', "TARGET": '"sea"', "OTHER": '" light"',
         "layers": "[0]", "heads": "[0]", "ZH_PAIR": '("猫书它", "书猫它", "猫", "书")',
         "X_src": "np.full((3, 4), -5.)", "Y_tgt": "np.full((2, 4), -5.)", "TURNS": "1", "USER": "1", "ANSWER": "1"},
        {"Q": "np.full((4, 4), 10.)", "K": "np.full((4, 4), 10.)", "V": "np.full((4, 4), 10.)",
         "SENTENCE": 'tok.decode(tok.encode("The sea absorbs most of the red light and it scatters the blue. " * 6)[:64])',
         "layers": "[0, 1, c.n_layers - 2, c.n_layers - 1]", "heads": "[0, 1, c.n_heads - 2, c.n_heads - 1]",
         "ZH_PAIR": '("我有一本很旧的书和一只很小的猫。今天早上我喂了它。", "我有一本很旧的书和一只很小的猫。今天早上我读了它。", "猫", "书")',
         "X_src": "np.full((3, 4), 5.)", "Y_tgt": "np.full((2, 4), 5.)", "TURNS": "100", "USER": "10_000",
         "ANSWER": "10_000"}],
    "04_autoregressive": [
        {"TOY_TEXT": '"a b"', "TOY_START": '"a"', "PROMPT": '"T"', "N_NEW": "1", "TRAIN_TEXT": '"I love"',
         "NEW_WORD": '"x"'},
        {"TOY_TEXT": '" ".join(f"w{i % 37}" for i in range(200))', "TOY_START": '"w5"',
         "PROMPT": '("But soft, what light through yonder window breaks? It is the east, and Juliet is the sun. "'
                   '"Arise, fair sun, and kill the envious moon, who is already sick and pale with grief.")[:100]',
         "N_NEW": "16", "TRAIN_TEXT": '"I love coding. " * 5 + "abcde"', "NEW_WORD": '" abcdefghijklmnopqr"'}],
    "05_kv_cache": [
        {"N_TOY": "1", "D": "1", "N_NEW": "1", "LENGTHS": "[16, 24, 32, 48]",
         "PROMPT": '("ROMEO.\\nBut soft, what light through yonder window breaks? It is the east, and Juliet is the "'
                   '"sun. Arise, fair sun, and kill the envious moon, who is already sick and pale with grief.")[:200]'},
        {"N_TOY": "64", "D": "64", "PROMPT": '"R"', "N_NEW": "100",
         "LENGTHS": "[16, 32, 64, 128, 256, 512, 768, 1024]"}],
    "06_sampling": [
        {"article_table": "{0.1: [0.97, 0.01, 0.01, 0.01]}", "PROMPTS": '["Hi"]', "MIN_P": "0.01",
         "PRESETS": '{n: Sampler(temperature=0.1, top_k=0, top_p=0.05) for n in ("code", "qa", "chat", "creative")}'},
        {"article_table": "{0.1: [0.97, 0.01, 0.01, 0.01], 0.5: [0.64, 0.24, 0.09, 0.03], 1.0: [0.5, 0.3, 0.15, 0.05], "
                          "2.0: [0.33, 0.27, 0.22, 0.18], 10: [0.26, 0.25, 0.25, 0.24]}",
         "PROMPTS": '["a", "b", "c", "d", "e", "f"]', "MIN_P": "1.0",
         "PRESETS": '{n: Sampler(temperature=2, top_k=1000, top_p=1.0) for n in ("code", "qa", "chat", "creative")}'}],
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
    "13_build_it": [{"PROMPT": '"JULIET.\\n"', "N_NEW": "5", "BPE_TEXT": '"aaabdaaabac"', "N_MERGES": "3",
                     "QUESTION": '"What is the capital of Italy?"'}],
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


# One knob per notebook just outside the range its "Try this" states: the run stops with a
# ValueError naming the knob and the range (nbhelpers.knob), at the knob's own cell.
OUT_OF_RANGE = {
    "01_tokens": ("SENTENCE", '""', "a str of 1 to 500 characters"),
    "02_embeddings": ("TOY_IDS", "[3]", "each 0, 1 or 2"),
    "03_attention": ("Q", "np.ones((3, 3))", "a 4 × 4 array"),
    "04_autoregressive": ("TOY_START", '"nowhere"', "one of the words of TOY_TEXT"),
    "05_kv_cache": ("N_TOY", "65", "a whole number from 1 to 64"),
    "06_sampling": ("article_table", "{20: [0.5, 0.3, 0.15, 0.05]}", "T from 0.1 to 10"),
}


@pytest.mark.parametrize("name", sorted(OUT_OF_RANGE))
def test_a_knob_outside_its_range_is_refused_with_the_range(name, tmp_path):
    knob, value, allowed = OUT_OF_RANGE[name]
    script = tmp_path / f"{name}.py"
    script.write_text(with_knobs((SOURCES / f"{name}.py").read_text(encoding="utf-8"), {knob: value}),
                      encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(REPO / "notebooks")}
    done = subprocess.run([sys.executable, str(script)], cwd=REPO / "notebooks", env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0, f"{name} ran to the end with {knob} = {value}"
    refused = re.search(rf"ValueError: {knob} = .*? is outside its range: (.*)", done.stderr, re.S)
    assert refused and allowed in refused.group(1), done.stderr[-2000:]


def test_the_knob_helper_names_the_knob_its_value_and_the_range():
    sys.path.insert(0, str(REPO / "notebooks"))
    from nbhelpers import knob
    knob("N", 3, lambda n: 1 <= n <= 5, "1 to 5")                   # inside: nothing happens
    with pytest.raises(ValueError, match=r"^N = 9 is outside its range: 1 to 5\."):
        knob("N", 9, lambda n: 1 <= n <= 5, "1 to 5")
    with pytest.raises(ValueError, match=r"^N = 'x' is outside its range"):
        knob("N", "x", lambda n: 1 <= n <= 5, "1 to 5")              # cannot even be compared
    with pytest.raises(ValueError, match="is outside its range"):
        knob("N", 9, False, "1 to 5")
