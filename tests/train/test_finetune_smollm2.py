"""``minillm finetune`` on the real SmolLM2-135M-Instruct GGUF (skipped when the file is absent):
two LoRA steps on a few conversations lower the loss on their replies, and the adapter folder
loads as the base with the adapter merged, in the engine as in the reference model."""
import json

import numpy as np

from minillm import GPT
from minillm.cli import main
from minillm.loading import load_model
from minillm.train.lora.adapters import merged_params
from minillm.train.lora.files import load_adapter
from tests.conftest import shared_file
from tests.train.test_sft import CONVERSATIONS, write_jsonl


def test_finetune_smollm2_writes_an_adapter_that_loads_merged(tmp_path):
    gguf = shared_file("models/SmolLM2-135M-Instruct.Q4_1.gguf")
    data = write_jsonl(tmp_path / "chat.jsonl", CONVERSATIONS)
    out = tmp_path / "out"
    assert main(["finetune", "--model", str(gguf), "--data", str(data), "--eval", str(data),
                 "--out", str(out), "--lora", "4", "--targets", "q,v", "--steps", "2",
                 "--batch", "4", "--lr", "3e-3"]) == 0
    report = json.loads((out / "eval.json").read_text())
    assert report["after"]["loss"] < report["before"]["loss"]
    base, _ = load_model(gguf, fast=False)
    lora = load_adapter(out, base.config)
    assert len(lora.adapters) == 2 * base.config.n_layers and lora.rank == 4
    ids = np.array([[1, 4093, 314, 260, 2]])
    want = GPT(base.config, merged_params(base.params, lora))(ids)
    for fast in (False, True):
        model, tokenizer = load_model(out, fast=fast)
        assert tokenizer.special_tokens["<|im_end|>"] == 2
        np.testing.assert_allclose(model(ids), want, atol=1e-3 * np.abs(want).max())
