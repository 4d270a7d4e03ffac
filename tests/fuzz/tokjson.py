"""Hostile tokenizer.json files, generated: normalisers, pre-tokenisers, regexes and added tokens
from a grammar that mixes real settings with the shapes that once hung or ballooned (unclosed
\\p{ and \\x{, nested quantifiers, Replace "a" -> "aa" thirty times, empty matches with a long
content, a long Prepend, long added tokens). Each case is loaded and, when it loads, encodes a
few texts, with its CPU seconds and its peak of traced memory (tracemalloc) measured.

    python -m tests.fuzz.tokjson [--cases N] [--seed S]

Outcomes: ``loaded`` (every text encoded to ids in range, or refused clearly), ``clear`` (the
load refused with a message), ``traceback`` (any other exception: a bug), ``memory`` (a
MemoryError; the run is under an address-space limit of its start + 1 GiB). A case's seconds
and peak are checked by the caller against its budget (test_fuzz_tokenizer_json.py).
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import tempfile
import time
import tracemalloc
import traceback
from pathlib import Path

from minillm.tokenizer import Tokenizer
from tests.fuzz.runner import CLEAR, limit_memory
from tests.tokenizer.formats.hf.test_tokenizer_json import BASE

REGEXES = [r"\p{", r"\P{L", r"\x{", r"a\x{41", r"\x{FFFFFFFFFFFFFFFFFFFF}", r"\x{263a}+",
           r"(a|aa)+$", r"(?:x|xx)+y|.", r"(\w+)+$", r"(?:\x{2603}|\x{2603}\x{2603})+$", r"",
           r"a*", r"\s+", r"[^\s]+", r"(?=a)", r"\b", r"[[:alpha:]]", r"\h+", r"(?m)^.*$",
           r"\p{L}+|\p{N}|\s+|.", r" ?\p{L}+| ?[^\s\p{L}]+|\s+", r"(", r"[a-", r"\Z", r"$"]
PIECES = ["\\", "x", "p", "{", "}", "[", "]", "^", "$", "(", "?", ")", "+", "*", "|", "a", ".",
          "\\s", "\\p{L}", "é"]
TEXTS = ["Hello world, it's 2024!", "a" * 200 + "!", "☃" * 60 + "z", "x" * 40 + " y",
         "<s>café</s> aa" * 20]
FORMS = ["NFC", "NFD", "NFKC", "NFKD"]


def a_regex(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return rng.choice(REGEXES)
    return "".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 12)))


def a_string(rng: random.Random) -> str:
    return rng.choice(["", "a", "aa", "▁", " ", "<s>", "☃", "x" * rng.choice([10, 1000, 1 << 16]),
                       "".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(8)))])


def a_normalizer(rng: random.Random, depth: int = 0):
    kind = rng.choice(["Replace", "Replace", "Prepend", "Lowercase", "Strip", "Form", "Sequence"])
    if kind == "Replace":
        pattern = {"Regex": a_regex(rng)} if rng.random() < 0.6 else {"String": a_string(rng)}
        return {"type": "Replace", "pattern": pattern, "content": a_string(rng)}
    if kind == "Prepend":
        return {"type": "Prepend", "prepend": a_string(rng)}
    if kind == "Strip":
        return {"type": "Strip", "strip_left": rng.random() < 0.5, "strip_right": True}
    if kind == "Form":
        return {"type": rng.choice(FORMS)}
    if kind == "Sequence" and depth < 2:
        steps = [a_normalizer(rng, depth + 1) for _ in range(rng.randrange(1, 4))]
        return {"type": "Sequence", "normalizers": steps * rng.choice([1, 1, 30])}
    return {"type": "Lowercase"}


def a_pre_tokenizer(rng: random.Random):
    splits = [{"type": "Split", "pattern": {"Regex": a_regex(rng)}, "behavior": "Isolated",
               "invert": False} for _ in range(rng.randrange(1, 3))]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": False}
    return {"type": "Sequence", "pretokenizers": [*splits, byte_level]}


def a_case(rng: random.Random) -> dict:
    data = copy.deepcopy(BASE)
    if rng.random() < 0.6:
        data["normalizer"] = a_normalizer(rng)
    if rng.random() < 0.6:
        data["pre_tokenizer"] = a_pre_tokenizer(rng)
    for i in range(rng.choice([0, 0, 1, 3])):
        data["added_tokens"].append({"id": 2052 + i, "content": a_string(rng) or "<e>",
                                     "single_word": False, "lstrip": False, "rstrip": False,
                                     "normalized": rng.random() < 0.5, "special": True})
    return data


def run_case(data: dict, folder: Path) -> tuple[str, str]:
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    try:
        tok = Tokenizer.load(folder / "tokenizer.json")
    except MemoryError:
        return "memory", traceback.format_exc(limit=-3)
    except CLEAR as exc:
        return ("clear", "") if str(exc) else ("traceback", "empty message")
    except Exception:                    # noqa: BLE001 - counting is the point
        return "traceback", traceback.format_exc(limit=-4)
    for text in TEXTS:
        try:
            ids = tok.encode(text, allowed_special="all")
        except MemoryError:
            return "memory", traceback.format_exc(limit=-3)
        except CLEAR:
            continue                     # e.g. a regex past its time budget: said clearly
        except Exception:                # noqa: BLE001
            return "traceback", traceback.format_exc(limit=-4)
        if not all(type(i) is int and 0 <= i < tok.vocab_size for i in ids):
            return "traceback", f"ids out of range for {text[:20]!r}"
    return "loaded", ""


def run(cases: int, seed: int = 0) -> dict:
    """{"counts": {outcome: n}, "slowest": [CPU seconds, case], "largest": [peak MB of traced
    memory, case], "findings": [[case, outcome, detail], …]}."""
    out = {"counts": {}, "slowest": [0.0, None], "largest": [0.0, None], "findings": []}
    with tempfile.TemporaryDirectory(prefix="minillm-tokjson-") as tmp:
        for case in range(cases):
            data = a_case(random.Random(f"tokjson/{seed}/{case}"))
            tracemalloc.start()
            t0 = time.process_time()     # (CPU seconds: a busy machine does not inflate them)
            outcome, detail = run_case(data, Path(tmp))
            seconds, peak = time.process_time() - t0, tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
            out["counts"][outcome] = out["counts"].get(outcome, 0) + 1
            out["slowest"] = max(out["slowest"], [round(seconds, 2), case], key=lambda x: x[0])
            out["largest"] = max(out["largest"], [round(peak, 1), case], key=lambda x: x[0])
            if outcome not in ("loaded", "clear"):
                out["findings"].append([case, outcome, detail[-600:]])
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    limit_memory()
    result = run(args.cases, args.seed)
    print(json.dumps(result))
    return 1 if result["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
