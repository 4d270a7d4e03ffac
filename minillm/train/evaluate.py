"""Scoring a model on held-out text: the mean next-token loss, in nats and in bits per character.

    loss = mean over windows and positions of  −log p(next token | the tokens before it)
    bits per character = loss · tokens / (characters · ln 2)   (comparable across tokenizers)

The training loop (loop.py) calls ``evaluate`` on fixed validation windows; ``evaluate_text``
scores any text. Example::

    evaluate_text(model, tokenizer, open("val.txt").read())
    # -> {"loss": nats per token, "bits_per_char": ..., "tokens": scored, "windows": ...}
"""
from __future__ import annotations

import numpy as np

from minillm.functional import cross_entropy
from minillm.model import GPT
from minillm.train.data import bits_per_char, eval_windows, token_array


def evaluate(model: GPT, inputs: np.ndarray, targets: np.ndarray, batch: int = 16) -> float:
    """Mean next-token loss (nats) of ``model`` over windows inputs/targets [W, T], in batches."""
    total = 0.0
    for i in range(0, len(inputs), batch):
        with np.errstate(over="ignore", invalid="ignore"):   # a diverged model: nan, said by train
            logits = model(inputs[i:i + batch])                         # [b, T, V]
            total += cross_entropy(logits, targets[i:i + batch]) * len(logits)
    return total / len(inputs)


def evaluate_text(model: GPT, tokenizer, text: str, max_windows: int | None = None) -> dict:
    """Score ``text``: encode it, tile it with windows of n_ctx tokens, mean loss over them.

    -> {"loss": nats per token, "bits_per_char", "tokens": scored, "windows"}. Bits per character
    use the text's own characters per token, so they compare across tokenizers.
    """
    ids = token_array(tokenizer.encode_ordinary(text), model.config.vocab_size)   # [N]
    x, y = eval_windows(ids, model.config.n_ctx, max_windows)                     # [W, T] each
    loss = evaluate(model, x, y)
    return {"loss": loss, "bits_per_char": bits_per_char(loss, len(ids), len(text)),
            "tokens": int(x.size), "windows": len(x)}
