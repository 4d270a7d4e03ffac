"""The CLI without surprises: chat's commands and its one context count, which tokenizer
`tokenize` / `count` used, `count` waiting at a terminal, `generate --prompt-file`. Each point runs
the command (``main(argv)`` with capsys, or ``python -m minillm`` on a pseudo-terminal)."""
import io
import os
import pty
import re
import subprocess
import sys

import pytest

from minillm.cli import main
from minillm.cli._threads import THREAD_VARIABLES
from minillm.decoding.generate import generate
from minillm.loading import load_model
from tests.cli.helpers import run_cli
from tests.conftest import REPO


def chat(capsys, monkeypatch, chat_gguf, turns: str):
    monkeypatch.setattr(sys, "stdin", io.StringIO(turns))
    return run_cli(capsys, "chat", "--model", str(chat_gguf), "--seed", "0",
                   "--max-new-tokens", "6")


# ---- chat ----------------------------------------------------------------------------------------
def test_an_unknown_command_is_answered_locally_with_the_list(capsys, monkeypatch, chat_gguf):
    """Regression: `/foo` was sent to the model as a message."""
    code, out, err = chat(capsys, monkeypatch, chat_gguf, "/foo\n/help me\n")
    assert code == 0 and out == ""                                   # no reply was generated
    assert "unknown command '/foo'" in err and "unknown command '/help'" in err
    assert err.count("/context  how much") == 2 and "minillm: prompt" not in err


def test_stats_context_and_cached_are_one_count_also_after_reset(capsys, monkeypatch, chat_gguf):
    """Regression: the stats line, /context and the next turn's cached count gave three numbers
    (65, 70, 62) for one conversation, and /context said 4 tokens after /reset."""
    turns = "/context\nHello!\n/context\nWhat is the capital?\n/context\n/reset\nHi\n"
    code, _, err = chat(capsys, monkeypatch, chat_gguf, turns)
    # the events in order: ("context", n) from /context or /reset, ("turn", cached, context)
    events = []
    for line in err.splitlines():
        if m := re.match(r"context: (\d+)/128", line):
            events.append(("context", int(m[1])))
        elif m := re.match(r"minillm: prompt \d+ tokens \((\d+) cached\).* context (\d+)/128", line):
            events.append(("turn", int(m[1]), int(m[2])))
    kinds = [e[0] for e in events]
    assert code == 0 and kinds == ["context", "turn", "context", "turn", "context", "context",
                                   "turn"]
    system, t1, c1, t2, c2, after_reset, t3 = events
    assert system[1] > 4                                     # the system prompt is counted
    assert t1[1] == system[1]                                # ... and cached from the start
    assert c1[1] == t1[2] == t2[1]                           # stats = /context = next cached
    assert c2[1] == t2[2] > c1[1]
    assert after_reset[1] == system[1] == t3[1]              # /reset keeps the system prompt


# ---- tokenize / count ----------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["tokenize", "count"])
def test_tokenize_and_count_name_the_tokenizer_they_used(capsys, command, tmp_path):
    (tmp_path / "t.txt").write_text("hello world")
    arg = "hello world" if command == "tokenize" else str(tmp_path / "t.txt")
    for options, named in (([], "tokenizer: gpt2 (default)"),
                           (["--tokenizer", "cl100k"], "tokenizer: cl100k (--tokenizer)"),
                           (["--model", "weights/shakespeare"],
                            "tokenizer: weights/shakespeare (the --model's)")):
        code, _, err = run_cli(capsys, command, *options, arg)
        assert code == 0 and named in err.splitlines()


def test_count_at_a_terminal_says_what_it_waits_for():
    """Regression: `count` with no input waited silently at a terminal. Run on a pseudo-terminal:
    the message comes first, then the text typed and Ctrl-D is counted."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    env["PYTHONPATH"] = str(REPO)
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "minillm", "count"], stdin=follower,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    os.close(follower)
    first = proc.stderr.readline() + proc.stderr.readline()  # the tokenizer line and the prompt
    assert "reading the text to count (or name FILEs) from standard input" in first
    os.write(leader, b"hello world\n\x04")                   # Ctrl-D ends the input
    out, err = proc.communicate(timeout=120)
    os.close(leader)
    assert proc.returncode == 0 and out.splitlines()[1].startswith("3\t12\t")   # "hello world\n"


def test_count_of_piped_input_prints_no_waiting_message(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello world"))
    code, out, err = run_cli(capsys, "count")
    assert code == 0 and "reading" not in err and out.splitlines()[1].startswith("2\t11\t")


# ---- generate --prompt-file ----------------------------------------------------------------------
def test_generate_takes_its_prompt_from_a_file_or_stdin(capsys, monkeypatch, tmp_path):
    model, tok = load_model(REPO / "weights" / "shakespeare")
    prompt = "ROMEO:\nBut soft, " + "what light " * 10          # (a file holds it exactly)
    (tmp_path / "p.txt").write_text(prompt, encoding="utf-8")
    text = "".join(s.text for s in generate(model, tok.encode(prompt), 6, temperature=0,
                                            tokenizer=tok))
    base = ["generate", "-t", "0", "--max-new-tokens", "6"]
    assert run_cli(capsys, *base, "--prompt-file", str(tmp_path / "p.txt"))[1] == prompt + text + "\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(prompt))
    assert run_cli(capsys, *base, "--prompt-file", "-")[1] == prompt + text + "\n"


def test_generate_prompt_and_prompt_file_are_mutually_exclusive(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["generate", "Hi", "--prompt-file", "p.txt"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "argument --prompt-file: not allowed with argument prompt" in err


@pytest.mark.parametrize("argv,message", [
    ([], "generate needs a prompt: PROMPT, or --prompt-file FILE"),
    (["--prompt-file", "missing.txt"], "--prompt-file missing.txt: no such file"),
    (["--prompt-file", "latin1.txt"], "--prompt-file latin1.txt: not UTF-8 text")])
def test_generate_prompt_errors_are_clear(capsys, monkeypatch, tmp_path, argv, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "latin1.txt").write_bytes("café".encode("latin-1"))
    code, out, err = run_cli(capsys, "generate", *argv)
    assert code == 2 and message in err and out == ""


def test_generate_piped_into_head_ended_with_a_broken_pipe_error():
    """Regression: `minillm generate … | head -1` printed 'error: Broken pipe' when head left."""
    reader = subprocess.Popen([sys.executable, "-m", "minillm", "generate", "--max-new-tokens",
                               "120", "--seed", "0", "ROMEO:"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    reader.stdout.readline()                 # read one line, then leave as `head -1` does
    reader.stdout.close()
    err = reader.stderr.read().decode()
    assert reader.wait(timeout=120) in (0, 141)   # 0 if it finished before the pipe closed
    assert "error" not in err and "Traceback" not in err, err
