"""A built wheel, installed in a fresh venv, works from any folder (no clone to lean on).

Offline: the wheel is built without build isolation by this environment's setuptools (>= 70.1,
in the [test] extra), installed with `pip --no-index --no-deps` into a venv made without pip, and
that venv reaches numpy and regex through a .pth line to this environment's site-packages. The
sources are copied first, so the build writes nothing into the repository. About 10-20 s.
"""
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy
import pytest
import regex

from minillm.tokenizer.formats.locate import NAMED
from tests.conftest import REPO

SOURCES = ("setup.cfg", "pyproject.toml", "README.md", "minillm", "weights")


def _can_build_wheels() -> bool:
    if importlib.util.find_spec("wheel") is not None:
        return True
    version = importlib.metadata.version("setuptools").split(".")
    return tuple(int(v) for v in version[:2] if v.isdigit()) >= (70, 1)


def _run(cmd, cwd, timeout=300):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """-> (wheel path, venv python): the wheel built from a copy of the sources, installed."""
    if not _can_build_wheels():
        pytest.skip("building a wheel offline needs setuptools >= 70.1 (or the `wheel` "
                    "package): pip install -e '.[test]'")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "checkpoint"))
        else:
            shutil.copy2(REPO / name, src / name)
    _run([sys.executable, "-m", "pip", "wheel", src, "--no-deps", "--no-build-isolation",
          "--no-index", "--disable-pip-version-check", "-q", "-w", tmp / "dist"], cwd=tmp)
    (wheel,) = (tmp / "dist").glob("minillm-*.whl")
    _run([sys.executable, "-m", "venv", "--without-pip", tmp / "venv"], cwd=tmp)
    python = tmp / "venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=tmp).stdout.strip())
    _run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "-q",
          "--disable-pip-version-check", "--target", site, wheel], cwd=tmp)
    deps = {str(Path(m.__file__).resolve().parents[1]) for m in (numpy, regex)}
    (site / "_minillm_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    return wheel, python


def test_wheel_holds_the_vocabularies_and_the_shipped_models(installed):
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for relative in {*NAMED.values(), "shakespeare/model.safetensors", "songci/tokenizer.json",
                     "shakespeare/tokenizer_config.json", "songci/config.json"}:
        assert f"minillm/_weights/{relative}" in names, relative
    assert not any(n.startswith(("weights/", "tests/")) for n in names)


def test_installed_wheel_loads_gpt2_and_generates_from_another_folder(installed, tmp_path):
    _, python = installed
    code = ("import minillm; from minillm.tokenizer import Tokenizer; "
            "print(minillm.__file__); print(Tokenizer.load('gpt2').encode('Hello world'))")
    out = _run([python, "-c", code], cwd=tmp_path).stdout.splitlines()
    assert Path(out[0]).is_relative_to(python.parent.parent)       # the venv's copy, not a clone
    assert out[1] == "[15496, 995]"
    done = _run([python, "-m", "minillm", "generate", "--max-new-tokens", "12", "--seed", "0",
                 "ROMEO:"], cwd=tmp_path)
    assert done.stdout.strip(), done.stderr
    assert "_weights" in done.stderr and "shakespeare" in done.stderr   # the shipped model


def test_resources_are_found_in_the_installed_package(installed, tmp_path):
    _, python = installed
    code = ("from minillm.resources import weights_dir, shipped; from minillm.tokenizer.formats.locate "
            "import NAMED; print(weights_dir()); print(all(shipped(p).is_file() for p in "
            "NAMED.values()))")
    out = _run([python, "-c", code], cwd=tmp_path).stdout.splitlines()
    assert out[0].endswith(os.path.join("minillm", "_weights")) and out[1] == "True"
    assert sysconfig.get_paths()["purelib"] not in out[0]       # not this environment's copy
