"""The course map (notebooks/course_map.svg, drawn by scripts/make_course_map.py) places every
notebook on a step of the pipeline, and the stored drawing names every notebook there is."""
import re

import pytest

from tests.conftest import REPO
from tests.test_notebooks_meta import load_script

NUMBERS = sorted(p.name[:2] for p in (REPO / "scripts" / "notebook_sources").glob("[0-9][0-9]_*.py"))


def test_every_notebook_has_a_step_on_the_map():
    make = load_script("make_course_map")
    assert set(make.notebooks()) == set(NUMBERS)
    assert set(NUMBERS) <= set(make.STEP_OF), f"no step for {sorted(set(NUMBERS) - set(make.STEP_OF))}"
    assert all(step == "all" or 0 <= step < len(make.STEPS) for step in make.STEP_OF.values())


def test_the_stored_map_names_every_notebook_and_no_other():
    svg = (REPO / "notebooks" / "course_map.svg").read_text(encoding="utf-8")
    drawn = sorted(set(re.findall(r">(\d\d)</text>", svg)))
    assert drawn == NUMBERS, "notebooks/course_map.svg is stale: run python scripts/make_course_map.py"


def test_the_map_is_shown_in_the_readme_and_in_the_first_notebook():
    link = "](course_map.svg)"
    assert link in (REPO / "notebooks" / "README.md").read_text(encoding="utf-8")
    assert link in (REPO / "scripts" / "notebook_sources" / "01_tokens.py").read_text(encoding="utf-8")


def test_a_notebook_without_a_step_is_refused():
    pytest.importorskip("matplotlib")
    make = load_script("make_course_map")
    with pytest.raises(ValueError, match=r"\['99'\] have no step"):
        make.draw({"01": "Tokens", "99": "A new notebook"})
