"""``generate --prompts FILE.jsonl``: many prompts through the batched generator, one JSON result
per line, in the input's order.

Each input line is an object ``{"prompt": "…"}``, optionally with its own
``"max_new_tokens": N`` (at most ``--max-new-tokens``); blank lines are skipped. Every line is
checked before the model runs, and a bad one is refused with its line number
(``prompts.jsonl line 3: "prompt" must be a non-empty string``). Output, one line per prompt::

    {"index": 0, "prompt": "ROMEO:", "text": "…", "ids": […], "finish_reason": "length"}

Rows go through ``generate_batch`` ``BATCH`` at a time (left-padded, one forward for all rows:
decoding/batch.py). Greedy (``-t 0``) results equal each prompt run alone; with sampling one
generator serves a whole batch, so ``--seed`` replays the file, not one line of it.
A row's own ``max_new_tokens`` cuts its ids after the batch ran (the other rows are unchanged).
"""
from __future__ import annotations

import json

from minillm.cli.machine.json_steps import dumps

BATCH = 8          # rows per generate_batch call: the KV cache is BATCH x (prompt + new tokens)
KEYS = ("prompt", "max_new_tokens")


def read_prompts(name: str, max_new_tokens: int) -> list[dict]:
    """The file's prompts as ``{"prompt", "max_new_tokens"}``, each line checked."""
    from minillm.cli._input import TEXT_LIMIT, read_text
    rows = []
    for n, line in enumerate(read_text(name, TEXT_LIMIT, "--prompts").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"--prompts {name} line {n}"
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"{where}: not JSON ({exc}); each line is {{\"prompt\": \"…\"}}") from None
        if not isinstance(row, dict):
            raise ValueError(f"{where}: each line is a JSON object {{\"prompt\": \"…\"}}, "
                             f"got {type(row).__name__}")
        extra = sorted(set(row) - set(KEYS))
        if extra:
            raise ValueError(f"{where}: unknown key(s) {', '.join(map(repr, extra))}; a line may "
                             f"hold {' and '.join(map(repr, KEYS))}")
        prompt, n_new = row.get("prompt"), row.get("max_new_tokens", max_new_tokens)
        if not isinstance(prompt, str) or not prompt:
            raise ValueError(f"{where}: \"prompt\" must be a non-empty string, got {prompt!r}")
        if isinstance(n_new, bool) or not isinstance(n_new, int) or not 0 <= n_new <= max_new_tokens:
            raise ValueError(f"{where}: \"max_new_tokens\" must be an integer in "
                             f"[0, --max-new-tokens={max_new_tokens}], got {n_new!r}")
        rows.append({"prompt": prompt, "max_new_tokens": n_new})
    if not rows:
        raise ValueError(f"--prompts {name}: no prompts in it; write one {{\"prompt\": \"…\"}} a line")
    return rows


def run_prompts(rows: list[dict], model, tokenizer, max_new_tokens: int, write, **generation) -> None:
    """Generate every row (``generation``: generate_batch's keywords) and ``write`` each result
    line in order."""
    from minillm.decoding.batch import generate_batch
    for start in range(0, len(rows), BATCH):
        chunk = rows[start:start + BATCH]
        prompts = [tokenizer.encode(r["prompt"]) for r in chunk]
        for i, p in enumerate(prompts):
            if not p:
                raise ValueError(f"--prompts: prompt {start + i} encodes to no tokens")
        outputs = generate_batch(model, prompts, max_new_tokens, **generation)
        for i, (row, ids) in enumerate(zip(chunk, outputs)):
            ids = ids[:row["max_new_tokens"]]
            write(dumps({"index": start + i, "prompt": row["prompt"],
                         "text": tokenizer.decode(ids), "ids": ids,
                         "finish_reason": "length" if len(ids) >= row["max_new_tokens"] else "stop"}))
