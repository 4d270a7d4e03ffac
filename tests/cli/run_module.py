"""Running ``python -m minillm ARGS`` as a user does: a subprocess with this checkout on the path,
one BLAS thread -> (exit code, stdout, stderr)."""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHAKESPEARE = str(REPO / "weights" / "shakespeare")
TINY_LLAMA = str(REPO / "weights" / "tiny-llama")


def run_module(*argv, stdin: str | bytes | None = None, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS="1")
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    done = subprocess.run([sys.executable, "-m", "minillm", *map(str, argv)], input=data,
                          capture_output=True, env=env, cwd=cwd, timeout=300)
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


def bad_inputs(tmp_path) -> dict:
    """The files a bad-input sweep passes: missing, a folder, not UTF-8, empty, blank."""
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "blank.txt").write_text("  \n\n")
    (tmp_path / "folder").mkdir()
    return {name: str(tmp_path / name)
            for name in ("missing.txt", "folder", "latin1.txt", "empty.txt", "blank.txt")}


def assert_clear_refusal(code: int, err: str, *names: str) -> None:
    """Refused with exit 2, one line or argparse's usage, no traceback, naming each of ``names``."""
    assert code == 2, err
    assert "Traceback" not in err, err
    for name in names:
        assert name in err, f"{name!r} not named in: {err}"
