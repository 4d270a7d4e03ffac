"""io/atomic.py: a write is all or nothing, and the file gets the mode any new file gets."""
import os
import stat

import pytest

from minillm.io.atomic import atomic_open, atomic_write_text


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="file modes are POSIX")
def test_atomic_writes_were_private_to_their_owner(tmp_path):
    """Regression: mkstemp's 0o600 survived the rename, so a trained model's config.json was
    -rw------- where `open(path, "w")` gives 0o666 less the umask (-rw-r--r-- under 022)."""
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "config.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "config.json").stat().st_mode) == 0o644


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_open(path) as f:
        f.write(b"half of the new")
        raise RuntimeError("disk full")
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["model.safetensors"]
