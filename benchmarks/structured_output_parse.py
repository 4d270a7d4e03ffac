"""How many of SmolLM2's replies to 10 requests for JSON parse (and validate), with and without
``constraint=JsonSchema(...)``: the same prompts, greedy, the same reply budget.

    MINILLM_SHARED_DATA=/work/shared/data OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/structured_output_parse.py [--max-new-tokens 60]

Prints each reply and the counts; also the guide's build time and memory for the schema.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import minillm
from minillm.chat.conversation import Chat
from minillm.decoding.constraints import JsonSchema

SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 30},
                                           "age": {"type": "integer"}},
          "required": ["name", "age"], "additionalProperties": False}
PEOPLE = ["a pirate captain", "a retired teacher", "a young chess champion", "a dragon",
          "a famous painter", "an astronaut", "a village baker", "a robot", "a queen", "a poet"]
PROMPT = "Invent {}. Reply with a JSON object with keys name and age."


def parses(text: str) -> tuple[bool, bool]:
    """(parses as JSON, and is an object with a string name and an integer age)"""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return False, False
    ok = isinstance(value, dict) and set(value) == {"name", "age"} and isinstance(value["name"], str) \
        and isinstance(value["age"], int) and not isinstance(value["age"], bool)
    return True, ok


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-new-tokens", type=int, default=60)
    args = ap.parse_args()
    path = Path(os.environ.get("MINILLM_SHARED_DATA", "/work/shared/data")) / "models" \
        / "SmolLM2-135M-Instruct.Q4_1.gguf"
    model, tok = minillm.load_model(path)
    t = time.perf_counter()
    guide = JsonSchema(SCHEMA).guide(tok, eos_ids=[2])
    print(f"guide: {time.perf_counter() - t:.2f} s to build, {guide.dfa.n_states} states, "
          f"{guide.nbytes() / 1e6:.2f} MB")
    for constrained in (False, True):
        counts = [0, 0]
        for who in PEOPLE:
            chat = Chat(model, tok, max_new_tokens=args.max_new_tokens, temperature=0,
                        constraint=JsonSchema(SCHEMA) if constrained else None)
            text = "".join(chat.send(PROMPT.format(who))).strip()
            p, v = parses(text)
            counts[0] += p
            counts[1] += v
            print(f"  {'schema' if constrained else 'free  '} {p:d}{v:d} {text[:90]!r}")
        print(f"{'with' if constrained else 'without'} the schema: {counts[0]}/10 parse, "
              f"{counts[1]}/10 valid")


if __name__ == "__main__":
    main()
