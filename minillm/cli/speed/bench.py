"""`minillm bench --plan [MODEL]`: measure which form of each product is fastest on this machine.

    $ python -m minillm bench --plan smollm2
    minillm: measuring this machine's products (about 5 s, once)
    machine: AMD EPYC; L1d 32 KiB, L2 1024 KiB, L3 32768 KiB; scipy-openblas 0.3.31.188.0 …
    576x49152 (head): stored [C, N] (x @ W): 1 row 23.4 GB/s vs [N, C] (x @ Wᵀ) 13.0
       2 rows: rows 10.4 GB/s (matmul 5.5, tiles:32 6.2, …)

Times the candidate forms (minillm/engine/forms.py) of MODEL's product shapes at the BLAS thread
count in use, and stores the plan in the user's cache folder (minillm/engine/plan.py), replacing
this machine's plan for those shapes: what loading a model otherwise does once, on first use.
Only MODEL's header (or config.json) is read. ``info MODEL --plan`` shows the stored plan.
"""
from __future__ import annotations

from minillm.cli.resolve import accepted, resolve_model_path
from minillm.cli.speed.show import model_config, plan_lines, shape_names


def add_arguments(parser) -> None:
    parser.add_argument("model", metavar="MODEL", nargs="?", default="smollm2",
                        help="the model whose product shapes are measured: " + accepted("--model"))
    parser.add_argument("--plan", action="store_true",
                        help="measure and store this machine's plan (default: off; the one "
                             "benchmark this command runs — the others are benchmarks/*.py)")


def run(args) -> int:
    import os
    from minillm.engine.plan import plan_for, product_shapes
    if not args.plan:
        raise ValueError("bench runs one benchmark: give --plan (the speed benchmarks are the "
                         "scripts in benchmarks/)")
    config = model_config(resolve_model_path(args.model, "MODEL"))
    if os.environ.get("MINILLM_PLAN", "").strip().lower() == "off":
        raise ValueError("MINILLM_PLAN is off: unset it to measure a plan")
    plan = plan_for(config, remeasure=True)
    if plan is None:                                  # (plan_for said why on stderr)
        return 1
    print("\n".join(plan_lines(plan, product_shapes(config), shape_names(config))))
    return 0
