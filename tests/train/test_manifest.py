"""A checkpoint is verified, not trusted: every damaged-checkpoint case makes ``train --resume``
exit 2 with one line naming the file and the mismatch (never a traceback, never a silent resume).

Damage that keeps the manifest's own digest right is made by re-sealing it (``reseal``: what a
careful forger or a buggy writer would do), so that each deeper check is reached."""
import json
import shutil

import numpy as np
import pytest

from minillm.cli import main
from minillm.io.safetensors import load_safetensors, load_safetensors_metadata, save_safetensors
from minillm.train.manifest import MANIFEST, OPTIMIZER, read_manifest, self_digest, sha256_file
from tests.train.test_data_safety import TRAIN_ARGS

ARGS = [*TRAIN_ARGS, "--steps", "6", "--checkpoint-every", "3", "--log-every", "1"]


def train_cli(data, out, *extra, stop_at=None, monkeypatch=None):
    if stop_at is not None:                     # interrupt the run once step `stop_at` is logged
        import minillm.cli.train as cli_train
        def printer():
            def say(line):
                if line.startswith("step") and line.split()[1].startswith(f"{stop_at}/"):
                    raise KeyboardInterrupt
            return say
        monkeypatch.setattr(cli_train, "_printer", printer)
    return main(["train", "--data", str(data), "--out", str(out), *ARGS, *extra])


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory):
    """A run interrupted after its step-3 checkpoint: (data file, OUT)."""
    folder = tmp_path_factory.mktemp("stopped")
    data = folder / "corpus.txt"
    data.write_text("the quick brown fox jumps over the lazy dog\n" * 200, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        assert train_cli(data, folder / "out", stop_at=5,
                         monkeypatch=mp) == 130
    assert read_manifest(folder / "out" / "checkpoint")["step"] == 3
    return data, folder / "out"


@pytest.fixture
def run(stopped_run, tmp_path):
    data, out = stopped_run
    shutil.copytree(out, tmp_path / "out", symlinks=True)
    return data, tmp_path / "out", tmp_path / "out" / "checkpoint"


def edit_manifest(folder, **changes):
    path = folder / MANIFEST
    manifest = json.loads(path.read_text())
    manifest.update(changes)
    path.write_text(json.dumps(manifest))


def reseal(folder, **changes):
    """Apply ``changes`` and recompute every digest, the manifest's own included."""
    path = folder / MANIFEST
    manifest = {**json.loads(path.read_text()), **changes}
    if "files" not in changes:
        manifest["files"] = {name: {"bytes": (folder / name).stat().st_size,
                                    "sha256": sha256_file(folder / name)}
                             for name in manifest["files"]}
    manifest["manifest_sha256"] = self_digest(manifest)
    path.write_text(json.dumps(manifest))


def rewrite_optimizer(folder, metadata=None, arrays=None):
    path = folder / OPTIMIZER
    old_meta, old_arrays = load_safetensors_metadata(path), load_safetensors(path, mmap=False)
    save_safetensors(path, arrays(old_arrays) if arrays else old_arrays,
                     metadata=metadata(old_meta) if metadata else old_meta)
    reseal(folder)


def flip_a_weight_bit(folder):
    path = folder / "model.safetensors"
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x10
    path.write_bytes(bytes(data))


DAMAGE = {
    "log_records 0": (lambda c: edit_manifest(c, log_records=0), "own manifest_sha256"),
    "log_records 40": (lambda c: edit_manifest(c, log_records=40), "own manifest_sha256"),
    "log_records 0, resealed": (lambda c: reseal(c, log_records=0), "train_log.jsonl"),
    "log_records 40, resealed": (lambda c: reseal(c, log_records=40), "expects at least 40"),
    "files {}": (lambda c: edit_manifest(c, files={}), "own manifest_sha256"),
    "files {}, resealed": (lambda c: reseal(c, files={}), "must list every file"),
    "a flipped bit in the weights": (flip_a_weight_bit, "model.safetensors does not match its sha256"),
    "step as a string": (lambda c: reseal(c, step="3"), "'step' must be a non-negative int"),
    "no manifest": (lambda c: (c / MANIFEST).unlink(), "no manifest.json"),
    "manifest not JSON": (lambda c: (c / MANIFEST).write_text("{"), "not valid JSON"),
    "optimizer without settings": (lambda c: rewrite_optimizer(
        c, metadata=lambda m: {"step": m["step"]}), "needs 'settings'"),
    "optimizer without step": (lambda c: rewrite_optimizer(
        c, metadata=lambda m: {"settings": m["settings"]}), "needs 'step'"),
    "optimizer step not an int": (lambda c: rewrite_optimizer(
        c, metadata=lambda m: {**m, "step": "three"}), "needs 'step'"),
    "optimizer at another step": (lambda c: rewrite_optimizer(
        c, metadata=lambda m: {**m, "step": "2"}), "the optimiser is at step 2"),
    "optimizer state of another shape": (lambda c: rewrite_optimizer(
        c, arrays=lambda a: {**a, "m.wte": a["m.wte"][:-1]}), "'m.wte' is F32"),
    "optimizer state of another dtype": (lambda c: rewrite_optimizer(
        c, arrays=lambda a: {**a, "v.wpe": a["v.wpe"].astype(np.float16)}), "'v.wpe' is F16"),
    "optimizer state missing": (lambda c: rewrite_optimizer(
        c, arrays=lambda a: {k: v for k, v in a.items() if k != "v.wpe"}), "missing ['v.wpe']"),
}


@pytest.mark.parametrize("case", DAMAGE)
def test_resume_refuses_a_damaged_checkpoint_in_one_line(capsys, run, case):
    data, out, checkpoint = run
    damage, expected = DAMAGE[case]
    damage(checkpoint)
    code = train_cli(data, out, "--resume")
    err = capsys.readouterr().err
    assert code == 2 and expected in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_the_undamaged_copy_resumes(capsys, run):
    data, out, _ = run
    assert train_cli(data, out, "--resume") == 0, capsys.readouterr().err
    assert (out / "model.safetensors").is_file() and not (out / "checkpoint").exists()


def test_a_manifest_over_its_limit_is_refused_unread(tmp_path):
    """The manifest is read like every file minillm did not write (io/bounded.py)."""
    from minillm.train.manifest import MAX_MANIFEST_BYTES
    (tmp_path / MANIFEST).write_bytes(b" " * (MAX_MANIFEST_BYTES + 1))
    with pytest.raises(ValueError, match="a checkpoint manifest is limited to 1,048,576"):
        read_manifest(tmp_path)
