"""The package's folders stay small enough to find one's way in: no folder of minillm/ holds more
than 15 modules, and the tokenizer's top level at most 12 (its reading path, the class's
neighbours; file formats, SentencePiece-style BPE and the speed-ups in their own sub-packages).
``families/`` is a list, not a folder to find one's way in: one module per model family, found by
``minillm.families.families()``, so adding a family stays one new file (at most 60)."""
from pathlib import Path

import pytest

import minillm

ROOT = Path(minillm.__file__).parent
MAX_MODULES = 15
LIMITS = {"tokenizer": 12, "families": 60}


def folders() -> list[Path]:
    return [ROOT] + sorted(p for p in ROOT.rglob("*") if p.is_dir() and (p / "__init__.py").exists())


@pytest.mark.parametrize("folder", folders(), ids=lambda p: str(p.relative_to(ROOT.parent)))
def test_no_folder_holds_more_than_15_modules(folder):
    modules = sorted(p.name for p in folder.glob("*.py"))
    limit = LIMITS.get(str(folder.relative_to(ROOT)), MAX_MODULES)
    assert len(modules) <= limit, f"{folder.relative_to(ROOT.parent)}: {len(modules)} modules " \
                                  f"(at most {limit}): {modules}"
