"""``--show-candidates K`` (generate) and ``/candidates K`` (chat): what the model offered at each
step, and what the sampling settings made of it — the explainer articles' temperature and
top-k / top-p tables, live on any model::

    step 3: ' the' chosen (p 0.412 raw, 0.603 sampled)
          raw  sampled  token
      → 0.412    0.603  ' the'
        0.201    0.294  ' a'
        0.050        -  ' an'        (- : removed by top-k / top-p / min-p)

"raw" is softmax(logits), the model's own distribution; "sampled" is the distribution the draw
used, after temperature, top-k, top-p, min-p and any penalties (``Sampler.probs``). The chosen
token is marked; when it is not among the K most likely (a temperature draw can pick a rarer
one) it gets a line of its own. Each ``Step`` carries these numbers (``generate(..., top_n=K,
logprobs=True)``: ``Step.top``, ``Step.top_sampled``, ``Step.sampled``).
"""
from __future__ import annotations

import math

from minillm.tokenizer.display import render_token

MAX_CANDIDATES = 50     # a table per token: more rows than this is not something to read


def check_candidates(k) -> int:
    """``--show-candidates`` / ``/candidates``: an integer in [1, MAX_CANDIDATES]."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_CANDIDATES:
        raise ValueError(f"--show-candidates (chat: /candidates) must be an integer from 1 to {MAX_CANDIDATES} (the most likely "
                         f"next tokens shown at each step), got {k!r}")
    return k


def table(step, tokenizer, number: int) -> str:
    """The lines for one ``Step`` (one made with top_n and logprobs)."""
    shown = lambda i: f"'{render_token(tokenizer.token_bytes(i))}'"   # noqa: E731  (escapes visible)
    rows = [(i, math.exp(lp), p) for (i, lp), p in zip(step.top, step.top_sampled)]
    if step.id not in {i for i, _, _ in rows}:                          # a rarer draw: its own line
        rows.append((step.id, math.exp(step.logprob), step.sampled))
    lines = [f"step {number}: {shown(step.id)} chosen (p {math.exp(step.logprob):.3f} raw, "
             f"{step.sampled:.3f} sampled)", "      raw  sampled  token"]
    for i, raw, sampled in rows:
        mark = "→" if i == step.id else " "
        after = f"{sampled:8.3f}" if sampled > 0 else f"{'-':>8}"
        lines.append(f"  {mark} {raw:.3f} {after}  {shown(i)}")
    return "\n".join(lines)
