"""Shared test settings.

Hypothesis profiles: ``dev`` (default, 50 examples), ``ci`` (selected when the CI environment
variable is set, 25 examples, keeps the suite inside CI's budget; derandomized, so a CI run is
repeatable: the same examples every time, while ``dev`` explores new ones on each run) and
``thorough`` (500 examples, for a long local run: ``HYPOTHESIS_PROFILE=thorough python -m pytest``);
``mutate`` (scripts/mutate.py: ci's examples, no shrinking — a failure is all it needs). All have
``deadline=None``: shared machines are noisy, and speed is measured in ``benchmarks/``, not here.
"""
import os
from pathlib import Path

# One BLAS thread per test process (and per notebook kernel, which inherits the environment).
# The suite runs as `pytest -n 2` on 2 cores: two workers each spinning 2 OpenBLAS threads
# oversubscribe the machine, and OpenBLAS's spin-waiting then makes small matrix products ~100x
# slower. Correctness does not depend on the thread count; speed is measured in benchmarks/.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# The engine's measured plan (minillm/engine/plan.py) is off in the suite (and the notebooks it
# runs): no test times the machine (~5 s) or writes to the user's cache folder; the plan's own
# tests (tests/engine/test_plan*.py) turn it on, each in a temporary folder.
os.environ.setdefault("MINILLM_PLAN", "off")
try:                                   # numpy may already be loaded: limit its pool directly too
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)
except ImportError:                    # pragma: no cover - threadpoolctl is in the [test] extra
    pass

import pytest
from hypothesis import HealthCheck, Phase, settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.register_profile("mutate", settings.get_profile("ci"), database=None,
                          phases=[Phase.explicit, Phase.reuse, Phase.generate])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
# The development data folder (vocabularies, corpora, the SmolLM2 GGUF). A user's clone does not
# have it: tests that need it skip with a clear reason. MINILLM_SHARED_DATA overrides the location.
SHARED_DATA = Path(os.environ.get("MINILLM_SHARED_DATA", REPO.parent / "shared" / "data"))


# Development files that `python -m minillm download NAME` also fetches: where it puts them,
# relative to minillm.io.download.models_dir() ($MINILLM_HOME/models or ~/.cache/minillm/models).
# relative path -> (the download's name, where it puts the file)
DOWNLOADED = {
    "models/SmolLM2-135M-Instruct.Q4_1.gguf": ("smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    "tokenizers/deepseek_v4/tokenizer.json": ("deepseek-v4", "deepseek-v4/tokenizer.json"),
    "tokenizers/deepseek_v4/tokenizer_config.json": ("deepseek-v4",
                                                     "deepseek-v4/tokenizer_config.json")}


def shared_file(relative: str) -> Path:
    """Path of an optional development file, or skip the calling test with the reason.

    Looked for in the development data folder, then (for the files a user can download, e.g.
    SmolLM2) where `python -m minillm download` puts them."""
    from minillm.io.download import models_dir
    candidates = [SHARED_DATA / relative]
    if relative in DOWNLOADED:
        candidates.append(models_dir() / DOWNLOADED[relative][1])
    for path in candidates:
        if path.exists():
            return path
    download = (f", or run `python -m minillm download {DOWNLOADED[relative][0]}` to put it at "
                f"{candidates[1]}" if relative in DOWNLOADED else "")
    pytest.skip(f"optional file {candidates[0]} is absent (it lives in the development data "
                f"folder; set MINILLM_SHARED_DATA to its location{download})")


@pytest.fixture
def rng():
    """A fixed-seed generator: tests are reproducible."""
    import numpy as np
    return np.random.default_rng(0)


def pytest_collection_modifyitems(config, items):
    """Each notebook runs once. tests/test_notebook_prose.py's check that a fresh run shows the
    committed outputs runs it in a kernel as nbmake does (and fails as nbmake would when a cell
    fails), so where a session collects both that check and nbmake's run of the same notebook
    (``pytest --nbmake``), nbmake's item is deselected."""
    checked = {REPO / "notebooks" / f"{item.callspec.params['name']}.ipynb" for item in items
               if item.nodeid.startswith("tests/test_notebook_prose.py::test_a_fresh_run_shows")}
    again = [item for item in items if getattr(item, "nbmake", False) and item.path in checked]
    if again:
        config.hook.pytest_deselected(items=again)
        items[:] = [item for item in items if item not in again]
