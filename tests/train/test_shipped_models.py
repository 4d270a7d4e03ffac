"""The two shipped models (weights/shakespeare, weights/songci): they load, generate, fit the
size budget, and their recorded held-out loss is what evaluating them on the committed
val_sample.txt gives (tolerance 1e-4 relative: BLAS thread counts may reorder float32 sums)."""
import json

import numpy as np
import pytest

from minillm.loading import load_model
from minillm.train.evaluate import evaluate_text
from minillm.train.loop import LOG_NAME
from tests.conftest import REPO

MODELS = {"shakespeare": "ROMEO:", "songci": "春风"}


def shipped(name):
    path = REPO / "weights" / name
    if not (path / "model.safetensors").is_file():
        pytest.skip(f"{path} has no model.safetensors yet (run scripts/train_shipped_models.sh)")
    return path


@pytest.mark.parametrize("name", MODELS)
def test_shipped_model_loads_and_generates(name):
    path = shipped(name)
    model, tok = load_model(path)
    ids = tok.encode(MODELS[name])
    for _ in range(12):                                   # greedy: the most likely next token
        ids.append(int(model(np.array(ids), last_only=True)[0, -1].argmax()))
    text = tok.decode(ids)
    assert text.startswith(MODELS[name]) and len(text) > len(MODELS[name])
    size = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    assert size < 10_500_000, f"{path} holds {size:,} bytes"
    for needed in ("README.md", "loss_curve.png", "tokenizer.json", "config.json", LOG_NAME):
        assert (path / needed).is_file(), needed


@pytest.mark.parametrize("name", MODELS)
def test_recorded_validation_loss_is_reproduced(name):
    path = shipped(name)
    model, tok = load_model(path)
    sample = (path / "val_sample.txt").read_text(encoding="utf-8")
    result = evaluate_text(model, tok, sample)
    recorded = json.loads((path / "eval.json").read_text())["val_sample"]
    final = json.loads((path / LOG_NAME).read_text().splitlines()[-1])
    assert final["final"] and final["val_sample_loss"] == recorded["loss"]
    assert result["tokens"] == recorded["tokens"]
    assert abs(result["loss"] - recorded["loss"]) <= 1e-4 * recorded["loss"]
    assert abs(result["bits_per_char"] - recorded["bits_per_char"]) <= 1e-4 * recorded["bits_per_char"]
