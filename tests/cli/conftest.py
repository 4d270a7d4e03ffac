"""The tiny chat model the CLI tests share: a random Llama with a trained ChatML tokenizer,
written as GGUF by minillm's own exporter."""
import pytest

from minillm import GPT, ModelConfig
from minillm.tokenizer import Tokenizer


@pytest.fixture(scope="module")
def chat_gguf(tmp_path_factory):
    text = ("system user assistant\nWhat is the capital of France? Paris is the capital.\n") * 20
    tok = Tokenizer.train(text, vocab_size=300,
                          special_tokens=("<|endoftext|>", "<|im_start|>", "<|im_end|>"))
    config = ModelConfig(arch="llama", vocab_size=tok.vocab_size, n_ctx=128, d_model=32,
                         n_heads=4, n_kv_heads=2, n_layers=2, d_ff=64)
    return GPT(config, seed=0).save_gguf(tmp_path_factory.mktemp("chat") / "tiny.gguf", tok)
