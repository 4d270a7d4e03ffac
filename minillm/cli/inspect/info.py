"""`minillm info MODEL`: a model's facts, as ``gguf-dump`` and ``ollama show`` give them.

    $ python -m minillm info weights/tiny-llama
    model: weights/tiny-llama (safetensors)
    family: llama (LlamaForCausalLM)
    parameters: 198,752
    ...

The config as its family names it (config.json's keys; a GGUF file's ``<arch>.*`` keys), the
parameter count, the tensors' dtypes, the context length, the vocabulary and its special tokens,
the chat format detected from the chat template, the metadata (GGUF key-values, with long arrays
shown by their length; a safetensors ``__metadata__``) and, with ``--tensors``, the tensor table
(name, shape, type, bytes). Only headers are read, never the weights. ``--json``: one object.
"""
from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path

from minillm.cli.resolve import accepted, resolve_model_path

LONG_ARRAY = 16             # metadata arrays longer than this are shown as "[N items]"


def add_arguments(parser) -> None:
    parser.add_argument("model", metavar="MODEL", help="the model: " + accepted("--model"))
    parser.add_argument("--tensors", action="store_true", help="also list every tensor: name, shape, type, bytes (default: "
                                                          "the totals only)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (default: readable lines)")
    parser.add_argument("--plan", action="store_true", help="show instead this machine's stored plan "
                        "for MODEL's products: the forms chosen and the rates that chose them "
                        "(default: off; `minillm bench --plan MODEL` measures one)")


def model_facts(path: Path, tensors: bool = False) -> dict:
    """The facts of the model at ``path`` (a .gguf file or a safetensors folder), headers only."""
    try:
        if path.is_file() and path.suffix == ".gguf":
            facts = _gguf_facts(path)
        elif path.is_dir() and (path / "config.json").is_file():
            facts = _folder_facts(path)
        else:
            facts = None
    except (ValueError, KeyError) as exc:       # a damaged header: say which file
        raise ValueError(f"MODEL {path}: {exc}") from None
    if facts is None:
        raise ValueError(f"MODEL {path}: not a .gguf file nor a folder with config.json; "
                         f"MODEL takes {accepted('--model')}")
    table = facts.pop("_tensors")
    facts["parameters"] = sum(math.prod(shape) for _, shape, _, _ in table)
    facts["dtypes"] = dict(Counter(kind for _, _, kind, _ in table).most_common())
    facts["bytes"] = sum(n for *_, n in table)
    if tensors:
        facts["tensors"] = [{"name": n, "shape": list(s), "type": t, "bytes": b}
                            for n, s, t, b in table]
    return facts


def _gguf_facts(path: Path) -> dict:
    from minillm.io.gguf.model import gguf_config
    from minillm.io.gguf.read import read_gguf
    from minillm.tokenizer import tokenizer_from_gguf_metadata
    g = read_gguf(str(path))
    meta = g.metadata
    arch = meta.get("general.architecture", "?")
    config = gguf_config(meta, g.tensors)
    tok = tokenizer_from_gguf_metadata(meta) if "tokenizer.ggml.tokens" in meta else None
    return {"model": str(path), "format": f"gguf v{g.version}", "family": arch,
            "config": {k[len(arch) + 1:]: v for k, v in meta.items() if k.startswith(arch + ".")},
            "context": config.n_ctx, **_vocabulary(tok, config.vocab_size),
            "metadata": {k: _short(v) for k, v in meta.items() if not k.startswith(arch + ".")},
            "_tensors": [(t.name, t.shape, t.type_name, t.nbytes) for t in g.tensors.values()]}


def _folder_facts(path: Path) -> dict:
    from minillm.io.bounded import open_regular
    from minillm.io.hf.config import read_config
    from minillm.io.safetensors_header import check_entries, read_header
    from minillm.loading import find_tokenizer
    raw = json.loads((path / "config.json").read_text(encoding="utf-8"))
    config = read_config(path / "config.json")
    files = sorted(path.glob("*.safetensors"))
    if not files:
        raise ValueError(f"MODEL {path}: no .safetensors file beside its config.json")
    table, metadata = [], {}
    for file in files:
        with open_regular(file) as f:
            header, start = read_header(f, os.fstat(f.fileno()).st_size)
            entries = check_entries(header, os.fstat(f.fileno()).st_size - start)
        metadata.update(header.get("__metadata__", {}))
        table += [(name, tuple(shape), dtype, end - begin)
                  for name, dtype, shape, begin, end in entries]
    family = raw.get("model_type", config.arch)
    arches = raw.get("architectures") or []
    return {"model": str(path), "format": "safetensors", "family": family
            + (f" ({', '.join(map(str, arches))})" if arches else ""),
            "config": {k: v for k, v in raw.items() if k != "minillm"},
            "context": config.n_ctx, **_vocabulary(find_tokenizer(path), config.vocab_size),
            "metadata": metadata, "_tensors": table}


def _vocabulary(tok, model_vocab: int) -> dict:
    if tok is None:
        return {"vocabulary": {"model rows": model_vocab, "tokenizer": None}, "chat_format": None}
    from minillm.chat.formats.detect import detect_format, template_of
    template = template_of(tok)
    found = None if template is None else detect_format(template)
    why = found or ("none: the model carries no chat template" if template is None
                    else "none recognised from the model's chat template")
    special = dict(sorted(tok.special_tokens.items(), key=lambda kv: kv[1]))
    return {"vocabulary": {"size": tok.vocab_size, "model rows": model_vocab,
                           "bos": tok.bos_id, "eos": tok.eos_id, "special_tokens": special},
            "chat_format": why}


def _short(value):
    if isinstance(value, list) and len(value) > LONG_ARRAY:
        return f"[{len(value):,} items]"
    return value


def run(args) -> int:
    path = resolve_model_path(args.model, "MODEL")
    if args.plan:
        return show_plan(path, args.model, args.json)
    facts = model_facts(path, args.tensors)
    if args.json:
        print(json.dumps(facts, ensure_ascii=False, indent=1))
        return 0
    for key in ("model", "format", "family", "parameters", "bytes", "dtypes", "context"):
        value = facts[key]
        print(f"{key}: {value:,}" if isinstance(value, int) else f"{key}: {value}")
    vocab = facts["vocabulary"]
    print(f"vocabulary: {vocab.get('size', 'no tokenizer')} tokens (model rows: "
          f"{vocab['model rows']:,}); bos {vocab.get('bos')}, eos {vocab.get('eos')}")
    specials = vocab.get("special_tokens") or {}
    shown = ", ".join(f"{k}={v}" for k, v in list(specials.items())[:20])
    print(f"special tokens ({len(specials)}): {shown}{' …' if len(specials) > 20 else ''}")
    print(f"chat format: {facts['chat_format']}")
    for title in ("config", "metadata"):
        print(f"{title}:")
        for k, v in facts[title].items():
            text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            print(f"  {k} = {text if len(text) <= 120 else text[:117] + '...'}")
    if args.tensors:
        print("tensors:\n  name\tshape\ttype\tbytes")
        for t in facts["tensors"]:
            print(f"  {t['name']}\t{'x'.join(map(str, t['shape']))}\t{t['type']}\t{t['bytes']:,}")
    return 0


def show_plan(path: Path, name: str, as_json: bool) -> int:
    """This machine's stored plan for the model at ``path`` (never measured here)."""
    from minillm.cli.speed.show import model_config, plan_json, plan_lines, shape_names
    from minillm.engine.machine import machine_key
    from minillm.engine.plan import plan_path, product_shapes, read_plan
    config = model_config(path)
    key, shapes = machine_key(), product_shapes(config)
    plan = read_plan(plan_path(key), key)
    if plan is None:
        raise ValueError(f"no plan stored for this machine at {plan_path(key)}; "
                         f"`minillm bench --plan {name}` measures one")
    print(plan_json(plan, shapes) if as_json else "\n".join(
        [f"plan: {plan_path(key)}"] + plan_lines(plan, shapes, shape_names(config))))
    return 0
