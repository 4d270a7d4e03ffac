"""``generate --json``: one JSON object per token; ``--json-final``: one object at the end.

Per token (``--json``), one line each, as it is generated::

    {"id": 464, "text": " the", "logprob": -1.23, "top": [{"id": 464, "text": " the",
     "logprob": -1.23}, ...]}

``logprob`` is log p(id) under the model's raw distribution (``Step.logprob``: before
temperature, top-k, top-p and penalties, as OpenAI's and llama.cpp's log-probs are); ``top``
holds the ``--logprobs K`` most likely ids, best first (``Step.top``; empty without the flag).
A stop string's held-back text released at the very end comes as ``{"id": null, "text": …}``.

At the end (``--json-final``), one line: the text, the ids, why it ended (``"stop"``: an
end-of-text id or a stop string; ``"length"``: ``--max-new-tokens`` reached), the token counts,
the timings and the random seed; with ``--logprobs K`` also ``"tokens"``, the per-token objects.
"""
from __future__ import annotations

import json


def token_object(step, tokenizer) -> dict:
    """The JSON object of one ``Step`` (its ``top`` ids decoded one by one)."""
    top = [{"id": i, "text": tokenizer.decode([i]), "logprob": lp} for i, lp in step.top or ()]
    return {"id": step.id, "text": step.text, "logprob": step.logprob, "top": top}


def final_object(text: str, ids: list[int], max_new_tokens: int, prompt_tokens: int,
                 seconds: tuple[float, float], seed: int | None, tokens: list[dict] | None) -> dict:
    """The one object of ``--json-final``; ``seconds``: (prompt, generation) as Timings has them."""
    prompt_s, gen_s = seconds
    rate = (len(ids) - 1) / gen_s if len(ids) > 1 and gen_s > 0 else None   # as the timings line
    out = {"text": text, "ids": ids,
           "finish_reason": "length" if len(ids) >= max_new_tokens else "stop",
           "prompt_tokens": prompt_tokens, "generated_tokens": len(ids),
           "prompt_seconds": round(prompt_s, 4), "generation_seconds": round(gen_s, 4),
           "tokens_per_second": None if rate is None else round(rate, 1), "seed": seed}
    if tokens is not None:
        out["tokens"] = tokens
    return out


def dumps(obj: dict) -> str:
    """One line of JSON, non-ASCII text kept readable (UTF-8 out)."""
    return json.dumps(obj, ensure_ascii=False)
