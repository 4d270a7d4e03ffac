"""Resuming a fine-tuning checkpoint whose saved settings differ in their names from today's:
one written before ``eval_every`` and ``recompute`` existed resumes (they take their defaults);
a name this version does not know, or an older setting missing, is refused by name; a changed
setting is named with both values."""
import json
from dataclasses import asdict

import numpy as np
import pytest

from minillm.io.safetensors import read_safetensors, save_safetensors
from minillm.train.manifest import ADAPTER_FILES, OPTIMIZER, read_manifest, write_manifest
from minillm.train.sft import finetune
from minillm.train.sft.settings import ADDED, FinetuneSettings, saved_settings
from tests.train.test_sft import CONVERSATIONS, chat_model, chat_tokenizer

KWARGS = dict(rank=2, steps=4, lr=1e-2, batch_size=2, checkpoint_every=2)


class _Stop(Exception):
    pass


def _stop_at(step):
    def on_step(record):
        if record["step"] == step:
            raise _Stop
    return on_step


def edit_saved_settings(checkpoint, edit) -> None:
    """Rewrite the checkpoint's saved settings with ``edit(settings)`` and its manifest to match,
    as an older (or newer) minillm would have written them."""
    manifest = read_manifest(checkpoint, (*ADAPTER_FILES, OPTIMIZER))     # (before the edit)
    header, state = read_safetensors(checkpoint / OPTIMIZER, mmap=False)
    meta = dict(header["__metadata__"])
    settings = json.loads(meta["settings"])
    edit(settings)
    meta["settings"] = json.dumps(settings)
    save_safetensors(checkpoint / OPTIMIZER, state, metadata=meta)
    write_manifest(checkpoint, {k: v for k, v in manifest.items()
                                if k not in ("files", "manifest_sha256")})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An uninterrupted run, and one stopped after its step-2 checkpoint (kept as a template)."""
    root = tmp_path_factory.mktemp("old")
    straight = finetune(chat_model(), chat_tokenizer(), CONVERSATIONS, out=root / "straight",
                        **KWARGS)
    with pytest.raises(_Stop):
        finetune(chat_model(), chat_tokenizer(), CONVERSATIONS, out=root / "cut",
                 on_step=_stop_at(3), **KWARGS)
    return root, straight


def _copy_of_cut(runs, tmp_path):
    import shutil
    shutil.copytree(runs[0] / "cut", tmp_path / "run")
    return tmp_path / "run"


def test_a_checkpoint_written_before_eval_every_and_recompute_resumes(runs, tmp_path):
    out = _copy_of_cut(runs, tmp_path)
    edit_saved_settings(out / "checkpoint", lambda s: [s.pop(name) for name in ADDED])
    resumed = finetune(chat_model(), chat_tokenizer(), CONVERSATIONS, out=out, resume=True,
                       **KWARGS)
    assert resumed.losses == runs[1].losses[2:]
    for name, a in runs[1].lora.named().items():
        np.testing.assert_array_equal(resumed.lora.named()[name], a, err_msg=name)


def test_an_older_checkpoint_refuses_a_setting_other_than_its_default(runs, tmp_path):
    out = _copy_of_cut(runs, tmp_path)
    edit_saved_settings(out / "checkpoint", lambda s: [s.pop(name) for name in ADDED])
    with pytest.raises(ValueError, match=r"other settings \(recompute False, now True\)"):
        finetune(chat_model(), chat_tokenizer(), CONVERSATIONS, out=out, resume=True,
                 recompute=True, **KWARGS)


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.update(dropout=0.1), r"does not know \(dropout\): a newer minillm wrote it"),
    (lambda s: s.pop("rank"), r"lacks the settings rank"),
], ids=["unknown", "missing"])
def test_unknown_or_missing_older_settings_are_refused_by_name(runs, tmp_path, edit, message):
    out = _copy_of_cut(runs, tmp_path)
    edit_saved_settings(out / "checkpoint", edit)
    with pytest.raises(ValueError, match=message):
        finetune(chat_model(), chat_tokenizer(), CONVERSATIONS, out=out, resume=True, **KWARGS)


def test_saved_settings_fill_only_the_added_fields():
    today = json.loads(json.dumps(asdict(FinetuneSettings(rank=3))))
    older = {k: v for k, v in today.items() if k not in ADDED}
    assert saved_settings(older, "f") == today
    assert saved_settings(today, "f") == today
