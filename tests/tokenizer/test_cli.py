"""The tokenize and count commands."""
from minillm.cli import main


def test_tokenize_shows_pieces_ids_and_count(capsys):
    assert main(["tokenize", "海水会吸收较多红光"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("<e6 b5> | <b7> | ")
    assert lines[1].startswith("ids: [38184, 115,")
    assert lines[2] == "20 tokens"


def test_tokenize_other_tokenizer(capsys):
    assert main(["tokenize", "--tokenizer", "cl100k", "hello world"]) == 0
    assert capsys.readouterr().out.splitlines() == ["hello |  world", "ids: [15339, 1917]", "2 tokens"]


def test_count_files(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("Hello world")
    (tmp_path / "b.txt").write_text("hello <|endoftext|>")
    assert main(["count", str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]) == 0
    out = capsys.readouterr().out.splitlines()[1:]                 # under the header
    counts = [int(line.split("\t")[0]) for line in out]
    assert counts[0] == 2 and out[2].endswith("total") and counts[2] == counts[0] + counts[1]
    assert main(["count", "--allow-special", str(tmp_path / "b.txt")]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("3\t")


def test_count_missing_file_is_a_clear_error(capsys):
    assert main(["count", "/no/such/file"]) == 2
    assert "no such file" in capsys.readouterr().err
