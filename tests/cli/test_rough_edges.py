"""Messages a newcomer met, each saying what was wrong and what is allowed (in-process CLI runs):
``finetune --data FOLDER``, LoRA on a GPT-2-style model, a ``--tokenizer`` smaller than the
model's vocabulary (refused up front, as a larger one is), ``export --gguf nodir/x.gguf``."""
import pytest

from minillm import GPT, ModelConfig
from minillm.tokenizer import Tokenizer
from tests.cli.helpers import run_cli


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory):
    """A tiny GPT-2-style model with its ChatML tokenizer, and a smaller tokenizer beside it."""
    root = tmp_path_factory.mktemp("edges")
    text = "user assistant hello there, how are you? fine, thanks. " * 30
    tok = Tokenizer.train(text, vocab_size=300, special_tokens=("<|im_start|>", "<|im_end|>"))
    config = ModelConfig(vocab_size=tok.vocab_size, n_ctx=32, d_model=16, n_heads=2, n_layers=1)
    GPT(config, seed=0).save_pretrained(root / "model")
    tok.save(root / "model" / "tokenizer.json")
    Tokenizer.train(text, vocab_size=280).save(root / "small.json")
    (root / "chat.jsonl").write_text('{"messages": [{"role": "user", "content": "hello"}, '
                                     '{"role": "assistant", "content": "fine"}]}\n')
    return root


def test_finetune_data_folder_says_it_is_a_folder_and_what_is_expected(capsys, gpt2_folder):
    code, _, err = run_cli(capsys, "finetune", "--model", str(gpt2_folder / "model"), "--data",
                           str(gpt2_folder), "--out", str(gpt2_folder / "o1"), "--full")
    assert code == 2 and "is a folder" in err and "JSONL file of conversations" in err


def test_lora_on_a_gpt2_model_says_lora_is_for_the_llama_family(capsys, gpt2_folder):
    code, _, err = run_cli(capsys, "finetune", "--model", str(gpt2_folder / "model"), "--data",
                           str(gpt2_folder / "chat.jsonl"), "--out", str(gpt2_folder / "o2"))
    assert code == 2 and "Llama family" in err and "--full" in err
    assert "w_gate" not in err                        # no internal names
    assert not (gpt2_folder / "o2").exists()          # refused before anything is written


def test_a_tokenizer_smaller_than_the_vocabulary_is_refused_up_front(capsys, gpt2_folder):
    code, out, err = run_cli(capsys, "generate", "--model", str(gpt2_folder / "model"),
                             "--tokenizer", str(gpt2_folder / "small.json"), "hello")
    assert code == 2 and out == ""
    assert "fewer than the model" in err and "cannot turn into text" in err


def test_export_into_a_missing_folder_names_that_folder(capsys, gpt2_folder, tmp_path,
                                                        monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "export", str(gpt2_folder / "model"), "--gguf", "nodir/x.gguf")
    assert code == 2 and "the folder nodir does not exist" in err and ".tmp" not in err
