"""Held-out evaluation during fine-tuning (``eval_every``, ``--eval-every``): the score every N
steps is the model's score at that step, in the step's record, the log, the progress lines and
eval.json; it changes nothing the run trains (the same losses and adapter, bit for bit), and a
resumed run still ends with the uninterrupted run's adapter and evaluations. Also the
memory-saving step (``recompute``) in the loop."""
import json

import numpy as np
import pytest

from minillm.cli import main
from minillm.train.sft import evaluate_conversations, finetune
from minillm.train.sft.loop import FinetuneSettings
from minillm.train.trainlog import log_records
from tests.train.test_finetune_cli import base, finetune_argv, run_stopped_after  # noqa: F401
from tests.train.test_sft import CONVERSATIONS, chat_model, chat_tokenizer

HELD_OUT = CONVERSATIONS[:2]


def test_every_nth_step_records_the_held_out_score_of_the_model_then():
    """Full fine-tuning changes the model in place, so on_step can score it itself: the record's
    numbers are evaluate_conversations' at that very step (the same batches: equal floats)."""
    model, tok = chat_model(), chat_tokenizer()
    seen = []

    def on_step(r):
        if "eval_loss" in r:
            seen.append((r["step"], r["eval_loss"], r["eval_accuracy"],
                         evaluate_conversations(model, tok, HELD_OUT, batch_size=2)))
    result = finetune(model, tok, CONVERSATIONS, full=True, steps=7, lr=1e-2, batch_size=2,
                      eval_conversations=HELD_OUT, eval_every=3, on_step=on_step)
    assert [s for s, *_ in seen] == [3, 6] == [e["step"] for e in result.evals]
    for (step, loss, accuracy, want), got in zip(seen, result.evals):
        assert (loss, accuracy) == (want["loss"], want["accuracy"])
        assert got == {"step": step, **want}
    assert result.eval == evaluate_conversations(model, tok, HELD_OUT, batch_size=2)


def test_evaluating_during_training_changes_nothing_trained():
    tok = chat_tokenizer()
    runs = [finetune(chat_model(), tok, CONVERSATIONS, rank=2, steps=6, lr=1e-2, batch_size=2,
                     eval_conversations=HELD_OUT, **more) for more in ({}, {"eval_every": 2})]
    plain, evaluated = runs
    assert plain.losses == evaluated.losses
    for name, a in plain.lora.named().items():
        np.testing.assert_array_equal(evaluated.lora.named()[name], a)
    assert plain.eval == evaluated.eval == {k: v for k, v in evaluated.evals[-1].items()
                                            if k != "step"}
    assert plain.evals == [] and [e["step"] for e in evaluated.evals] == [2, 4, 6]


def test_recompute_trains_as_the_plain_step():
    """LoRA with recompute: the losses and adapters of the plain run (within float32 rounding:
    the head's chunks sum in another order)."""
    tok = chat_tokenizer()
    runs = [finetune(chat_model(), tok, CONVERSATIONS, rank=2, steps=4, lr=1e-2, batch_size=3,
                     recompute=flag) for flag in (False, True)]
    np.testing.assert_allclose(runs[1].losses, runs[0].losses, rtol=1e-5)
    for name, a in runs[0].lora.named().items():
        np.testing.assert_allclose(runs[1].lora.named()[name], a, rtol=0, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("more, message", [
    ({"eval_every": 2}, "eval_every needs eval_conversations"),
    ({"eval_every": 0, "eval_conversations": HELD_OUT}, "eval_every must be a positive integer"),
    ({"recompute": "yes"}, "recompute must be True or False"),
])
def test_bad_evaluation_settings_are_refused(more, message):
    with pytest.raises(ValueError, match=message):
        finetune(chat_model(), chat_tokenizer(), CONVERSATIONS, steps=2, **more)


def test_settings_hold_eval_every_and_recompute():
    s = FinetuneSettings(eval_every=5, recompute=True)
    assert (s.eval_every, s.recompute) == (5, True)


def test_cli_eval_every_prints_logs_and_reports_the_scores(base, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "out"
    argv = finetune_argv(base, out, "--eval", str(base / "held_out.jsonl"), "--eval-every", "4",
                         "--recompute")
    assert main(argv) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "held-out loss" in ln]
    assert [ln.split("/")[0] for ln in lines if ln.startswith("step ")] == \
        ["step 4", "step 8", "step 12"]
    logged = [r for r in log_records(out / "train_log.jsonl") if "eval_loss" in r]
    report = json.loads((out / "eval.json").read_text())
    assert [(r["step"], r["eval_loss"], r["eval_accuracy"]) for r in logged] == \
        [(d["step"], d["loss"], d["accuracy"]) for d in report["during"]]
    assert [d["step"] for d in report["during"]] == [4, 8, 12]
    assert report["during"][-1]["loss"] == report["after"]["loss"]


def test_a_resumed_run_keeps_the_evaluations_of_an_uninterrupted_one(base, tmp_path):  # noqa: F811
    """Killed after its step-8 checkpoint (the log cut back to it on resume), resumed: the same
    adapter bytes and the same held-out scores in eval.json."""
    full, cut = tmp_path / "full", tmp_path / "cut"
    extra = ("--eval", str(base / "held_out.jsonl"), "--eval-every", "3")
    assert main(finetune_argv(base, full, *extra)) == 0
    run_stopped_after(10, finetune_argv(base, cut, *extra))
    assert main(finetune_argv(base, cut, *extra, "--resume")) == 0
    for name in ("adapter_model.safetensors", "adapter_config.json"):
        assert (cut / name).read_bytes() == (full / name).read_bytes(), name
    during = [json.loads((d / "eval.json").read_text())["during"] for d in (full, cut)]
    assert during[0] == during[1] and [d["step"] for d in during[0]] == [3, 6, 9, 12]


def test_cli_refuses_eval_every_without_eval(base, tmp_path, capsys):  # noqa: F811
    assert main(finetune_argv(base, tmp_path / "out", "--eval-every", "2")) == 2
    assert "--eval-every needs --eval" in capsys.readouterr().err


def test_the_held_out_score_is_the_masked_loss_and_accuracy_of_the_models_logits():
    """evaluate_conversations (blocks without caches, the head in chunks) against the definition
    on GPT.__call__'s logits: −mean log p and the argmax share over the counted targets
    (float32: |Δloss| ≤ 1e-5 relative; the same tokens ranked first)."""
    from minillm.functional import log_softmax
    from minillm.train.sft.batches import pad_rows
    from minillm.train.sft.mask import render
    model, tok = chat_model(), chat_tokenizer()
    x, y, m = pad_rows([render(tok, c) for c in HELD_OUT])             # [B, T] each
    logits = model(x)                                                   # [B, T, V]
    logp = np.take_along_axis(log_softmax(logits), y[..., None], -1)[..., 0]   # [B, T]
    want_loss = float(-(logp.astype(np.float64) * m).sum() / m.sum())
    want_accuracy = float(((logits.argmax(-1) == y) * m).sum() / m.sum())
    got = evaluate_conversations(model, tok, HELD_OUT)
    assert abs(got["loss"] - want_loss) <= 1e-5 * want_loss
    assert got["accuracy"] == want_accuracy and got["tokens"] == int(m.sum())
