"""`minillm bench --plan MODEL` measures and stores this machine's plan and prints the forms
chosen with the rates that chose them; `minillm info MODEL --plan` shows the stored plan and
never measures (engine/plan.py). A temporary plan folder each; nothing timed is asserted."""
import json

import pytest

from minillm.engine import plan as plans, plan_file
from tests.cli.helpers import run_cli
from tests.conftest import REPO

MODEL = str(REPO / "weights" / "shakespeare")       # 128 wide: measured in about a second


@pytest.fixture
def plan_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MINILLM_PLAN_DIR", str(tmp_path))
    monkeypatch.delenv("MINILLM_PLAN", raising=False)
    monkeypatch.setattr(plan_file, "_SAID", set())
    yield tmp_path
    plans.use(None)


def test_info_plan_before_any_plan_says_how_to_measure_one(plan_dir, capsys):
    code, out, err = run_cli(capsys, "info", MODEL, "--plan")
    assert code == 2 and "no plan stored for this machine" in err
    assert f"minillm bench --plan {MODEL}" in err and not list(plan_dir.iterdir())


def test_bench_plan_measures_stores_and_info_plan_shows_it(plan_dir, capsys):
    code, out, err = run_cli(capsys, "bench", "--plan", MODEL)
    assert code == 0 and "measuring this machine's products" in err
    assert out.startswith("machine: ") and "BLAS thread" in out
    for shape, use in (("128x384", "q|k|v"), ("128x128", "o"), ("128x512", "up"),
                       ("512x128", "down"), ("128x2048", "head")):
        assert f"{shape} ({use}): stored " in out                  # each product and its use
    assert " 8 rows: " in out and "GB/s (" in out                   # the form and its rivals
    [stored] = plan_dir.glob("plan-*.json")
    code, shown, _ = run_cli(capsys, "info", MODEL, "--plan")
    assert code == 0 and shown == f"plan: {stored}\n" + out
    code, as_json, _ = run_cli(capsys, "info", MODEL, "--plan", "--json")
    data = json.loads(as_json)
    assert code == 0 and set(data["products"]) == {"128x384", "128x128", "128x512", "512x128",
                                                    "128x2048"}
    assert len(data["attention"]) == 1 and "attention, " in out       # the query block, shown
