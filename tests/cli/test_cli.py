"""The command line behaves like its peers (llama.cpp, nanoGPT, HF pipelines): every point runs the
command, through ``main(argv)`` with capsys or as ``python -m minillm`` in a subprocess.

Models: the shipped weights/shakespeare; a tiny random Llama chat model with a trained ChatML
tokenizer, written as GGUF by minillm's own exporter.
"""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

from minillm import __version__
from minillm.cli import COMMANDS, main
from minillm.cli._threads import THREAD_VARIABLES, use_one_blas_thread
from minillm.cli.options import unescape
from minillm.decoding.generate import generate
from minillm.loading import load_model
from tests.cli.helpers import run_cli
from tests.conftest import REPO, shared_file

SHAKESPEARE = REPO / "weights" / "shakespeare"
PROMPT = "ROMEO:"


@pytest.fixture(scope="module")
def shakespeare():
    return load_model(SHAKESPEARE)




# ---- generate ------------------------------------------------------------------------------------
def test_generate_echoes_the_prompt_unless_no_echo(capsys, shakespeare):
    model, tok = shakespeare
    base = ["generate", "-t", "0", "--max-new-tokens", "8"]
    code, out, _ = run_cli(capsys, *base, PROMPT)
    steps = generate(model, tok.encode(PROMPT), 8, temperature=0, tokenizer=tok)
    text = "".join(s.text for s in steps)
    assert code == 0 and out == PROMPT + text + "\n"
    assert run_cli(capsys, *base, "--no-echo", PROMPT)[1] == text + "\n"


def test_generate_prints_one_timings_line_on_stderr(capsys, shakespeare):
    n = len(shakespeare[1].encode(PROMPT))
    code, _, err = run_cli(capsys, "generate", "--max-new-tokens", "7", "-t", "0", PROMPT)
    line = err.strip().splitlines()[-1]
    assert code == 0 and line.startswith(f"minillm: prompt {n} tokens ") and "tokens/s" in line
    share = f"{100 * (n + 7) / 128:.0f}%"
    assert "generated 7 tokens" in line and f"context {n + 7}/128 ({share}) | seed " in line
    code, _, err = run_cli(capsys, "generate", "--beams", "2", "--max-new-tokens", "3", PROMPT)
    assert code == 0 and "generated 3 tokens" in err and f"context {n + 3}/128" in err


def test_stop_takes_backslash_escapes_so_a_blank_line_stops(capsys, shakespeare):
    model, tok = shakespeare
    full = "".join(s.text for s in generate(model, tok.encode(PROMPT), 100, tokenizer=tok, seed=5))
    assert "\n\n" in full                                        # seed 5 writes a blank line
    code, out, _ = run_cli(capsys, "generate", "--seed", "5", "--max-new-tokens", "100",
                           "--stop", r"\n\n", PROMPT)
    assert code == 0 and out == PROMPT + full[:full.index("\n\n")] + "\n"


def test_unescape():
    assert unescape(r"\n\n") == "\n\n" and unescape(r"a\tb\x41\u00e9\\n") == "a\tbAé\\n"
    assert unescape(r"\q \x4") == r"\q \x4" and unescape("海\\n") == "海\n"


# ---- --help, --version, threads ------------------------------------------------------------------
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_help_shows_defaults_and_the_thread_setting(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and "default" in out and "OPENBLAS_NUM_THREADS" in out


def test_generate_help_names_each_default(capsys):
    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: 100)" in out and "(default: weights/shakespeare)" in out
    assert "(default: 1.0)" in out                                 # --length-penalty


def test_every_option_with_a_default_shows_it_in_help():
    """argparse prints no help line, hence no default, for an option without help=: --layers,
    --steps … of train showed none. Every option with a default now names it."""
    import argparse
    from minillm.cli import build_parser
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command, parser in sub.choices.items():
        for action in parser._actions:
            if action.default not in (None, False, argparse.SUPPRESS) and action.option_strings:
                assert action.help, f"{command} {action.option_strings[0]} has no help"


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"minillm {__version__}"


def test_one_blas_thread_is_set_and_the_program_restarted_once(monkeypatch):
    calls = []
    monkeypatch.setattr(os, "execv", lambda exe, argv: calls.append(argv))
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    started = ["-X", "utf8", "-m", "minillm", "count", "x.txt"]     # interpreter flags, then ours
    monkeypatch.setattr(sys, "orig_argv", ["python3", *started])
    use_one_blas_thread()                                          # numpy is loaded: restart
    assert calls == [[sys.executable, *started]]
    assert all(os.environ[name] == "1" for name in THREAD_VARIABLES)
    use_one_blas_thread()                                          # now set: no second restart
    assert len(calls) == 1


def test_a_users_thread_setting_is_kept(monkeypatch):
    monkeypatch.setattr(os, "execv", lambda *a: pytest.fail("restarted"))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    use_one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "2" and "OMP_NUM_THREADS" not in os.environ


def test_python_m_minillm_restarts_with_one_thread_and_runs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    env["PYTHONPATH"] = str(REPO)
    code = ("import os, runpy, sys; sys.argv = ['minillm', 'tokenize', 'hi']; "
            "print(os.environ.get('OPENBLAS_NUM_THREADS'), flush=True); "
            "runpy.run_module('minillm', run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    # the first interpreter prints None, then the restarted `python -m minillm` tokenizes
    assert done.returncode == 0 and done.stdout.splitlines()[0] == "None"
    assert done.stdout.splitlines()[-1] == "1 tokens"


# ---- one resolver: tokenize / count take generate's names -----------------------------------------
def test_tokenize_takes_a_model_folder_a_gguf_and_a_vocabulary(capsys, shakespeare, tmp_path):
    _, tok = shakespeare
    gguf = shakespeare[0].save_gguf(tmp_path / "s.gguf", tok)
    want = f"ids: {tok.encode('To be, or not')}"
    for option in (["--model", "weights/shakespeare"], ["--tokenizer", str(SHAKESPEARE)],
                   ["--tokenizer", str(gguf)], ["--model", str(gguf)]):
        code, out, _ = run_cli(capsys, "tokenize", *option, "To be, or not")
        assert code == 0 and out.splitlines()[1] == want, option
    assert run_cli(capsys, "tokenize", "--tokenizer", "cl100k", "hi")[1].splitlines()[1] == \
        "ids: [6151]"


def test_tokenize_takes_a_downloaded_models_name(capsys, monkeypatch):
    path = shared_file("models/SmolLM2-135M-Instruct.Q4_1.gguf")
    monkeypatch.setenv("MINILLM_HOME", str(path.parents[1]))
    code, out, _ = run_cli(capsys, "tokenize", "--tokenizer", "smollm2", "Hello 123")
    assert code == 0 and out.splitlines()[-1] == "5 tokens"            # digits one by one


def test_count_gives_chars_per_token_and_share_of_the_context(capsys, tmp_path, shakespeare):
    _, tok = shakespeare
    text = "To be, or not to be, that is the question.\n" * 10
    (tmp_path / "a.txt").write_text(text)
    n = len(tok.encode_ordinary(text))
    code, out, _ = run_cli(capsys, "count", "--model", "weights/shakespeare", str(tmp_path / "a.txt"))
    header, row = out.splitlines()
    assert code == 0 and header == "tokens\tchars\tchars/token\t% of 128\tfile"
    assert row.split("\t") == [str(n), str(len(text)), f"{len(text) / n:.2f}",
                               f"{100 * n / 128:.1f}%", str(tmp_path / "a.txt")]
    code, out, _ = run_cli(capsys, "count", "--context", "1000", str(tmp_path / "a.txt"))
    assert out.splitlines()[0].split("\t")[3] == "% of 1000"           # gpt2 tokens, 1000 window
    assert run_cli(capsys, "count", "--context", "0", str(tmp_path / "a.txt"))[0] == 2


@pytest.mark.parametrize("command", ["generate", "tokenize-model", "count-tokenizer", "export"])
def test_an_unknown_name_gets_a_list_of_what_is_accepted(capsys, command):
    argv = {"generate": ["generate", "--model", "gpt3", "Hi"],
            "tokenize-model": ["tokenize", "--model", "gpt3", "Hi"],
            "count-tokenizer": ["count", "--tokenizer", "gpt3"],
            "export": ["export", "gpt3", "--gguf", "x.gguf"]}[command]
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and "gpt3: not a folder, a file or a known download" in err
    assert "a .gguf file" in err and "smollm2" in err and "no model at" not in err


@pytest.mark.parametrize("command", ["tokenize", "count"])
def test_tokenize_model_error_named_the_tokenizer_option(capsys, command):
    """``tokenize --model gpt3`` said "--tokenizer gpt3: …" and listed what --tokenizer takes."""
    text = ["Hi"] if command == "tokenize" else []
    code, _, err = run_cli(capsys, command, "--model", "gpt3", *text)
    assert code == 2 and "--model gpt3: not a folder" in err and "--tokenizer" not in err


def test_tokenizer_error_lists_the_downloadable_tokenizer(capsys):
    """The list of what --tokenizer takes left out deepseek-v4, which --help names."""
    code, _, err = run_cli(capsys, "tokenize", "--tokenizer", "gpt3", "Hi")
    assert code == 2 and "a downloaded tokenizer (deepseek-v4)" in err


def test_model_gpt2_says_it_is_a_vocabulary(capsys):
    code, _, err = run_cli(capsys, "generate", "--model", "gpt2", "Hi")
    assert code == 2 and "use --tokenizer gpt2" in err


# ---- chat ----------------------------------------------------------------------------------------
def test_chat_help_context_and_timings(capsys, monkeypatch, chat_gguf):
    turns = "/help\nHello!\n/context\nWhat is the capital?\n/exit\nnot read\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(turns))
    code, out, err = run_cli(capsys, "chat", "--model", str(chat_gguf), "--seed", "0",
                             "--max-new-tokens", "5")
    assert code == 0 and out.count("\n") == 2                      # two replies, nothing else
    assert "/context" in err and "/reset" in err                   # the /help text
    timings = [line for line in err.splitlines() if line.startswith("minillm: prompt")]
    assert len(timings) == 2 and all("/128" in line for line in timings)
    assert all("cached)" in line for line in timings)   # the system prompt, then the first turn
    assert any(line.startswith("context: ") and "/128 tokens" in line for line in err.splitlines())


# ---- export --------------------------------------------------------------------------------------
def test_export_writes_a_gguf_that_loads_with_the_same_logits(capsys, tmp_path, shakespeare):
    code, out, err = run_cli(capsys, "export", "weights/shakespeare", "--gguf",
                             str(tmp_path / "s.gguf"), "--dtype", "f32")
    assert code == 0 and out.strip() == str(tmp_path / "s.gguf") and "f32" in err
    model, tok = shakespeare
    back, back_tok = load_model(tmp_path / "s.gguf")
    ids = np.array(tok.encode("To be, or not to be"))
    np.testing.assert_array_equal(back(ids), model(ids))


def test_export_refuses_a_pattern_llama_cpp_cannot_name(capsys, tmp_path):
    code, _, err = run_cli(capsys, "export", "weights/songci", "--gguf", str(tmp_path / "x.gguf"))
    assert code == 2 and "no pre-tokenizer name" in err and not (tmp_path / "x.gguf").exists()
