"""Solutions to the exercises of notebook 19 (each one the formula the notebook derives)."""
import math

import numpy as np


def ce_grad(logits, targets):
    z = logits - logits.max(axis=-1, keepdims=True)                    # [N, V]
    p = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)              # softmax
    p[np.arange(len(targets)), targets] -= 1.0                          # − onehot (p is a new array)
    return p / len(targets)                                             # the mean over N rows


def linear_backward(dy, x, W):
    return dy @ W.T, x.T @ dy, dy.sum(axis=0)                           # dx, dW, db


def rms_norm_backward(dy, x, w, eps):
    r = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)      # [N, 1]
    xhat, g = x * r, dy * w                                             # [N, C]
    dx = r * (g - xhat * (g * xhat).mean(axis=-1, keepdims=True))      # the path through the rms
    return dx, (dy * xhat).sum(axis=0)


def attention_backward(dout, q, k, v):
    T, D = q.shape
    scale = 1.0 / math.sqrt(D)
    scores = np.where(np.tril(np.ones((T, T), bool)), q @ k.T * scale, -np.inf)   # [T, T]
    P = np.exp(scores - scores.max(axis=-1, keepdims=True))
    P /= P.sum(axis=-1, keepdims=True)                                  # the weights
    dP = dout @ v.T                                                     # [T, T]
    dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))               # the softmax backward
    return dS @ k * scale, dS.T @ q * scale, P.T @ dout                 # dq, dk, dv


def adamw_step(theta, g, m, v, t, lr, beta1, beta2, eps, weight_decay):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    m_hat, v_hat = m / (1 - beta1 ** t), v / (1 - beta2 ** t)
    return theta - lr * (m_hat / (np.sqrt(v_hat) + eps) + weight_decay * theta), m, v


def lr_schedule(step, max_lr, min_lr, warmup, total):
    if step < warmup:
        return max_lr * (step + 1) / warmup
    progress = min((step - warmup) / max(1, total - 1 - warmup), 1.0)
    return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))


def batch_of(ids, starts, T):
    x = np.stack([ids[s:s + T] for s in starts])                       # [B, T]
    y = np.stack([ids[s + 1:s + T + 1] for s in starts])               # [B, T]: one to the right
    return x, y


def lora_forward(x, W, A, B, alpha):
    return x @ W + (alpha / A.shape[1]) * (x @ A) @ B                   # [N, out]


def lora_grads(G, A, B, alpha):
    s = alpha / A.shape[1]
    return s * G @ B.T, s * A.T @ G                                     # dA [in, r], dB [r, out]


def clip_grads(grads, max_norm):
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads))          # one norm over every array
    scale = min(1.0, max_norm / norm)                                   # only ever shrinks
    return [g * scale for g in grads]                                   # new arrays, the same order
