"""A plan (``minillm/engine/plan.py``) as readable lines: the machine it was measured on, then
per product shape the layout chosen with both layouts' one-row rates, and per row count the form
chosen with the rates that chose it.

    machine: AMD EPYC; L1d 32 KiB, L2 1024 KiB, L3 32768 KiB; scipy-openblas 0.3.31.188.0 …
    576x49152 (the head): stored [C, N] (x @ W): 1 row matmul 23.4 GB/s (best 23.4) vs [N, C]
      (x @ Wᵀ) 13.0
      2 rows: rows 10.4 GB/s (matmul 5.5, tiles:32 6.2, …)
    attention, 9 heads (3 KV) of 64: blocks of 64 queries (a 512-token prompt: 16 7.1 ms, …)
"""
from __future__ import annotations

import json
from pathlib import Path

LAYOUTS = {"cn": "[C, N] (x @ W)", "nc": "[N, C] (x @ Wᵀ)"}


def model_config(path: Path):
    """The ModelConfig of the model at ``path`` (a .gguf file, a model or adapter folder),
    read from its header or config.json: no weights are loaded."""
    if path.suffix == ".gguf":
        from minillm.io.gguf.model import gguf_config
        from minillm.io.gguf.read import read_gguf
        g = read_gguf(str(path))
        return gguf_config(g.metadata, g.tensors)
    from minillm.io.hf.config import read_config
    from minillm.train.lora.files import adapter_base, is_adapter_folder
    if is_adapter_folder(path):
        return model_config(Path(adapter_base(path)))
    if not (path / "config.json").is_file():
        raise ValueError(f"MODEL {path}: not a .gguf file nor a folder with config.json")
    return read_config(path / "config.json")


def machine_line(key: dict) -> str:
    caches = ", ".join(f"{k} {v // 1024} KiB" for k, v in key.get("caches", {}).items()) or "caches unknown"
    return (f"machine: {key['cpu']}; {caches}; {key['blas']} (kernel {key['blas_kernel']}); "
            f"numpy {key['numpy']}; {key['threads']} BLAS thread(s)")


def plan_lines(plan, shapes, names: dict | None = None) -> list[str]:
    """The printout (above) of ``plan`` for ``shapes`` [(C, N), …]; ``names``: (C, N) -> what
    the model uses it for."""
    lines = [machine_line(plan.key), f"measured in {plan.seconds:.1f} s in total (load average "
             f"{plan.load:.1f} when last measured); layouts for "
             f"{'2-32 rows (MINILLM_PLAN=batch)' if plan.objective == 'batch' else 'one row'}"]
    for c, n in shapes:
        entry = plan.products.get(f"{c}x{n}")
        label = f"{c}x{n}" + (f" ({names[(c, n)]})" if names and (c, n) in names else "")
        if entry is None:
            lines.append(f"{label}: not in this plan (the fixed rule)")
            continue
        one, lay = entry["one_row"], plan.layout((c, n))
        other = "nc" if lay == "cn" else "cn"
        chosen_forms = chosen_in(entry, (c, n), lay)
        lines.append(f"{label}: stored {LAYOUTS[lay]}: 1 row {chosen_forms['1']} "
                     f"{entry['rates'][lay]['1'][chosen_forms['1']]:.1f} GB/s (best "
                     f"{one[lay]:.1f}) vs {LAYOUTS[other]} {one[other]:.1f}")
        for m, by_form in sorted(entry["rates"][lay].items(), key=lambda kv: int(kv[0])):
            if m == "1":
                continue
            chosen = chosen_forms[m]
            rivals = sorted(by_form.items(), key=lambda fr: (-fr[1], fr[0]))   # fastest first
            rest = ", ".join(f"{f} {r:.1f}" for f, r in rivals if f != chosen)
            lines.append(f"  {m:>2} rows: {chosen} {by_form[chosen]:.1f} GB/s ({rest})")
    for heads, entry in sorted(plan.attention.items()):
        H, KV, D = heads.split("x")
        times = ", ".join(f"{b} {ms:.1f} ms"
                          for b, ms in sorted(entry["ms"].items(), key=lambda bm: int(bm[0])))
        lines.append(f"attention, {H} heads ({KV} KV) of {D}: blocks of {entry['block']} queries "
                     f"(a 512-token prompt: {times})")
    return lines


def chosen_in(entry: dict, shape, layout: str) -> dict:
    from minillm.engine.measure import chosen_forms
    return chosen_forms(shape, layout, entry["rates"][layout])


def shape_names(config) -> dict:
    """(C, N) -> "q|k|v", "o", "gate|up", "down", "head" for ``config``'s product shapes."""
    C, D = config.d_model, config.d_head
    qkv, o = (C, (config.n_heads + 2 * config.n_kv_heads) * D), (config.n_heads * D, C)
    ffn = config.d_ff * (1 if config.ffn == "gelu_mlp" else 2)
    names = {(C, ffn): "gate|up" if config.ffn != "gelu_mlp" else "up", (config.d_ff, C): "down",
             (C, config.vocab_size): "head", o: "o", qkv: "q|k|v"}
    return names


def plan_json(plan, shapes) -> str:
    return json.dumps({"key": plan.key, "seconds": plan.seconds,
                       "products": {f"{c}x{n}": plan.products.get(f"{c}x{n}") for c, n in shapes},
                       "attention": plan.attention}, indent=1)
