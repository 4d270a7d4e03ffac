"""Training data: a train/validation split of the text, and random windows of tokens.

A language model is trained on windows: pick a random start s in the token array, take
ids[s : s + T + 1]; the first T tokens are the input, the last T the targets (shifted by one).
A batch is B such windows. Random starts (rather than a fixed tiling) show the model every
offset of the text, and every step sees fresh combinations.

Reproducibility: the batch of step ``step`` is a pure function of (seed, step) — its generator is
``np.random.default_rng([seed, step])`` — so resuming at step k draws exactly the batches the
uninterrupted run would have drawn, with no generator state to save.

The split is by characters, at a line boundary: the last ``val_fraction`` of the text is held
out (never seen by the tokenizer trainer nor the model), as in nanoGPT.

Example: ``x, y = random_batch(ids, batch=2, context=4, seed=0, step=0)`` -> two [2, 4] arrays with
``y[:, :-1] == x[:, 1:]``.
"""
from __future__ import annotations

import math

import numpy as np


def split_text(text: str, val_fraction: float) -> tuple[str, str]:
    """(train, validation): the validation text is the last ``val_fraction`` of the characters,
    moved to the next line start so that no line is cut."""
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction!r}")
    cut = int(len(text) * (1.0 - val_fraction))
    newline = text.find("\n", cut)
    cut = newline + 1 if newline != -1 else cut
    if cut <= 0 or cut >= len(text):
        raise ValueError(f"the text ({len(text)} characters) is too short to split")
    return text[:cut], text[cut:]


def head_lines(text: str, max_chars: int) -> str:
    """The longest prefix of whole lines with at most ``max_chars`` characters."""
    if len(text) <= max_chars:
        return text
    end = text.rfind("\n", 0, max_chars)
    return text[:end + 1] if end != -1 else text[:max_chars]


def token_array(ids: list[int], vocab_size: int) -> np.ndarray:
    """ids -> a compact 1-D array (uint16 when the vocabulary fits, else int32).

    subtle: the ids are checked against [0, vocab_size) first: casting a NumPy int array to uint16
    silently wraps an id >= 65536 (or a negative one) into another token."""
    wide = np.asarray(ids, dtype=np.int64)                              # [N]
    if wide.ndim != 1:
        raise ValueError(f"ids must be a 1-D sequence of ints, got shape {wide.shape}")
    if wide.size and (wide.min() < 0 or wide.max() >= vocab_size):
        raise ValueError(f"token ids must be in [0, {vocab_size}), got range "
                         f"[{wide.min()}, {wide.max()}]")
    compact = np.uint16 if vocab_size <= 65536 else np.int32
    return wide.astype(compact)                                         # [N]


def random_batch(ids: np.ndarray, batch: int, context: int, seed: int, step: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """ids [N] -> inputs [B, T] and targets [B, T] int64 from B random windows of T + 1 tokens."""
    if len(ids) < context + 1:
        raise ValueError(f"{len(ids)} tokens cannot fill a window of context + 1 = {context + 1}")
    rng = np.random.default_rng([seed, step])
    starts = rng.integers(0, len(ids) - context, size=batch)            # [B]
    windows = ids[starts[:, None] + np.arange(context + 1)].astype(np.int64)   # [B, T + 1]
    return windows[:, :-1], windows[:, 1:]


def eval_windows(ids: np.ndarray, context: int, max_windows: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Non-overlapping windows tiling ids [N] from the start: inputs, targets [W, T] (the tail that
    does not fill a window is dropped). Deterministic: the validation loss of a model is a number."""
    n = (len(ids) - 1) // context
    if max_windows is not None:
        n = min(n, max_windows)
    if n == 0:
        raise ValueError(f"{len(ids)} tokens are fewer than context + 1 = {context + 1}")
    used = ids[:n * context + 1].astype(np.int64)
    inputs = used[:-1].reshape(n, context)                              # [W, T]
    targets = used[1:].reshape(n, context)                              # [W, T]
    return inputs, targets


def bits_per_char(loss_nats: float, n_tokens: int, n_chars: int) -> float:
    """Mean loss per token (nats) -> bits per character: total nats / characters / ln 2."""
    return loss_nats * n_tokens / (n_chars * math.log(2))
