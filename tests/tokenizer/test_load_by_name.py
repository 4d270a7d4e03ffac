"""Tokenizer.load by any name: a .gguf file, a model folder, a downloaded model's name; and the
messages when a name means nothing (locate.py)."""
import dataclasses

import pytest

from minillm.io.verified import sha256_file
from minillm.io.download import MODELS
from minillm.tokenizer import Tokenizer
from minillm.tokenizer.hf_write import token_string
from minillm.tokenizer.locate import DOWNLOADED, MINILLM_FILE, locate
from tests.conftest import REPO, shared_file
from tests.io import gguf_writer as w

def record_as_downloaded(models, spec):
    """``spec`` with every file's digest and size those of the file now at its place."""
    def now(s):
        path = models / s.filename
        return dataclasses.replace(s, sha256=sha256_file(path), size=path.stat().st_size)
    return dataclasses.replace(now(spec), extras=tuple(now(s) for s in spec.extras))


TEXT = "Hello wörld 12345, it's 海水会吸收较多红光 <|end|>"


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.train("Hello world, hello wörld! 12345 海水 " * 20, 300,
                           pattern="smollm", special_tokens=["<|end|>"])


def gguf_file(path, tok, pre="smollm"):
    """A GGUF file with only tokenizer metadata (llama.cpp's converter's keys), no tensors."""
    specials = {i: s for s, i in tok.special_tokens.items()}
    tokens = [specials.get(i) or token_string(tok.token_bytes(i)) for i in range(tok.vocab_size)]
    merges = [f"{token_string(a)} {token_string(b)}"
              for (a, b), _ in sorted(tok.merges.items(), key=lambda kv: kv[1])]
    meta = {"general.architecture": (w.STRING, "llama"),
            "tokenizer.ggml.model": (w.STRING, "gpt2"), "tokenizer.ggml.pre": (w.STRING, pre),
            "tokenizer.ggml.tokens": (w.ARRAY, (w.STRING, tokens)),
            "tokenizer.ggml.token_type": (w.ARRAY, (w.INT32, [3 if i in specials else 1
                                                               for i in range(len(tokens))])),
            "tokenizer.ggml.merges": (w.ARRAY, (w.STRING, merges)),
            "tokenizer.ggml.eos_token_id": (w.UINT32, tok.special_tokens["<|end|>"])}
    path.write_bytes(w.gguf_bytes(meta))
    return path


def test_load_a_gguf_file_reads_its_tokenizer_metadata(tmp_path, tok):
    again = Tokenizer.load(gguf_file(tmp_path / "model.gguf", tok))
    assert again.encode(TEXT, allowed_special="all") == tok.encode(TEXT, allowed_special="all")
    assert again.eos_id == tok.special_tokens["<|end|>"]


def test_a_gguf_file_without_tokenizer_metadata_says_so(tmp_path):
    (tmp_path / "bare.gguf").write_bytes(w.gguf_bytes({"general.architecture": (w.STRING, "llama")}))
    with pytest.raises(ValueError, match="carries no tokenizer"):
        Tokenizer.load(tmp_path / "bare.gguf")


def test_load_smollm2_gguf_by_path_matches_the_model_loader():
    path = shared_file("models/SmolLM2-135M-Instruct.Q4_1.gguf")
    from minillm.io.gguf.read import read_gguf
    expected = Tokenizer.from_gguf_metadata(read_gguf(path).metadata)
    assert Tokenizer.load(path).encode(TEXT) == expected.encode(TEXT)


@pytest.mark.parametrize("file_name", ["tokenizer.json", MINILLM_FILE])
def test_load_a_model_folder_uses_the_tokenizer_file_it_carries(tmp_path, tok, file_name):
    tok.save(tmp_path / file_name)
    assert Tokenizer.load(tmp_path).encode(TEXT, allowed_special="all") \
        == tok.encode(TEXT, allowed_special="all")


def test_load_a_shipped_model_folder():
    assert Tokenizer.load(REPO / "weights" / "songci").vocab_size == 4096


def test_a_folder_without_a_tokenizer_says_what_it_looked_for(tmp_path):
    with pytest.raises(ValueError, match="tokenizer.json, tokenizer.minillm.json"):
        Tokenizer.load(tmp_path)


@pytest.mark.parametrize("name", sorted(DOWNLOADED))
def test_downloaded_name_not_downloaded_says_which_command(tmp_path, monkeypatch, name):
    monkeypatch.setenv("MINILLM_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=f"python -m minillm download {name}"):
        Tokenizer.load(name)


def test_downloaded_names_are_found_where_download_puts_them(tmp_path, monkeypatch, tok):
    monkeypatch.setenv("MINILLM_HOME", str(tmp_path))
    models = tmp_path / "models"
    (models / "deepseek-v4").mkdir(parents=True)
    tok.save(models / "deepseek-v4" / "tokenizer.json")
    gguf_file(models / MODELS["smollm2"].filename, tok)
    for name in ("smollm2", "deepseek-v4"):      # the records of these stand-ins: they verify
        monkeypatch.setitem(MODELS, name, record_as_downloaded(models, MODELS[name]))
    for name in ("smollm2", "deepseek-v4"):
        assert Tokenizer.load(name).encode(TEXT, allowed_special="all") \
            == tok.encode(TEXT, allowed_special="all")


def test_an_unknown_name_lists_what_is_accepted():
    with pytest.raises(FileNotFoundError) as info:
        Tokenizer.load("gpt5")
    message = str(info.value)
    for accepted in ("gpt2", "cl100k", "o200k", "smollm2", "deepseek-v4", "model folder",
                     ".gguf", "tokenizer.json"):
        assert accepted in message


def test_locate_rejects_what_is_not_a_name_or_path():
    with pytest.raises(TypeError, match="tokenizer name or a path"):
        locate(3)
