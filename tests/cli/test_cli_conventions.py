"""The conventions a llama.cpp user brings, run as subprocesses: -m/-p/-n, the penalty flags,
``chat --stop``, a replayable seed on the timings line, and a sweep of bad inputs to generate and
chat (exit 2, one line naming the flag, never a traceback)."""
import json

import pytest

from minillm import load_model
from minillm.decoding.generate import generate
from tests.cli.subprocess_run import ROOT, minillm


def seed_of(err: str) -> str:
    return err.rsplit("| seed ", 1)[1].split()[0]


def test_short_flags_are_aliases_of_the_long_ones():
    long = minillm("generate", "--model", "weights/shakespeare", "--max-new-tokens", 5, "-t", 0,
                   "ROMEO:")
    short = minillm("generate", "-m", "weights/shakespeare", "-n", 5, "-t", 0, "-p", "ROMEO:")
    assert long[0] == short[0] == 0 and long[1] == short[1]


def test_an_unseeded_run_prints_its_seed_and_replaying_it_gives_the_same_text():
    code, out, err = minillm("generate", "-n", 20, "ROMEO:")
    seed = seed_of(err)
    code2, again, err2 = minillm("generate", "-n", 20, "--seed", seed, "ROMEO:")
    assert code == code2 == 0 and int(seed) >= 0 and again == out and f"seed {seed}" in err2


def test_penalty_flags_give_the_librarys_tokens():
    model, tok = load_model(ROOT / "weights" / "shakespeare")
    from minillm.sampling import Sampler
    sampler = Sampler(temperature=0.0, repetition_penalty=1.5, frequency_penalty=0.5,
                      presence_penalty=0.3)
    expected = [s.id for s in generate(model, tok.encode("ROMEO:"), 40, sampler=sampler,
                                       stop_ids=() if tok.eos_id is None else (tok.eos_id,))]
    code, out, err = minillm("generate", "--json-final", "-t", 0, "-n", 40, "--repeat-penalty",
                             1.5, "--frequency-penalty", 0.5, "--presence-penalty", 0.3, "ROMEO:")
    plain = json.loads(minillm("generate", "--json-final", "-t", 0, "-n", 40, "ROMEO:")[1])
    assert code == 0 and json.loads(out)["ids"] == expected != plain["ids"]


def test_chat_stop_ends_the_reply_before_the_stop_string(chat_gguf):
    args = ("chat", "-m", chat_gguf, "-n", 30, "--seed", 4, "-t", 1.0)
    code, full, _ = minillm(*args, stdin="Hi\n")
    reply = full.splitlines()[0]
    stop = next(c for c in reply[3:] if c.isalnum())        # a character well inside the reply
    code2, cut, err = minillm(*args, "--stop", stop, stdin="Hi\n")
    assert code == code2 == 0 and cut.splitlines()[0] == reply[:reply.index(stop)]
    assert "| seed 4" in err


def test_an_unseeded_chat_replays_with_its_seed(chat_gguf):
    code, out, err = minillm("chat", "-m", chat_gguf, "-n", 20, stdin="Hi\nWhat?\n")
    code2, again, _ = minillm("chat", "-m", chat_gguf, "-n", 20, "--seed", seed_of(err),
                              stdin="Hi\nWhat?\n")
    assert code == code2 == 0 and again == out


GENERATE_BAD = [
    (["--temprature", "1", "x"], "did you mean --temperature?"),
    (["--top_p", "0.5", "x"], "did you mean --top-p?"),
    (["--max-tokens", "5", "x"], "did you mean --max-new-tokens?"),
    (["--repeat_penalty", "1.1", "x"], "did you mean --repeat-penalty?"),
    (["--jsonn", "x"], "did you mean --json"),
    (["--zzzz", "x"], "unrecognized arguments: --zzzz; see minillm generate --help"),
    (["--top-p", "0", "x"], "--top-p must be in (0, 1]"),
    (["--top-p", "1.5", "x"], "--top-p must be in (0, 1]"),
    (["--min-p", "2", "x"], "--min-p must be in [0, 1]"),
    (["--top-k", "-1", "x"], "--top-k must be >= 0"),
    (["-t", "-1", "x"], "--temperature must be"),
    (["-t", "nan", "x"], "--temperature must be"),
    (["--repeat-penalty", "0", "x"], "--repeat-penalty must be > 0"),
    (["--repeat-penalty", "-2", "x"], "--repeat-penalty must be > 0"),
    (["--frequency-penalty", "inf", "x"], "--frequency-penalty must be finite"),
    (["--presence-penalty", "nan", "x"], "--presence-penalty must be finite"),
    (["--repeat-penalty", "abc", "x"], "--repeat-penalty"),
    (["-n", "-1", "x"], "--max-new-tokens must be"),
    (["-n", "ten", "x"], "--max-new-tokens"),
    (["--seed", "-3", "x"], "--seed"),
    (["--stop", "", "x"], "--stop strings must be non-empty"),
    ([""], "the prompt is empty"),
    (["-p", ""], "the prompt is empty"),
    ([], "generate needs a prompt"),
    (["-p", "a", "b"], "-p/--prompt"),
    (["--logprobs", "3", "x"], "--logprobs K goes with --json"),
    (["--json", "--logprobs", "0", "x"], "--logprobs must be an integer from 1 to"),
    (["--json", "--logprobs", "100", "x"], "--logprobs must be an integer from 1 to"),
    (["--json", "--json-final", "x"], "not allowed with argument"),
    (["--json", "--beams", "2", "x"], "--json/--json-final report sampled tokens"),
    (["--prompts", "nofile.jsonl"], "--prompts nofile.jsonl: no such file"),
    (["--prompts", "p.jsonl", "x"], "not allowed with argument"),
    (["--beams", "2", "--repeat-penalty", "1.2", "x"], "--beams is deterministic"),
]
CHAT_BAD = [
    (["--stopp", "x"], "did you mean --stop?"),
    (["--repeat-penalty", "0"], "--repeat-penalty must be > 0"),
    (["--top-p", "7"], "--top-p must be in (0, 1]"),
    (["--stop", ""], "--stop strings must be non-empty"),
    (["-n", "0"], "--max-new-tokens must be"),
]


@pytest.mark.parametrize("argv, message", GENERATE_BAD, ids=[" ".join(a) or "none" for a, _ in GENERATE_BAD])
def test_bad_generate_input_is_one_clear_line(argv, message):
    code, out, err = minillm("generate", *argv)
    assert code == 2 and message in err and "Traceback" not in err, err


@pytest.mark.parametrize("argv, message", CHAT_BAD, ids=[" ".join(a) for a, _ in CHAT_BAD])
def test_bad_chat_input_is_one_clear_line(chat_gguf, argv, message):
    code, out, err = minillm("chat", "-m", chat_gguf, *argv, stdin="Hi\n")
    assert code == 2 and message in err and "Traceback" not in err, err
