"""setup.cfg lists its packages by hand (minillm._weights lives outside minillm/): it must name
every subpackage, and its package data must cover every file the library loads at run time."""
import configparser
from fnmatch import fnmatch

from minillm.resources import SHIPPED_MODELS
from minillm.tokenizer.formats.locate import NAMED
from tests.conftest import REPO

CFG = configparser.ConfigParser()
CFG.read(REPO / "setup.cfg", encoding="utf-8")


def _lines(section, key):
    return [ln.strip() for ln in CFG[section][key].splitlines() if ln.strip()]


def test_every_subpackage_of_minillm_is_listed():
    on_disk = {".".join(p.parent.relative_to(REPO).parts)
               for p in (REPO / "minillm").rglob("__init__.py")}
    assert set(_lines("options", "packages")) == on_disk | {"minillm._weights"}


def test_weights_folder_is_the_package_minillm_weights():
    assert _lines("options", "package_dir") == ["minillm._weights = weights"]


def test_package_data_covers_the_vocabularies_and_the_shipped_models():
    patterns = _lines("options.package_data", "minillm._weights")
    needed = {*NAMED.values()}
    for name in SHIPPED_MODELS:
        needed |= {f"{name}/{f}" for f in ("config.json", "model.safetensors", "tokenizer.json",
                                           "tokenizer_config.json", "README.md")}
    for relative in needed:
        assert (REPO / "weights" / relative).is_file(), relative
        assert any(fnmatch(relative, p) for p in patterns), f"{relative} is not package data"
    for pattern in patterns:   # and no pattern matches nothing (a renamed file)
        assert list((REPO / "weights").glob(pattern)), pattern
