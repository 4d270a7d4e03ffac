"""The head and the cross-entropy a chunk of rows at a time: never all [N, V] logits at once.

With N = B·T positions and a vocabulary of V, the plain step (grad_model.py) forms the logits
[N, V] and, beside them, log-softmax's temporaries and ∂loss/∂logits [N, V]: for SmolLM2 at
batch 4 × 128 (N = 512, V = 49,152) that is ~100 MB per array, several alive at once. But the
rows do not interact: position n's loss and gradients depend on its own row only,

    zₙ = xₙ · head                              [V]   (xₙ = Norm_f(h_L)ₙ [C], head [C, V])
    loss = −1/N Σₙ log softmax(zₙ)[yₙ]           a sum of per-row terms
    ∂loss/∂xₙ = (softmax(zₙ) − onehot(yₙ)) · headᵀ / N                          [C]
    ∂loss/∂head = Σₙ xₙᵀ (softmax(zₙ) − onehot(yₙ)) / N                         [C, V]

so the rows can be taken in chunks of c: the loss and ∂loss/∂head are sums over the chunks, and
∂loss/∂x is written chunk by chunk. Only [c, V] logits live at any moment (c = 64: 12.6 MB for
SmolLM2). Each chunk divides by the whole N, not by c: the mean is over all counted rows.

subtle: the result equals the one-pass form up to the order of the floating-point sums (the loss
in float64 and ∂loss/∂head add chunk by chunk; tested within 1e-10 relative in float64). With
LoRA the head is frozen (``head_grad=False``) and its [C, V] gradient is never formed.

Example: ``loss, dx, _ = chunked_head_loss(xf [512, 576], wte.T [576, 49152], y [512], chunk=64)``
runs eight [64, 49152] products instead of one [512, 49152].
"""
from __future__ import annotations

import numpy as np

from minillm.engine.ops import linear
from minillm.functional import log_softmax

CHUNK = 64          # rows per chunk: [64, V] float32 logits are 12.6 MB at V = 49,152


def cross_entropy_in_place(logits: np.ndarray, targets: np.ndarray, total: int
                           ) -> tuple[float, np.ndarray]:
    """``cross_entropy_with_grad(logits, targets, total)`` (grad_model.py) with ``logits``
    [c, V] overwritten: the same float32 operations in the same order (log-softmax as
    ``minillm.functional.log_softmax`` forms it), so the same numbers bit for bit (tested), with
    two [c, V] arrays alive instead of four."""
    z = logits
    z -= z.max(axis=-1, keepdims=True)                                  # [c, V]  z − max
    e = np.exp(z)                                                       # [c, V]
    z -= np.log(e.sum(axis=-1, keepdims=True))                          # [c, V]  log p
    rows = np.arange(len(targets))
    loss = float(-z[rows, targets].astype(np.float64).sum() / total)
    np.exp(z, out=e)                                                    # [c, V]  softmax
    e[rows, targets] -= 1.0                                             # − onehot(target)
    e *= 1.0 / total                                                    # the mean
    return loss, e


def chunked_head_loss(x: np.ndarray, head: np.ndarray, targets: np.ndarray, chunk: int = CHUNK,
                      head_grad: bool = False) -> tuple[float, np.ndarray, np.ndarray | None]:
    """x [N, C], head [C, V], targets [N] -> (mean −log p(target), ∂loss/∂x [N, C],
    ∂loss/∂head [C, V] or None), ``chunk`` rows at a time."""
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk <= 0:
        raise ValueError(f"chunk must be a positive integer (rows per chunk), got {chunk!r}")
    N = x.shape[0]
    loss, dx = 0.0, np.empty_like(x)                                    # [N, C]
    dhead = np.zeros_like(head) if head_grad else None                  # [C, V]
    for start in range(0, N, chunk):
        part = slice(start, start + chunk)
        logits = linear(x[part], head)                                  # [c, C] @ [C, V] -> [c, V]
        part_loss, dlogits = cross_entropy_in_place(logits, targets[part], N)   # [c, V]
        del logits                                                      # (its memory, at once)
        loss += part_loss
        dx[part] = dlogits @ head.T                                     # [c, V] @ [V, C] -> [c, C]
        if head_grad:
            dhead += x[part].T @ dlogits                                # [C, c] @ [c, V] -> [C, V]
    return loss, dx, dhead


def chunked_head_scores(x: np.ndarray, head: np.ndarray, targets: np.ndarray, chunk: int = CHUNK
                        ) -> tuple[float, int]:
    """x [N, C], head [C, V], targets [N] -> (Σ −log p(target) in float64, how many targets the
    model ranks first): the held-out score, ``chunk`` rows of logits at a time (no gradient)."""
    nll, right = 0.0, 0
    for start in range(0, x.shape[0], chunk):
        part = slice(start, start + chunk)
        logits = linear(x[part], head)                                  # [c, C] @ [C, V] -> [c, V]
        want = targets[part]                                            # [c]
        logp = log_softmax(logits)                                      # [c, V]
        nll -= float(logp[np.arange(len(want)), want].astype(np.float64).sum())
        right += int((logits.argmax(-1) == want).sum())
    return nll, right
