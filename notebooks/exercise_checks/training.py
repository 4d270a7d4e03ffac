"""Exercises of notebooks 10 (the loss, a backward pass) and 11 (thinking is tokens)."""
from __future__ import annotations

import re

import numpy as np
from hypothesis import strategies as st

from .core import (Exercise, Hint, Wrong, arrays_differ, as_array, as_number, fmt, kind,
                   layer_norm64, output_hint)


def cross_entropy_reference(logits, targets) -> float:
    z = logits - logits.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))          # [T, V]
    return float(-logp[np.arange(len(targets)), targets].mean())


def judge_cross_entropy(fn, case):
    logits, targets = case
    want = cross_entropy_reference(logits, targets)
    got = as_number(fn(logits.copy(), targets.copy()), "the loss, a number")
    if arrays_differ(got, want):
        return (f"you returned {fmt(got, 5)}; the mean of −log softmax(logits[t])[targets[t]] is "
                f"{fmt(want, 5)}")
    return None


def layer_norm_backward_reference(dy, x, w, eps):
    mu = x.mean(axis=-1, keepdims=True)
    r = 1.0 / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat, g = (x - mu) * r, dy * w
    return r * (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True))


def numeric_grad(dy, x, w, eps, h=1e-6):
    """Central differences of L = Σ dy ⊙ layer_norm(x): the gradient check."""
    def loss(x):
        return float((dy * layer_norm64(x, w, 0.0, eps)).sum())
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        grad[i] = (loss(x + e) - loss(x - e)) / (2 * h)
    return grad


def judge_ln_backward(fn, case):
    dy, x, w = case
    want = layer_norm_backward_reference(dy, x, w, 1e-5)
    got = as_array(fn(dy.copy(), x.copy(), w.copy(), 1e-5), x.shape, "dx [N, C]")
    if arrays_differ(got, want, 1e-5):
        return (f"you returned dx = {np.round(got, 4).tolist()}; the gradient check (central "
                f"differences) gives {np.round(numeric_grad(dy, x, w, 1e-5), 4).tolist()}")
    return None


THINK = re.compile(r"<think>.*?</think>", re.S)


def judge_hide(fn, text):
    want, got = THINK.sub("", text), fn(text)
    if not isinstance(got, str):
        raise Wrong(f"you returned {kind(got)}; expected the text the user sees, a str")
    if got != want:
        return (f"you showed {got!r}; the user should see {want!r} (every <think>…</think> block "
                f"removed, everything else kept)")
    return None


def judge_room(fn, case):
    n_ctx, prompt, thinking = case
    want = max(0, n_ctx - prompt - thinking)
    got = as_number(fn(n_ctx, prompt, thinking), "a number of tokens")
    if got != want:
        return f"you returned {fmt(got)}; the answer has {want} tokens left (never fewer than 0)"
    return None


def ln_case(seed, N, C):
    rng = np.random.default_rng(seed)
    return tuple(np.round(a, 2) for a in (rng.normal(size=(N, C)), rng.normal(size=(N, C)) * 3,
                                         rng.normal(size=C) + 1))


def ce_case(seed, T, V, scale):
    rng = np.random.default_rng(seed)
    return np.round(rng.normal(size=(T, V)) * scale, 2), rng.integers(0, V, T)


WORDS = st.sampled_from(["so", "the sea", " is blue", "\n", "Let me think.", "red < blue", "ok"])
SEGMENT = st.one_of(WORDS, WORDS.map(lambda w: f"<think>{w}</think>"))
EXERCISES = [
    Exercise("cross_entropy", "cross_entropy(logits [T, V], targets [T]) -> float: the mean over "
             "t of −log softmax(logits[t])[targets[t]], stable for large logits.",
             judge_cross_entropy, lambda c: f"logits {c[0].tolist()}, targets {c[1].tolist()}",
             st.builds(ce_case, st.integers(0, 999), st.integers(1, 4), st.integers(2, 5),
                       st.sampled_from([1.0, 5.0, 400.0])),
             (ce_case(0, 2, 3, 1.0), ce_case(1, 2, 3, 400.0), ce_case(2, 3, 3, 1.0)),
             (Hint("the loss is not finite: exp overflowed or a probability underflowed to 0 — "
                   "compute log softmax as z − max − log Σ exp(z − max)",
                   lambda case, got: not np.isfinite(float(got))),
              output_hint("take −log softmax of the target's logit, not −logit",
                          lambda c: float(-c[0][np.arange(len(c[1])), c[1]].mean())),
              output_hint("a mean over positions, not a sum",
                          lambda c: len(c[1]) * cross_entropy_reference(*c)))),
    Exercise("layer_norm_backward", "ln_backward(dy, x [N, C], w [C], eps) -> dx [N, C]: the "
             "gradient of Σ dy ⊙ layer_norm(x) with respect to x.", judge_ln_backward,
             lambda c: f"dy {c[0].tolist()}, x {c[1].tolist()}, w {fmt(c[2])}, eps 1e-5",
             st.builds(ln_case, st.integers(0, 999), st.integers(1, 3), st.integers(2, 5)),
             (ln_case(0, 1, 3), ln_case(1, 2, 3)),
             (output_hint("that is dy · w / σ alone: x̂ depends on x through the mean and the "
                          "variance too", lambda c: c[0] * c[2] / np.sqrt(c[1].var(-1, keepdims=True) + 1e-5)),)),
    Exercise("hide_thinking", "hide(reply) -> the reply without any <think>…</think> block: what a "
             "product shows.", judge_hide, repr,
             st.lists(SEGMENT, max_size=6).map("".join),
             ("<think>a</think>yes<think>b</think>!",),
             (output_hint(".* is greedy: it ran from the first <think> to the LAST </think>; "
                          ".*? stops at the first", lambda t: re.sub(r"<think>.*</think>", "", t, flags=re.S)),)),
    Exercise("answer_room", "room(n_ctx, prompt_tokens, thinking_tokens) -> how many tokens the "
             "answer may still use (≥ 0).", judge_room,
             lambda c: f"a window of {c[0]} tokens, a prompt of {c[1]} and {c[2]} tokens of thinking",
             st.tuples(st.integers(1, 4096), st.integers(0, 4096), st.integers(0, 4096)),
             ((4096, 100, 4000), (4096, 100, 1000)),
             (output_hint("never fewer than 0: max(0, …)", lambda c: c[0] - c[1] - c[2]),)),
]
