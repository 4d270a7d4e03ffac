"""The training loop: it learns, and a resumed run is the uninterrupted run, bit for bit."""
import json

import numpy as np

from minillm.config import ModelConfig
from minillm import GPT
from minillm.train.loop import LOG_NAME, TrainSettings, train

# A small text that a tiny model can learn: 40 lines over a 26-letter alphabet, token = letter.
TEXT_IDS = np.array([ord(c) - 97 for c in "the quick brown fox jumps over the lazy dog" * 40
                     if c != " "], dtype=np.uint16)


def tiny(seed=0):
    return GPT(ModelConfig(vocab_size=26, n_ctx=16, d_model=32, n_heads=2, n_layers=1), seed=seed)


def test_training_lowers_the_loss_by_half(tmp_path):
    settings = TrainSettings(steps=300, batch=8, lr=1e-2, min_lr=1e-3, warmup=20, eval_every=300,
                             checkpoint_every=300, log_every=10)
    train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, settings, progress=lambda line: None)
    log = [json.loads(line) for line in (tmp_path / LOG_NAME).read_text().splitlines()]
    first, last = log[0]["loss"], log[-1]["loss"]
    assert last <= 0.5 * first, (first, last)
    assert log[-1]["val_loss"] <= 0.5 * np.log(26)
    assert (tmp_path / "checkpoint" / "optimizer.safetensors").is_file()


def test_a_llama_model_learns_with_the_same_loop(tmp_path):
    """RMSNorm, RoPE, SwiGLU, grouped-query attention (4 query heads on 2 KV heads), an untied
    head: the AdamW loop lowers a tiny Llama-config model's loss on the same text by half."""
    config = ModelConfig(vocab_size=26, n_ctx=16, d_model=32, n_heads=4, n_kv_heads=2, n_layers=1,
                         d_ff=64, arch="llama", tie_embeddings=False)
    settings = TrainSettings(steps=150, batch=8, lr=1e-2, min_lr=1e-3, warmup=20, eval_every=150,
                             checkpoint_every=150, log_every=10)
    model = train(GPT(config, seed=0), TEXT_IDS, TEXT_IDS, tmp_path, settings,
                  progress=lambda line: None)
    log = [json.loads(line) for line in (tmp_path / LOG_NAME).read_text().splitlines()]
    first, last = log[0]["loss"], log[-1]["loss"]
    assert last <= 0.5 * first, (first, last)
    assert log[-1]["val_loss"] <= 0.5 * np.log(26)
    reloaded = GPT.from_pretrained(tmp_path / "checkpoint")        # written as a Llama checkpoint
    assert reloaded.config.arch == "llama" and reloaded.config.n_kv_heads == 2
    for name, a in model.params.named().items():
        np.testing.assert_array_equal(reloaded.params.named()[name], a, err_msg=name)


def test_resume_reproduces_the_uninterrupted_run(tmp_path):
    """Interrupt at step 9 (last checkpoint: step 6), resume to 12: the same parameters and log
    as 12 steps in one go."""
    full = tiny()
    settings = TrainSettings(steps=12, batch=4, warmup=3, eval_every=6, checkpoint_every=6,
                             log_every=3, seed=5)
    train(full, TEXT_IDS, TEXT_IDS, tmp_path / "full", settings, progress=lambda line: None)

    half = tiny()

    def stop_at_9(line):                 # the progress line of step 9 comes after its update
        if line.split()[1].startswith("9/"):
            raise KeyboardInterrupt
    try:
        train(half, TEXT_IDS, TEXT_IDS, tmp_path / "resumed", settings, progress=stop_at_9)
    except KeyboardInterrupt:
        pass
    resumed = tiny(seed=99)              # different initial weights: all must come from the checkpoint
    train(resumed, TEXT_IDS, TEXT_IDS, tmp_path / "resumed", settings, resume=True,
          progress=lambda line: None)
    for name, a in full.params.named().items():
        np.testing.assert_array_equal(resumed.params.named()[name], a, err_msg=name)
    logs = [(tmp_path / d / LOG_NAME).read_text().splitlines() for d in ("full", "resumed")]
    strip = [[{k: v for k, v in json.loads(x).items() if k not in ("tokens_per_s", "elapsed_s")}
              for x in log] for log in logs]
    assert strip[0] == strip[1]


def test_resume_refuses_other_settings(tmp_path):
    settings = TrainSettings(steps=4, batch=2, warmup=1, eval_every=2, checkpoint_every=2, log_every=2)
    train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, settings, progress=lambda line: None)
    other = TrainSettings(steps=4, batch=2, warmup=1, eval_every=2, checkpoint_every=2, log_every=2,
                          lr=1e-3, min_lr=1e-4)
    try:
        train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, other, resume=True, progress=lambda line: None)
    except ValueError as exc:
        assert "settings" in str(exc)
    else:
        raise AssertionError("expected ValueError")
