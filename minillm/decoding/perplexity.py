"""Scoring a text token by token: each token's log-probability, and the perplexity of a long text.

    log p(x_t | x_<t)          a row of log_softmax(logits) read at the next token
    PPL = exp(mean over scored tokens of −log p(x_t | x_<t))

``perplexity(model, ids, ctx)`` follows llama.cpp's ``llama-perplexity``: the ids are cut into
⌊N / ctx⌋ chunks of ctx tokens (the tail that does not fill a chunk is dropped); each chunk is
one forward pass, and only its second half is scored — positions first = ⌊ctx/2⌋ … ctx−2 predict
tokens first+1 … ctx−1, so every scored token sees at least ⌊ctx/2⌋ tokens of context and a chunk
scores ctx − ⌊ctx/2⌋ − 1 tokens. The ± is llama.cpp's: the standard error of the mean NLL,
sqrt((mean(nll²) − mean(nll)²) / (count − 1)), times PPL. (llama.cpp also puts BOS in place of
each chunk's first token when the vocabulary asks for it, ``tokenizer.ggml.add_bos_token``;
minillm scores the ids as given — SmolLM2 asks for none, so the two agree there.)

``perplexity(model, ids, ctx, stride=S)`` is the sliding window (Hugging Face's "perplexity of
fixed-length models"): windows of ctx input tokens start every S tokens; each scores only the
tokens no earlier window scored, so every token but the first is scored exactly once, with at
least ctx − S tokens of context (the first window: what it has). With S = ctx the windows tile
the text and the number is ``evaluate_text``'s, exp(loss), when ctx divides N − 1. (Unlike HF's
loop, which feeds windows of ctx tokens including the scored one and so with S = ctx skips each
window's first token, a window here predicts the token right after it too. llama.cpp's own
``--ppl-stride`` is another rule again: it scores only each window's last S tokens, so the first
window's first ctx − S tokens are never scored.)

Example::

    r = perplexity(model, tok.encode_ordinary(text), ctx=128)
    r.ppl, r.error, r.running      # 23.1, 0.41, [25.0, 23.8, ...]  (one per chunk)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from minillm.functional import log_softmax


@dataclass
class Perplexity:
    """ppl = exp(nll); ``error`` its ± (llama.cpp's); ``tokens`` scored; ``running`` the
    estimate after each chunk (window)."""
    ppl: float
    error: float
    nll: float
    tokens: int
    chunks: int
    running: list = field(default_factory=list)


def token_logprobs(model, ids, top_k: int = 0):
    """One forward pass over ``ids`` [T] (T ≤ n_ctx) -> (logprobs [T], top_ids [T, K], top_lp [T, K]).

    logprobs[t] = log p(ids[t] | ids[:t]); logprobs[0] is nan (nothing precedes the first token).
    top_*[t] are the K most likely tokens at position t (row t − 1's prediction), best first;
    row 0 is filled with −1 / nan.
    """
    ids = _ids(ids, model.config.vocab_size)                              # [T]
    if len(ids) > model.config.n_ctx:
        raise ValueError(f"the text is {len(ids):,} tokens, more than the model's context window "
                         f"of {model.config.n_ctx:,}: score a shorter text (or use perplexity)")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        raise ValueError(f"top_k must be an int >= 0, got {top_k!r}")
    top_k = min(top_k, model.config.vocab_size)
    with np.errstate(over="ignore", invalid="ignore"):
        logp = log_softmax(model(ids[None, :])[0])                       # [T, V]
    T = len(ids)
    lp = np.full(T, np.nan, dtype=np.float32)                            # [T]
    lp[1:] = logp[np.arange(T - 1), ids[1:]]                             # row t-1 predicts ids[t]
    top_ids = np.full((T, top_k), -1, dtype=np.int64)                    # [T, K]
    top_lp = np.full((T, top_k), np.nan, dtype=np.float32)               # [T, K]
    if top_k and T > 1:
        best = np.argsort(-logp[:-1], axis=-1, kind="stable")[:, :top_k]  # [T-1, K]
        top_ids[1:] = best
        top_lp[1:] = np.take_along_axis(logp[:-1], best, axis=-1)
    return lp, top_ids, top_lp


def perplexity(model, ids, ctx: int | None = None, stride: int | None = None, batch: int = 1,
               progress=None) -> Perplexity:
    """The perplexity of ``ids`` [N] (see the module docstring); ctx defaults to the model's n_ctx.
    ``progress(done, total, running)`` is called after each batch of chunks (windows), with
    the running estimates so far (one per chunk)."""
    ids = _ids(ids, model.config.vocab_size)                              # [N]
    ctx = model.config.n_ctx if ctx is None else ctx
    _check_int("ctx", ctx, 2 if stride is not None else 3, model.config.n_ctx,
               "the model's context window")
    _check_int("batch", batch, 1, None, "")
    if stride is None:
        windows = _llama_chunks(len(ids), ctx)
    else:
        _check_int("stride", stride, 1, ctx, "ctx")
        windows = _sliding_windows(len(ids), ctx, stride)
    sums = _Sums()
    for b in range(0, len(windows), batch):
        group = windows[b:b + batch]
        for nll in _window_nlls(model, ids, group):
            sums.add(nll)
        if progress is not None:
            progress(min(b + batch, len(windows)), len(windows), sums.running)
    return sums.result()


def _llama_chunks(n: int, ctx: int) -> list[tuple[int, int, int, int]]:
    """llama-perplexity's ⌊n / ctx⌋ chunks as (start, stop, first, last): the window is fed
    ids[start:stop] and positions first … last − 1 are scored (position j predicts start+j+1)."""
    if n < 2 * ctx:                          # llama.cpp's own minimum: two chunks
        raise ValueError(f"the text is {n:,} tokens; perplexity with a context of {ctx:,} needs "
                         f"at least 2 x {ctx:,} = {2 * ctx:,}: give a longer text or a smaller ctx")
    return [(k * ctx, (k + 1) * ctx, ctx // 2, ctx - 1) for k in range(n // ctx)]


def _sliding_windows(n: int, ctx: int, stride: int) -> list[tuple[int, int, int, int]]:
    """Windows (start, stop, first, last) fed ids[start:stop], whose predictions of
    ids[start+1 : stop+1] are scored from position ``first`` on (the targets not yet scored)."""
    if n < 2:
        raise ValueError(f"the text is {n} token(s); perplexity needs at least 2")
    windows, scored_to = [], 0              # targets 1 … scored_to are done
    for start in range(0, n - 1, stride):
        stop = min(start + ctx, n - 1)                     # input ids[start:stop]
        windows.append((start, stop, scored_to - start, stop - start))
        scored_to = stop
        if stop == n - 1:
            break
    return windows


def _window_nlls(model, ids: np.ndarray, group) -> list[np.ndarray]:
    """−log p of each window's scored tokens, in order (float64); equal lengths run batched."""
    out = [None] * len(group)
    for length in sorted({stop - start for start, stop, _, _ in group}):
        which = [i for i, w in enumerate(group) if w[1] - w[0] == length]
        x = np.stack([ids[group[i][0]:group[i][1]] for i in which])      # [b, T]
        with np.errstate(over="ignore", invalid="ignore"):
            logp = log_softmax(model(x))                                  # [b, T, V]
        for row, i in zip(logp, which):
            start, _, first, last = group[i]
            pos = np.arange(first, last)                # [n] positions; pos j predicts start+j+1
            out[i] = -row[pos, ids[start + pos + 1]].astype(np.float64)  # [n]
    return out


class _Sums:
    """Running sums of nll and nll² over scored tokens, as llama-perplexity keeps them."""

    def __init__(self):
        self.total, self.squares, self.count, self.running = 0.0, 0.0, 0, []

    def add(self, nll: np.ndarray) -> None:
        self.total += float(nll.sum())
        self.squares += float((nll * nll).sum())
        self.count += len(nll)
        self.running.append(math.exp(self.total / self.count))

    def result(self) -> Perplexity:
        mean = self.total / self.count
        var = self.squares / self.count - mean * mean
        error = math.sqrt(var / (self.count - 1)) if var > 0 and self.count > 1 else 0.0
        ppl = math.exp(mean)
        return Perplexity(ppl, error * ppl, mean, self.count, len(self.running), self.running)


def _ids(ids, vocab_size: int) -> np.ndarray:
    arr = np.asarray(ids)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"ids must be a 1-D sequence of int token ids, got shape {arr.shape} "
                         f"dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError("ids is empty: there is nothing to score")
    if arr.min() < 0 or arr.max() >= vocab_size:
        raise ValueError(f"token ids must be in [0, {vocab_size}), got range "
                         f"[{arr.min()}, {arr.max()}]")
    return arr.astype(np.int64)


def _check_int(name: str, value, low: int, high: int | None, high_name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < low or (high is not None and value > high):
        allowed = f"[{low}, {high}] ({high_name})" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be in {allowed}, got {value}")
