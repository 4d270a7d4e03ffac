"""``minillm export`` never destroys what it reads, never replaces a file unless told to, and never
writes through a link: each refusal exits 2 with one line and leaves every file as it was."""
import hashlib

import pytest

from minillm import GPT, ModelConfig
from minillm.cli import main
from minillm.loading import load_model
from minillm.tokenizer import Tokenizer


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model")
    tok = Tokenizer.train("the cat sat on the mat and the dog sat on the log\n" * 20, vocab_size=280)
    GPT(ModelConfig(vocab_size=tok.vocab_size, n_ctx=16, d_model=32, n_heads=2, n_layers=1),
        seed=0).save_pretrained(folder)
    tok.save(folder / "tokenizer.json")
    return folder


def digests(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())
            if p.is_file()}


def export(capsys, *argv):
    code = main(["export", *map(str, argv)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name", ["model.safetensors", "config.json", "tokenizer.json",
                                  "tokenizer_config.json"])
def test_export_refuses_to_write_over_one_of_its_inputs(capsys, model_folder, name):
    before = digests(model_folder)
    code, err = export(capsys, model_folder, "--gguf", model_folder / name, "--overwrite")
    assert code == 2 and "an input of this export" in err and err.count("\n") == 1
    assert digests(model_folder) == before
    load_model(model_folder)


def test_export_refuses_a_link_or_hard_link_to_an_input(capsys, model_folder, tmp_path):
    (tmp_path / "hard.gguf").hardlink_to(model_folder / "model.safetensors")
    code, err = export(capsys, model_folder, "--gguf", tmp_path / "hard.gguf", "--overwrite")
    assert code == 2 and "an input of this export" in err
    (tmp_path / "soft.gguf").symlink_to(model_folder / "config.json")
    code, err = export(capsys, model_folder, "--gguf", tmp_path / "soft.gguf", "--overwrite")
    assert code == 2 and "symbolic link" in err
    load_model(model_folder)


def test_export_refuses_the_source_gguf_itself(capsys, model_folder, tmp_path):
    source = tmp_path / "m.gguf"
    assert export(capsys, model_folder, "--gguf", source)[0] == 0
    before = source.read_bytes()
    code, err = export(capsys, source, "--gguf", source, "--overwrite")
    assert code == 2 and "an input of this export" in err and source.read_bytes() == before


def test_export_replaces_an_existing_file_only_with_overwrite(capsys, model_folder, tmp_path):
    out = tmp_path / "out.gguf"
    out.write_bytes(b"the user's file")
    code, err = export(capsys, model_folder, "--gguf", out)
    assert code == 2 and "--overwrite" in err and out.read_bytes() == b"the user's file"
    assert export(capsys, model_folder, "--gguf", out, "--overwrite")[0] == 0
    load_model(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.gguf"]      # no temp file left


def test_export_refuses_a_dangling_link(capsys, model_folder, tmp_path):
    (tmp_path / "out.gguf").symlink_to(tmp_path / "elsewhere.gguf")
    code, err = export(capsys, model_folder, "--gguf", tmp_path / "out.gguf", "--overwrite")
    assert code == 2 and "symbolic link" in err and not (tmp_path / "elsewhere.gguf").exists()


def test_export_help_names_overwrite(capsys):
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    assert "--overwrite" in capsys.readouterr().out
