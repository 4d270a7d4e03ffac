"""``generate --prompts FILE.jsonl`` as a subprocess: one result per line in the input's order,
each (greedy) equal to that prompt run alone; bad lines refused with their line number."""
import json

from tests.cli.subprocess_run import minillm

PROMPTS = ["ROMEO:", "JULIET:\nO Romeo", "First Citizen:\nBefore we proceed any further, hear me",
           "KING", "To be, or not", "A", "MENENIUS:", "What", "O, what a rogue"]   # > one batch (8)


def test_results_are_in_order_and_equal_each_prompt_alone(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in PROMPTS) + "\n")
    code, out, err = minillm("generate", "--prompts", path, "-t", "0", "-n", 8)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["index"] for r in rows] == list(range(len(PROMPTS)))
    assert [r["prompt"] for r in rows] == PROMPTS
    for p in (PROMPTS[0], PROMPTS[2], PROMPTS[-1]):      # three of them alone (subprocesses cost)
        code, alone, _ = minillm("generate", "--json-final", "-t", "0", "-n", 8, p)
        final = json.loads(alone)
        row = rows[PROMPTS.index(p)]
        assert code == 0 and row["ids"] == final["ids"] and row["text"] == final["text"]


def test_a_lines_own_max_new_tokens_cuts_only_that_row(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "ROMEO:", "max_new_tokens": 2}\n{"prompt": "ROMEO:"}\n')
    code, out, _ = minillm("generate", "--prompts", path, "-t", "0", "-n", 6)
    short, full = (json.loads(line) for line in out.splitlines())
    assert code == 0 and len(full["ids"]) == 6 and short["ids"] == full["ids"][:2]


def test_sampled_results_replay_with_the_printed_seed(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "ROMEO:"}\n{"prompt": "KING"}\n')
    code, first, err = minillm("generate", "--prompts", path, "-n", 6)
    seed = err.rsplit("seed ", 1)[1].split()[0]
    code2, again, _ = minillm("generate", "--prompts", path, "-n", 6, "--seed", seed)
    assert code == code2 == 0 and first == again


def test_bad_lines_name_their_line_number(tmp_path):
    cases = {'{"prompt": "a"}\nnot json\n': "line 2: not JSON",
             '{"prompt": "a"}\n\n["a"]\n': "line 3: each line is a JSON object",
             '{"prompt": ""}\n': 'line 1: "prompt" must be a non-empty string',
             '{"text": "a"}\n': "line 1: unknown key(s) 'text'",
             '{"prompt": "a", "max_new_tokens": 99}\n': 'line 1: "max_new_tokens" must be',
             '\n\n': "no prompts in it"}
    for text, message in cases.items():
        path = tmp_path / "bad.jsonl"
        path.write_text(text)
        code, out, err = minillm("generate", "--prompts", path, "-n", 5)
        assert code == 2 and message in err and "Traceback" not in err and out == "", (text, err)
