"""generate --regex / --json-schema / --choice: the printed reply matches; bad flags fail clearly."""
import json

import pytest
import regex

from tests.cli.helpers import run_cli


def reply(capsys, *flags):
    code, out, err = run_cli(capsys, "generate", "--no-echo", "--seed", "0", "--max-new-tokens",
                             "60", *flags, "The")
    assert code == 0, err
    return out[:-1]                                                 # the final newline


def test_regex_choice_and_schema_flags_constrain_the_reply(capsys, tmp_path):
    assert regex.fullmatch("[0-9]{2,3}", reply(capsys, "--regex", "[0-9]{2,3}"))
    assert reply(capsys, "--choice", "yes,no,maybe") in ("yes", "no", "maybe")
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"},
                                               "n": {"enum": [1, 2]}}, "required": ["ok", "n"]}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    out = json.loads(reply(capsys, "--json-schema", str(tmp_path / "s.json")))
    assert isinstance(out["ok"], bool) and out["n"] in (1, 2)
    code, out, _ = run_cli(capsys, "generate", "--no-echo", "--beams", "2", "--choice", "yes,no", "The")
    assert code == 0 and out in ("yes\n", "no\n")                  # beam search too


@pytest.mark.parametrize("flags, words", [
    (["--regex", "a(?=b)"], "--regex: regex 'a(?=b)': lookahead"),
    (["--choice", "a,,b"], "--choice: Choice needs"),
])
def test_bad_constraint_flags_name_the_flag(capsys, flags, words):
    code, _, err = run_cli(capsys, "generate", *flags, "The")
    assert code != 0 and words in err


def test_bad_schema_files_name_the_flag_and_keyword(capsys, tmp_path):
    (tmp_path / "s.json").write_text('{"type": "string", "format": "date"}')
    code, _, err = run_cli(capsys, "generate", "--json-schema", str(tmp_path / "s.json"), "The")
    assert code != 0 and "--json-schema" in err and "'format' not supported" in err


def test_two_constraint_flags_are_refused(capsys):
    with pytest.raises(SystemExit):
        run_cli(capsys, "generate", "--regex", "a", "--choice", "b", "The")
