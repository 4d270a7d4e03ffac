"""`minillm detokenize` and `minillm tokenize --ids / --json` as subprocesses: ids to text and
back, from arguments, standard input or a JSON list."""
import json

from minillm import load_tokenizer
from tests.cli.run_module import SHAKESPEARE, assert_clear_refusal, run_module

TEXT = "Hello, world: 海水"


def test_tokenize_ids_then_detokenize_gives_the_text_back():
    code, ids, err = run_module("tokenize", "--ids", TEXT)
    assert code == 0 and "tokenizer: gpt2 (default)" in err
    assert [int(i) for i in ids.split()] == load_tokenizer("gpt2").encode_ordinary(TEXT)
    code, out, err = run_module("detokenize", stdin=ids)
    assert code == 0 and out == TEXT + "\n", err


def test_tokenize_json_holds_the_ids_and_their_pieces():
    code, out, _ = run_module("tokenize", "--json", "--model", SHAKESPEARE, "To be")
    data = json.loads(out)
    assert code == 0 and set(data) == {"ids", "pieces"}
    assert "".join(data["pieces"]) == "To be" and len(data["pieces"]) == len(data["ids"])


def test_ids_come_as_arguments_commas_or_a_json_list():
    ids = load_tokenizer("gpt2").encode_ordinary(TEXT)
    for argv, stdin in [([str(i) for i in ids], None), ([], ",".join(map(str, ids))),
                        ([], json.dumps(ids)), ([json.dumps(ids)], None)]:
        code, out, err = run_module("detokenize", *argv, stdin=stdin)
        assert code == 0 and out == TEXT + "\n", err


def test_bad_ids_are_refused_naming_them():
    cases = [
        (("detokenize", "1", "x"), ["IDS", "'x' is not an integer"]),
        (("detokenize", "1.5"), ["IDS", "not an integer"]),
        (("detokenize", "50257"), ["IDS", "50257", "[0, 50,256]"]),
        (("detokenize", "--", "-1"), ["IDS", "-1"]),
        (("detokenize", "[1, true]"), ["IDS", "True"]),
        (("detokenize", "[1, 2"), ["IDS", "JSON"]),
        (("detokenize", "--model", SHAKESPEARE, "2048"), ["IDS", "[0, 2,047]"]),
        (("detokenize", "--model", "no/such", "1"), ["--model", "no/such"]),
        (("tokenize", "--ids", "--json", "x"), ["--json", "--ids"]),
    ]
    for argv, names in cases:
        code, out, err = run_module(*argv)
        assert_clear_refusal(code, err, *names)
    code, _, err = run_module("detokenize", stdin="")
    assert_clear_refusal(code, err, "IDS", "no token ids")
    code, _, err = run_module("detokenize", stdin=b"\xff\xfe")
    assert_clear_refusal(code, err, "standard input", "not UTF-8")
