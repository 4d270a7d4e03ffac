"""Variants of the exercises of notebook 19 (how it learns): backward passes, AdamW, the
schedule, a batch, LoRA. The wrong ones are the mistakes the notebook warns about: a sign error
in dL/dz, the missing 1/N of the mean, AdamW without bias correction or with the decay inside the
moments, LoRA without α/r — and a loss gradient computed in its own input."""
import math

import numpy as np

from minillm.train.grad_norm import layer_norm_backward, rms_norm_backward

from .common import SOLUTIONS as S, Attempt, as_list, forgets_return, in_float32, softmax

IN_PLACE = "changed its input logits in place"


def ce_grad(logits, targets, sign=1.0, mean=True, onehot=True):
    p = softmax(logits)                                                 # [N, V]
    if onehot:
        p[np.arange(len(targets)), targets] -= 1.0
    return sign * p / (len(targets) if mean else 1)


def ce_grad_in_place(logits, targets):
    logits -= logits.max(axis=-1, keepdims=True)                        # the caller's logits, shifted
    np.exp(logits, out=logits)
    logits /= logits.sum(axis=-1, keepdims=True)
    logits[np.arange(len(targets)), targets] -= 1.0
    return logits / len(targets)


def ce_grad_by_loop(logits, targets):
    out = np.zeros_like(logits)
    for n, (row, t) in enumerate(zip(logits, targets)):
        e = np.exp(row - row.max())
        out[n] = e / e.sum()
        out[n, t] -= 1
    return out / len(targets)


def attention(dout, q, k, v, scale=True, mask=True, full_softmax=True, transpose_dv=False):
    T, D = q.shape
    s = 1 / math.sqrt(D)
    scores = q @ k.T * s
    if mask:
        scores = np.where(np.tril(np.ones((T, T), bool)), scores, -1e9)
    P = softmax(scores)
    dP = dout @ v.T
    dS = P * (dP - (dP * P).sum(-1, keepdims=True)) if full_softmax else P * dP
    g = s if scale else 1.0
    return dS @ k * g, dS.T @ q * g, (P @ dout if transpose_dv else P.T @ dout)


def adamw(theta, g, m, v, t, lr, b1, b2, eps, wd, corrected=True, coupled=False, decay_after=False,
          eps_inside=False):
    if coupled:
        g = g + wd * theta
    m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
    m_hat, v_hat = (m / (1 - b1 ** t), v / (1 - b2 ** t)) if corrected else (m, v)
    denom = np.sqrt(v_hat + eps) if eps_inside else np.sqrt(v_hat) + eps
    step = theta - lr * m_hat / denom
    if decay_after:                             # torch's order: θ(1 − lr λ) first — the same value
        return (theta * (1 - lr * wd)) - lr * m_hat / denom, m, v
    return step - (0.0 if coupled else lr * wd * theta), m, v


def lr_schedule(step, max_lr, min_lr, warmup, total, from_zero=False, over_total=False, linear=False):
    if step < warmup:
        return max_lr * (step if from_zero else step + 1) / warmup
    progress = min((step - warmup) / (total if over_total else max(1, total - 1 - warmup)), 1.0)
    if linear:
        return max_lr - (max_lr - min_lr) * progress
    return min_lr + (max_lr - min_lr) * (1 + math.cos(math.pi * progress)) / 2


def batch_by_loop(ids, starts, T):
    x, y = [], []
    for s in starts:
        window = ids[s:s + T + 1]
        x.append(list(window[:-1]))
        y.append(list(window[1:]))
    return np.array(x), np.array(y)


def lora_forward_merged(x, W, A, B, alpha):
    return x @ (W + alpha / A.shape[1] * A @ B)                         # W' first: the same y


def clip_per_array(grads, max_norm):
    return [g * min(1.0, max_norm / np.linalg.norm(g)) for g in grads]


def clip_flattened(grads, max_norm):
    norm = np.linalg.norm(np.concatenate([g.ravel() for g in grads]))
    return tuple(g * min(1.0, max_norm / norm) for g in grads)


VARIANTS = {
    "clip_grads": (
        [Attempt("the solution", S["clip_grads"]),
         Attempt("one flattened vector's norm, a tuple back", clip_flattened),
         Attempt("float32", lambda gs, m: S["clip_grads"]([g.astype(np.float32) for g in gs], m))],
        [Attempt("each array clipped by its own norm", clip_per_array, hint="clip by the global norm"),
         Attempt("always scaled to max_norm", lambda gs, m: [g * m / np.linalg.norm(np.concatenate(
             [h.ravel() for h in gs])) for g in gs], hint="scale only when the norm is above"),
         Attempt("divided by the norm (max_norm ignored)", lambda gs, m: [g / np.linalg.norm(np.concatenate(
             [h.ravel() for h in gs])) for g in gs]),
         Attempt("only the first array", lambda gs, m: S["clip_grads"](gs, m)[:1], says="expected"),
         forgets_return(S["clip_grads"])]),
    "ce_grad": (
        [Attempt("the solution", S["ce_grad"]),
         Attempt("row by row", ce_grad_by_loop),
         Attempt("float32", in_float32(ce_grad)),
         Attempt("a list", as_list(ce_grad))],
        [Attempt("the sign flipped: onehot − p", lambda z, t: ce_grad(z, t, sign=-1.0), hint="the sign"),
         Attempt("no 1/N: the gradient of the sum", lambda z, t: ce_grad(z, t, mean=False),
                 hint="the loss is a mean"),
         Attempt("softmax alone, no − onehot", lambda z, t: ce_grad(z, t, onehot=False), hint="subtract onehot"),
         Attempt("right values, computed in its input (logits -= …)", ce_grad_in_place, says=IN_PLACE),
         Attempt("p − onehot without the max subtracted", lambda z, t: (np.exp(z) / np.exp(z).sum(-1, keepdims=True)
                                                                     - np.eye(z.shape[1])[t]) / len(t)),
         forgets_return(S["ce_grad"])]),
    "linear_backward": (
        [Attempt("the solution", S["linear_backward"]),
         Attempt("a list of three", lambda dy, x, W: list(S["linear_backward"](dy, x, W))),
         Attempt("einsum", lambda dy, x, W: (np.einsum("no,io->ni", dy, W), np.einsum("ni,no->io", x, dy),
                                             np.einsum("no->o", dy)))],
        [Attempt("db as a mean", lambda dy, x, W: (dy @ W.T, x.T @ dy, dy.mean(0)), hint="db sums dy"),
         Attempt("dW transposed: dyᵀ x", lambda dy, x, W: (dy @ W.T, dy.T @ x, dy.sum(0))),
         Attempt("dW as a mean over rows", lambda dy, x, W: (dy @ W.T, x.T @ dy / len(x), dy.sum(0))),
         Attempt("only dx and dW", lambda dy, x, W: (dy @ W.T, x.T @ dy), says="expected 3 arrays"),
         forgets_return(S["linear_backward"])]),
    "rms_norm_backward": (
        [Attempt("the solution", S["rms_norm_backward"]),
         Attempt("the library's backward", rms_norm_backward)],
        [Attempt("dy · w / rms alone", lambda dy, x, w, eps: (dy * w / np.sqrt((x * x).mean(-1, keepdims=True) + eps),
                                                             rms_norm_backward(dy, x, w, eps)[1]),
                 hint="that is dy · w / rms alone"),
         Attempt("LayerNorm's backward (a centring RMSNorm has not)",
                 lambda dy, x, w, eps: (layer_norm_backward(dy, x, w, eps)[0], rms_norm_backward(dy, x, w, eps)[1])),
         Attempt("dw as dy summed (forgets x̂)", lambda dy, x, w, eps: (rms_norm_backward(dy, x, w, eps)[0], dy.sum(0))),
         forgets_return(S["rms_norm_backward"])]),
    "attention_backward": (
        [Attempt("the solution", S["attention_backward"]),
         Attempt("−1e9 for −∞", attention),
         Attempt("float32", in_float32(attention))],
        [Attempt("no 1/√D in dq, dk", lambda *a: attention(*a, scale=False), hint="the scores are q kᵀ / √D"),
         Attempt("dS = P ⊙ dP", lambda *a: attention(*a, full_softmax=False), hint="the softmax backward"),
         Attempt("no causal mask", lambda *a: attention(*a, mask=False)),
         Attempt("dv = P dout (not Pᵀ)", lambda *a: attention(*a, transpose_dv=True)),
         forgets_return(S["attention_backward"])]),
    "adamw_step": (
        [Attempt("the solution", S["adamw_step"]),
         Attempt("decay first, θ(1 − lr λ), as minillm and torch", lambda *a: adamw(*a, decay_after=True)),
         Attempt("a list of three", lambda *a: list(S["adamw_step"](*a)))],
        [Attempt("without bias correction", lambda *a: adamw(*a, corrected=False), hint="bias correction"),
         Attempt("weight decay inside the moments (Adam + L2)", lambda *a: adamw(*a, coupled=True),
                 hint="decoupled weight decay"),
         Attempt("eps inside the root", lambda *a: adamw(*a[:8], 1e-3, a[9], eps_inside=True)),
         Attempt("returns only theta", lambda *a: S["adamw_step"](*a)[0], says="expected 3 arrays"),
         forgets_return(S["adamw_step"])]),
    "lr_schedule": (
        [Attempt("the solution", S["lr_schedule"]),
         Attempt("a NumPy float", lambda *a: np.float64(lr_schedule(*a)))],
        [Attempt("warm-up from 0", lambda *a: lr_schedule(*a, from_zero=True), hint="step 0 is the warm-up's first"),
         Attempt("cosine over total steps", lambda *a: lr_schedule(*a, over_total=True), hint="the cosine reaches min_lr"),
         Attempt("linear decay", lambda *a: lr_schedule(*a, linear=True)),
         Attempt("no warm-up", lambda s, hi, lo, w, t: lr_schedule(s, hi, lo, 0, t)),
         forgets_return(S["lr_schedule"])]),
    "batch_of": (
        [Attempt("the solution", S["batch_of"]),
         Attempt("windows of T + 1, split", batch_by_loop),
         Attempt("a list [x, y]", lambda *a: list(S["batch_of"](*a)))],
        [Attempt("targets = inputs", lambda ids, st, T: (S["batch_of"](ids, st, T)[0],) * 2, hint="the targets are the NEXT"),
         Attempt("targets shifted left", lambda ids, st, T: (S["batch_of"](ids, st, T)[0],
                                                            np.stack([ids[max(s - 1, 0):max(s - 1, 0) + T] for s in st]))),
         Attempt("x one token short", lambda ids, st, T: tuple(a[:, :-1] for a in S["batch_of"](ids, st, T)),
                 says="you returned shape"),
         forgets_return(S["batch_of"])]),
    "lora_forward": (
        [Attempt("the solution", S["lora_forward"]),
         Attempt("merge first, then one product", lora_forward_merged),
         Attempt("float32", in_float32(S["lora_forward"]))],
        [Attempt("without α/r", lambda x, W, A, B, a: x @ W + (x @ A) @ B, hint="scale the low-rank path"),
         Attempt("α alone", lambda x, W, A, B, a: x @ W + a * (x @ A) @ B),
         Attempt("the adapter alone", lambda x, W, A, B, a: a / A.shape[1] * (x @ A) @ B),
         forgets_return(S["lora_forward"])]),
    "lora_grads": (
        [Attempt("the solution", S["lora_grads"]),
         Attempt("a list", lambda *a: list(S["lora_grads"](*a)))],
        [Attempt("without α/r", lambda G, A, B, a: (G @ B.T, A.T @ G), hint="W' = W + (alpha / r) A B"),
         Attempt("α alone", lambda G, A, B, a: (a * G @ B.T, a * A.T @ G)),
         Attempt("(dB, dA): the order swapped", lambda *a: S["lora_grads"](*a)[::-1], says="you returned shape"),
         forgets_return(S["lora_grads"])]),
}
