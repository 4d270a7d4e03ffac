"""Exercises of notebook 19 (how it learns), what a step does with the gradients: AdamW's update,
the learning-rate schedule, a batch of windows, LoRA's forward and gradients (the references in
float64; the backward passes: backprop.py)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .backprop import as_arrays, first_wrong, rounded, shapes, show_arrays
from .core import Exercise, Wrong, arrays_differ, as_array, as_number, fmt, kind, output_hint


# ---- AdamW ----------------------------------------------------------------------------------------

def adamw_reference(theta, g, m, v, t, lr, beta1, beta2, eps, wd, corrected=True, coupled=False):
    if coupled:                                 # the bug: the decay goes through the moments
        g = g + wd * theta
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    m_hat = m / (1 - beta1 ** t) if corrected else m
    v_hat = v / (1 - beta2 ** t) if corrected else v
    decay = 0.0 if coupled else wd * theta
    return theta - lr * (m_hat / (np.sqrt(v_hat) + eps) + decay), m, v


def judge_adamw(fn, case):
    theta, g, m, v, t, lr, wd = case
    names = "theta, m, v"
    got = as_arrays(fn(theta.copy(), g.copy(), m.copy(), v.copy(), t, lr, 0.9, 0.95, 1e-8, wd),
                    [theta.shape] * 3, names)
    return first_wrong(got, adamw_reference(theta, g, m, v, t, lr, 0.9, 0.95, 1e-8, wd), names)


def adamw_case(seed, n, t, wd):
    rng = np.random.default_rng(seed)
    m = np.zeros(n) if t == 1 else rng.normal(size=n) * 0.1
    v = np.zeros(n) if t == 1 else rng.uniform(0.001, 0.02, n)
    return (*rounded(rng.normal(size=n), rng.normal(size=n)), np.round(m, 3), np.round(v, 4), t, 0.1, wd)


def show_adamw(c):
    return (f"theta {fmt(c[0])}, g {fmt(c[1])}, m {fmt(c[2])}, v {fmt(c[3])}, step t = {c[4]}, "
            f"lr {c[5]}, betas (0.9, 0.95), eps 1e-8, weight_decay {c[6]}")


# ---- the learning-rate schedule -------------------------------------------------------------------

def lr_reference(step, max_lr, min_lr, warmup, total, from_zero=False, over_total=False):
    if step < warmup:
        return max_lr * (step if from_zero else step + 1) / warmup
    span = total if over_total else max(1, total - 1 - warmup)
    progress = min((step - warmup) / span, 1.0)
    return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))


def judge_lr(fn, case):
    want = lr_reference(*case)
    got = as_number(fn(*case), "a learning rate")
    if arrays_differ(got, want):
        return f"you returned {fmt(got, 6)}; the schedule gives {fmt(want, 6)}"
    return None


def show_lr(c):
    return f"step {c[0]} of total {c[4]}, max_lr {c[1]}, min_lr {c[2]}, warmup {c[3]}"


LR_CASES = st.tuples(st.integers(1, 30), st.integers(2, 200)).flatmap(
    lambda wt: st.tuples(st.integers(0, wt[0] + wt[1] - 1), st.just(1e-2), st.just(1e-3),
                         st.just(wt[0]), st.just(wt[0] + wt[1])))


# ---- a batch of windows -------------------------------------------------------------------------

def judge_batch(fn, case):
    ids, starts, T = case
    x = np.stack([ids[s:s + T] for s in starts])                       # [B, T]
    y = np.stack([ids[s + 1:s + T + 1] for s in starts])               # [B, T]
    got = fn(ids.copy(), starts.copy(), T)
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise Wrong(f"you returned {kind(got)}; expected a pair: return x, y")
    gx, gy = (as_array(a, x.shape, n) for a, n in zip(got, ("x [B, T]", "y [B, T]")))
    if arrays_differ(gx, x):
        return f"you returned x = {gx.astype(int).tolist()}; the windows are {x.tolist()}"
    if arrays_differ(gy, y):
        return f"you returned y = {gy.astype(int).tolist()}; the next tokens are {y.tolist()}"
    return None


def batch_case(n, starts, T):
    return np.arange(100, 100 + n), np.array(starts), T


BATCHES = st.tuples(st.integers(3, 12), st.integers(1, 4)).flatmap(
    lambda nt: st.tuples(st.just(np.arange(100, 100 + nt[0] + 5)),
                         st.lists(st.integers(0, nt[0] + 4 - nt[1]), min_size=1, max_size=3).map(np.array),
                         st.just(nt[1])))


# ---- LoRA: W' = W + (α/r) A B, applied as x W' ----------------------------------------------------

def lora_forward_reference(x, W, A, B, alpha, scaled=True):
    s = alpha / A.shape[1] if scaled else 1.0
    return x @ W + s * (x @ A) @ B                                      # [N, out]


def judge_lora_forward(fn, case):
    x, W, A, B, alpha = case
    got = as_array(fn(x.copy(), W.copy(), A.copy(), B.copy(), alpha), (len(x), W.shape[1]), "y [N, out]")
    want = lora_forward_reference(x, W, A, B, alpha)
    if arrays_differ(got, want):
        return f"you returned {np.round(got, 4).tolist()}; x W + (α/r) (x A) B is {np.round(want, 4).tolist()}"
    return None


def lora_grads_reference(G, A, B, alpha, scaled=True):
    s = alpha / A.shape[1] if scaled else 1.0
    return s * G @ B.T, s * A.T @ G                                     # [in, r], [r, out]


def judge_lora_grads(fn, case):
    G, A, B, alpha = case
    names = "dA, dB"
    got = as_arrays(fn(G.copy(), A.copy(), B.copy(), alpha), [A.shape, B.shape], names)
    return first_wrong(got, lora_grads_reference(G, A, B, alpha), names)


def lora_case(seed, n_in, n_out, r, alpha, N=2):
    rng = np.random.default_rng(seed)
    return (*rounded(rng.normal(size=(N, n_in)), rng.normal(size=(n_in, n_out)),
                     rng.normal(size=(n_in, r)), rng.normal(size=(r, n_out))), alpha)


# ---- clipping the gradient by its global norm ------------------------------------------------------

def clip_reference(grads, max_norm, per_array=False, always=False):
    if per_array:                               # the bug: each array clipped by its own norm
        return tuple(g * min(1.0, max_norm / math.sqrt(float((g * g).sum()))) for g in grads)
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads))          # ‖g‖ over every array
    scale = max_norm / norm if always else min(1.0, max_norm / norm)
    return tuple(g * scale for g in grads)


def judge_clip(fn, case):
    grads, max_norm = case
    names = ", ".join(f"g{i}" for i in range(len(grads)))
    got = as_arrays(fn([g.copy() for g in grads], max_norm), [g.shape for g in grads], names)
    return first_wrong(got, clip_reference(grads, max_norm), names)


def clip_case(seed, n, size, scale, max_norm):
    rng = np.random.default_rng(seed)
    return [np.round(rng.normal(size=size + i) * scale * (i + 1), 2) + 0.01 for i in range(n)], max_norm


def show_clip(c):
    return f"grads {[g.tolist() for g in c[0]]}, max_norm {c[1]}"


EXERCISES = [
    Exercise("clip_grads", "clip_grads(grads: a list of arrays, max_norm) -> the list scaled by "
             "min(1, max_norm / ‖g‖), ‖g‖ = √(Σ g²) summed over every entry of every array (the "
             "global norm); new arrays, in the same order.", judge_clip, show_clip,
             st.builds(clip_case, st.integers(0, 999), st.integers(1, 3), st.integers(1, 4),
                       st.sampled_from([0.1, 1.0, 10.0]), st.sampled_from([0.5, 1.0, 5.0])),
             (clip_case(0, 2, 2, 0.5, 5.0), clip_case(1, 2, 3, 10.0, 1.0)),
             (output_hint("clip by the global norm: one ‖g‖ over all the arrays together, not each "
                          "array by its own", lambda c: clip_reference(*c, per_array=True)),
              output_hint("scale only when the norm is above max_norm: a smaller gradient is left "
                          "as it is", lambda c: clip_reference(*c, always=True)))),
    Exercise("adamw_step", "adamw_step(theta, g, m, v, t, lr, beta1, beta2, eps, weight_decay) -> "
             "(theta, m, v) after AdamW's step t (1, 2, …): new arrays, bias-corrected moments, the "
             "decay decoupled: theta − lr (m̂ / (√v̂ + eps) + weight_decay · theta).", judge_adamw,
             show_adamw,
             st.builds(adamw_case, st.integers(0, 999), st.integers(1, 4), st.integers(1, 8),
                       st.sampled_from([0.0, 0.1, 0.5])),
             (adamw_case(0, 3, 1, 0.1), adamw_case(1, 3, 3, 0.5)),
             (output_hint("bias correction: m and v start at 0, so divide them by 1 − β₁ᵗ and 1 − β₂ᵗ",
                          lambda c: adamw_reference(*c[:6], 0.9, 0.95, 1e-8, c[6], corrected=False)),
              output_hint("decoupled weight decay: add weight_decay · theta to the step, not to the "
                          "gradient inside m and v (that is Adam with L2)",
                          lambda c: adamw_reference(*c[:6], 0.9, 0.95, 1e-8, c[6], coupled=True)))),
    Exercise("lr_schedule", "lr_schedule(step, max_lr, min_lr, warmup, total) -> the learning rate "
             "of step `step` (0-based): max_lr · (step + 1) / warmup during the warm-up, then half a "
             "cosine from max_lr down to min_lr at the last step, total − 1.", judge_lr, show_lr,
             LR_CASES, ((0, 1e-2, 1e-3, 10, 100), (99, 1e-2, 1e-3, 10, 100), (40, 1e-2, 1e-3, 10, 100)),
             (output_hint("step 0 is the warm-up's first step: max_lr · (step + 1) / warmup, never 0",
                          lambda c: lr_reference(*c, from_zero=True)),
              output_hint("the cosine reaches min_lr at the last step: progress = (step − warmup) / "
                          "(total − 1 − warmup)", lambda c: lr_reference(*c, over_total=True)))),
    Exercise("batch_of", "batch_of(ids [n], starts [B], T) -> (x, y) [B, T] each: x[b] = ids[s : s + T], "
             "y[b] the token after each, ids[s + 1 : s + T + 1] (s = starts[b]).", judge_batch,
             show_arrays("ids, starts, T"), BATCHES,
             (batch_case(8, [0, 3], 3), batch_case(6, [2], 1)),
             (output_hint("the targets are the NEXT tokens: y = ids[s + 1 : s + T + 1]",
                          lambda c: (np.stack([c[0][s:s + c[2]] for s in c[1]]),) * 2),)),
    Exercise("lora_forward", "lora_forward(x [N, in], W [in, out], A [in, r], B [r, out], alpha) -> "
             "y [N, out] = x W + (alpha / r) (x A) B.", judge_lora_forward,
             show_arrays("x, W, A, B, alpha"),
             shapes((1, 4), (1, 4), (1, 3)).flatmap(lambda s: st.builds(
                 lora_case, st.integers(0, 999), st.just(s[0]), st.just(s[1]), st.just(s[2]),
                 st.sampled_from([1.0, 4.0, 16.0]))),
             (lora_case(0, 4, 4, 2, 8.0), lora_case(1, 3, 2, 1, 4.0)),
             (output_hint("scale the low-rank path by alpha / r (that keeps its effect when r changes)",
                          lambda c: lora_forward_reference(*c, scaled=False)),)),
    Exercise("lora_grads", "lora_grads(G [in, out], A [in, r], B [r, out], alpha) -> (dA [in, r], "
             "dB [r, out]) given G = dL/dW' for W' = W + (alpha / r) A B.", judge_lora_grads,
             show_arrays("G, A, B, alpha"),
             shapes((1, 4), (1, 4), (1, 3)).flatmap(lambda s: st.builds(
                 lambda seed, a: lora_case(seed, s[0], s[1], s[2], a)[1:], st.integers(0, 999),
                 st.sampled_from([1.0, 4.0, 16.0]))),
             (lora_case(0, 4, 4, 2, 8.0)[1:], lora_case(1, 3, 2, 1, 4.0)[1:]),
             (output_hint("W' = W + (alpha / r) A B: both gradients carry the scale alpha / r",
                          lambda c: lora_grads_reference(*c, scaled=False)),)),
]
