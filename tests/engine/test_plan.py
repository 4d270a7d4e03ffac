"""The plan's file (engine/plan.py): its format and keys, where it lives, and what happens when
it is missing, corrupt, from another machine, or cannot be written. Each test has its own
temporary plan folder (MINILLM_PLAN_DIR); nothing here asserts a time. Most tests replace the
measuring by a fake (``measure`` returns fixed entries at once); one measures a tiny model's
shapes for real, to check what a measured file holds."""
import json

import numpy as np
import pytest

from minillm.config import ModelConfig
from minillm.engine import plan as plans, plan_file, rows
from minillm.engine.machine import machine_key
from minillm.engine.measure import ROWS
from minillm.engine.plan import FORMAT, plan_for, plan_path, product_shapes, read_plan
from tests.model.strategies import random_model

CONFIG = ModelConfig(arch="llama", vocab_size=96, n_ctx=16, d_model=32, n_heads=2, n_kv_heads=1,
                     n_layers=2, d_ff=64, tie_embeddings=True)
KEYS = {"cpu", "caches", "blas", "blas_kernel", "numpy", "threads"}


@pytest.fixture
def plan_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MINILLM_PLAN_DIR", str(tmp_path / "plans"))
    monkeypatch.delenv("MINILLM_PLAN", raising=False)               # (the suite turns it off)
    monkeypatch.setattr(plan_file, "_SAID", set())
    yield tmp_path / "plans"
    plans.use(None)


def fake_entry(layout="nc"):
    rates = {str(m): {"matmul": 1.0, "tiles:32": 2.0 if m > 1 else 0.5} for m in ROWS}
    rates["1"] = {"matmul": 3.0}
    return {"layout": layout, "one_row": {"cn": 1.0, "nc": 3.0}, "rates": {layout: rates},
            "forms": {m: max(r, key=r.get) for m, r in rates.items()}}


@pytest.fixture
def fake_measure(monkeypatch):
    calls = []

    def measure(shapes, key, model_bytes, rows=ROWS, both=False, budget=float("inf")):
        calls.append(list(shapes))
        if budget < 0:                                               # (patched: out of time)
            shapes = shapes[:1]
        if not both:
            return {f"{c}x{n}": fake_entry() for c, n in shapes}
        entry = fake_entry()                                         # one row: "nc"; 2-32 rows:
        entry["rates"]["cn"] = {m: {f: 2 * r for f, r in by_form.items()}   # "cn" twice as fast
                                for m, by_form in entry["rates"]["nc"].items()}
        return {f"{c}x{n}": entry for c, n in shapes}
    monkeypatch.setattr(plans, "measure", measure)
    return calls


def test_a_measured_plan_file_holds_its_key_and_every_shapes_entry(plan_dir, capsys):
    plan = plan_for(CONFIG)
    files = list(plan_dir.glob("plan-*.json"))
    assert files == [plan_path(machine_key())]
    data = json.loads(files[0].read_text())
    assert data["format"] == FORMAT and set(data["key"]) == KEYS and data["key"] == machine_key()
    assert set(data["products"]) == {f"{c}x{n}" for c, n in product_shapes(CONFIG)}
    for entry in data["products"].values():
        assert entry["layout"] in entry["rates"] and set(entry["one_row"]) == {"cn", "nc"}
        assert set(entry["forms"]) == {str(m) for m in ROWS}
        for m, name in entry["forms"].items():                        # the fastest, or the fixed
            by_form = entry["rates"][entry["layout"]][m]              # rule's form within 10 %
            assert by_form[name] == max(by_form.values()) > 0 or by_form[name] * 1.1 >= max(
                by_form.values()) and name in ("matmul", "tiles:32")
    assert plan.products == data["products"]
    heads = f"{CONFIG.n_heads}x{CONFIG.n_kv_heads}x{CONFIG.d_head}"
    assert set(data["attention"]) == {heads} and data["attention"] == plan.attention
    entry = data["attention"][heads]                                  # the fastest block, or the
    ms = {int(b): t for b, t in entry["ms"].items()}                  # fixed 64 within 10 %
    assert set(ms) == {16, 32, 64, 128} and (ms[entry["block"]] == min(ms.values())
                                             or entry["block"] == 64 and ms[64] <= 1.1 * min(ms.values()))
    assert "measuring this machine's products (about" in capsys.readouterr().err
    assert not list(plan_dir.glob(".plan-*"))                        # no temporary file left


def test_product_shapes_are_the_joined_matrices_wo_w_down_and_the_head():
    assert product_shapes(CONFIG) == sorted({(32, 64), (32, 32), (32, 128), (64, 32), (32, 96)})


def test_a_stored_plan_is_read_not_measured_again_and_missing_shapes_are_added(
        plan_dir, fake_measure, capsys):
    plan_for(CONFIG)
    assert plan_for(CONFIG).products.keys() == {f"{c}x{n}" for c, n in product_shapes(CONFIG)}
    assert len(fake_measure) == 1 and capsys.readouterr().err.count("measuring this machine") == 1
    wider = ModelConfig(**{**CONFIG.__dict__, "d_ff": 128, "layer_types": None})
    plan = plan_for(wider)
    assert fake_measure[1] == sorted(set(product_shapes(wider)) - set(product_shapes(CONFIG)))
    assert {f"{c}x{n}" for c, n in product_shapes(CONFIG) + product_shapes(wider)} == \
        set(plan.products) == set(json.loads(plan_path(machine_key()).read_text())["products"])


def test_a_plan_from_another_machine_is_not_used(plan_dir, fake_measure, capsys):
    other = {**machine_key(), "cpu": "another CPU", "threads": 7}
    assert plan_path(other) != plan_path(machine_key())             # its own file name
    plan_dir.mkdir()
    entry = fake_entry("cn")
    foreign = {"format": FORMAT, "key": other, "products": {f"{c}x{n}": entry
                                                           for c, n in product_shapes(CONFIG)}}
    plan_path(machine_key()).write_text(json.dumps(foreign))        # even under this one's name
    assert read_plan(plan_path(machine_key()), machine_key()) is None
    assert "another machine or setting" in capsys.readouterr().err
    plan = plan_for(CONFIG)                                          # measured again, for this one
    assert plan.key == machine_key() and len(fake_measure) == 1
    assert all(e["layout"] == "nc" for e in plan.products.values())


@pytest.mark.parametrize("text, why", [("{not json", "Expecting property name"),
                                       ('{"format": 99}', "not a plan of format 2"),
                                       ('{"format": 1}', "by an older minillm"),
                                       ("[]", "not a plan of format 2")])
def test_a_corrupt_plan_is_ignored_with_a_message_and_measured_again(
        plan_dir, fake_measure, capsys, text, why):
    plan_dir.mkdir()
    plan_path(machine_key()).write_text(text)
    plan = plan_for(CONFIG)
    err = capsys.readouterr().err
    assert f"ignoring the plan file {plan_path(machine_key())}" in err and why in err
    assert plan is not None and len(fake_measure) == 1
    assert json.loads(plan_path(machine_key()).read_text())["key"] == machine_key()


@pytest.mark.parametrize("damage", [[], {"2x1": {"block": 32, "ms": {"32": 1.0}}},
                                    {"2x1x16": {"block": 0, "ms": {"32": 1.0}}},
                                    {"2x1x16": {"block": 32, "ms": {"32": -1.0}}}])
def test_a_damaged_attention_entry_is_corrupt(plan_dir, fake_measure, capsys, damage):
    plan_for(CONFIG)
    data = json.loads(plan_path(machine_key()).read_text())
    data["attention"] = damage
    plan_path(machine_key()).write_text(json.dumps(data))
    assert read_plan(plan_path(machine_key()), machine_key()) is None
    assert "attention" in capsys.readouterr().err


def test_the_plans_query_block_is_what_the_engines_attention_takes(plan_dir, fake_measure):
    """``use(plan)`` hands each head shape's measured block to the engine's attention; with
    any block a long prompt gives the readable model's logits."""
    from minillm.engine import layers
    plan = plan_for(CONFIG)
    heads = (CONFIG.n_heads, CONFIG.n_kv_heads, CONFIG.d_head)
    plan.attention = {"x".join(map(str, heads)): {"block": 3, "ms": {"3": 1.0}}}
    plain = random_model(CONFIG, 0)
    fast = random_model(CONFIG, 0, layout=plan)
    ids = np.arange(CONFIG.n_ctx) % CONFIG.vocab_size
    plans.use(plan)
    assert layers.BLOCKS == {heads: 3}
    got = fast(ids)                                                   # 16 queries in blocks of 3
    plans.use(None)
    assert layers.BLOCKS == {}
    np.testing.assert_allclose(got, plain(ids), rtol=0, atol=1e-4 * max(1.0, float(np.abs(plain(ids)).max())))


def test_a_damaged_entry_is_corrupt_too(plan_dir, fake_measure, capsys, monkeypatch):
    plan_for(CONFIG)
    data = json.loads(plan_path(machine_key()).read_text())
    name = sorted(data["products"])[0]
    for damage in ({"tiles:-1": 1.0}, {"matmul": 0.0}, {}):
        data["products"][name]["rates"]["nc"]["2"] = damage
        plan_path(machine_key()).write_text(json.dumps(data))
        monkeypatch.setattr(plan_file, "_SAID", set())
        assert read_plan(plan_path(machine_key()), machine_key()) is None
        assert f"product {name!r} is not a plan entry" in capsys.readouterr().err


def test_an_unwritable_plan_folder_runs_unplanned_and_says_why(tmp_path, monkeypatch, capsys):
    """A folder that cannot be made (its parent is a file: read-only for root too) — the model
    loads in the "by_width" layout with the fixed rule, computes the model's logits, and the
    message names the folder, the reason and the way out."""
    (tmp_path / "a_file").write_text("")
    monkeypatch.setenv("MINILLM_PLAN_DIR", str(tmp_path / "a_file" / "plans"))
    monkeypatch.delenv("MINILLM_PLAN", raising=False)
    monkeypatch.setattr(plan_file, "_SAID", set())
    from minillm.engine import EngineGPT
    fast = EngineGPT.empty(CONFIG)
    err = capsys.readouterr().err
    assert f"cannot store a plan in {tmp_path / 'a_file' / 'plans'}" in err
    assert "running un-planned" in err and "MINILLM_PLAN_DIR" in err
    assert rows.CHOSEN == {}
    plain = random_model(CONFIG, 0)
    for name, view in fast.params.named().items():
        view[...] = plain.params.named()[name]
    ids = np.arange(6)[None] % CONFIG.vocab_size
    np.testing.assert_allclose(fast(ids), plain(ids), rtol=0, atol=1e-4)


def test_plan_off_measures_nothing_and_writes_nothing(plan_dir, fake_measure, monkeypatch):
    monkeypatch.setenv("MINILLM_PLAN", "off")
    assert plan_for(CONFIG) is None and not fake_measure and not plan_dir.exists()


def test_the_plan_folder_is_the_users_cache_folder_unless_overridden(monkeypatch, tmp_path):
    monkeypatch.delenv("MINILLM_PLAN_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert plans.plan_dir() == tmp_path / "xdg" / "minillm" / "plans"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert plans.plan_dir() == tmp_path / "home" / ".cache" / "minillm" / "plans"
    monkeypatch.setenv("MINILLM_PLAN_DIR", str(tmp_path / "mine"))
    assert plans.plan_dir() == tmp_path / "mine"


def test_plan_batch_measures_both_layouts_and_stores_each_shape_as_rows_read_it_fastest(
        plan_dir, fake_measure, monkeypatch):
    """MINILLM_PLAN=batch: the shapes measured for one row only are measured again in both
    layouts, and each is stored the way 2-32 rows read it fastest (here "cn", where one row
    reads "nc" fastest)."""
    plan = plan_for(CONFIG)
    assert all(plan.stored_by_rows(s) for s in product_shapes(CONFIG))          # one row: nc
    monkeypatch.setenv("MINILLM_PLAN", "batch")
    batch = plan_for(CONFIG)
    assert len(fake_measure) == 2 and batch.objective == "batch"
    assert not any(batch.stored_by_rows(s) for s in product_shapes(CONFIG))     # rows: cn
    assert plan_for(CONFIG).objective == "batch" and len(fake_measure) == 2     # stored now


def test_measuring_past_its_budget_leaves_the_other_shapes_to_the_next_load(
        plan_dir, fake_measure, monkeypatch, capsys):
    monkeypatch.setattr(plans, "BUDGET", -1.0)
    monkeypatch.setattr(plans, "pool_for", lambda key, nbytes: -1e12)   # estimate < 0: no time
    plan = plan_for(CONFIG)
    assert len(plan.products) == 1
    assert "4 product shape(s) keep the fixed rule until the next load" in capsys.readouterr().err
    monkeypatch.undo()
    monkeypatch.setenv("MINILLM_PLAN_DIR", str(plan_dir))
    monkeypatch.delenv("MINILLM_PLAN", raising=False)
    assert len(plan_for(CONFIG).products) == 5                       # the rest, now


def test_the_real_measuring_begins_no_shape_past_its_budget():
    from minillm.engine.measure import measure
    assert measure([(8, 8), (8, 16)], machine_key(), 1e6, budget=-1.0) == {}


def test_an_unknown_plan_setting_is_refused_naming_the_allowed_ones(monkeypatch):
    monkeypatch.setenv("MINILLM_PLAN", "fast")
    with pytest.raises(ValueError, match="MINILLM_PLAN must be one of on, batch, off .*'fast'"):
        plan_for(CONFIG)


def test_remeasuring_keeps_the_other_models_shapes(plan_dir, fake_measure):
    plan_for(CONFIG)
    other = ModelConfig(**{**CONFIG.__dict__, "d_ff": 128, "layer_types": None})
    plan_for(other)
    plan = plan_for(CONFIG, remeasure=True)
    assert fake_measure[-1] == product_shapes(CONFIG)                 # all of them, again
    assert set(product_shapes(other)) <= {tuple(map(int, k.split("x"))) for k in plan.products}


@pytest.mark.parametrize("keep", [False, True])
def test_the_fixed_rules_form_is_timed_again_after_a_disturbed_first_pass(keep):
    """A form whose first pass took over twice the best (another job ran meanwhile) is a clear
    loser and not repeated — unless it is the fixed rule's own form (``keep``): that one is timed
    again in every round, so one disturbed pass cannot make the plan leave the fixed rule.
    (The "disturbance" is a sleep in the form's first pass: 50 ms against the rival's 5 ms.)"""
    import time
    from minillm.engine.measure import race
    passes = {"fixed": 0, "rival": 0}

    def entrant(name, first):
        def fn(x, w):
            passes[name] += 1
            time.sleep(first if passes[name] == 1 else 0.005)
        return fn, None, [None]
    seconds = race({"fixed": entrant("fixed", 0.05), "rival": entrant("rival", 0.005)}, repeats=2,
                   keep={"fixed"} if keep else ())
    assert passes == {"fixed": 3 if keep else 1, "rival": 3}
    assert (seconds["fixed"] < 0.03) == keep                         # re-timed: its true time
