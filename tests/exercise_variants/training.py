"""Variants of the exercises of notebooks 10 (the loss, a backward pass) and 11 (thinking)."""
import re

import numpy as np

from minillm.train.grad_norm import layer_norm_backward

from .common import SOLUTIONS as S, Attempt, forgets_return, in_float32, naive_softmax, softmax


def cross_entropy(logits, targets, soft=softmax, axis=-1, reduce=np.mean):
    probs = soft(logits, axis=axis)                                     # [T, V]
    return float(reduce(-np.log(probs[np.arange(len(targets)), targets])))


def logsumexp_ce(logits, targets):
    m = logits.max(axis=-1)                                             # [T]
    lse = m + np.log(np.exp(logits - m[:, None]).sum(axis=-1))          # [T]
    return float((lse - logits[np.arange(len(targets)), targets]).mean())


def ln_backward_sums(dy, x, w, eps, ddof=0, mean_path=True):
    C = x.shape[-1]
    mu = x.mean(-1, keepdims=True)
    r = 1 / np.sqrt(x.var(-1, ddof=ddof, keepdims=True) + eps)
    xhat, g = (x - mu) * r, dy * w
    mean_term = g.sum(-1, keepdims=True) if mean_path else 0
    return r / C * (C * g - mean_term - xhat * (g * xhat).sum(-1, keepdims=True))


def hide_by_find(reply):
    out = ""
    while (start := reply.find("<think>")) >= 0 and (end := reply.find("</think>", start)) >= 0:
        out, reply = out + reply[:start], reply[end + len("</think>"):]
    return out + reply


VARIANTS = {
    "cross_entropy": (
        [Attempt("the solution", S["cross_entropy"]),
         Attempt("logsumexp minus the target's logit", logsumexp_ce),
         Attempt("float32", in_float32(logsumexp_ce)),
         Attempt("a NumPy float", lambda z, t: np.float64(logsumexp_ce(z, t)))],
        [Attempt("a softmax that overflows", lambda z, t: cross_entropy(z, t, soft=naive_softmax),
                 hint="the loss is not finite"),
         Attempt("log of a softmax that underflows to 0", cross_entropy, hint="the loss is not finite"),
         Attempt("−mean of the target's raw logit", lambda z, t: float(-z[np.arange(len(t)), t].mean()),
                 hint="take −log softmax"),
         Attempt("a sum over positions", lambda z, t: logsumexp_ce(z, t) * len(t), hint="a mean over positions"),
         Attempt("softmax over the wrong axis", lambda z, t: cross_entropy(z, t, axis=0)),
         forgets_return(S["cross_entropy"])]),
    "layer_norm_backward": (
        [Attempt("the solution", S["layer_norm_backward"]),
         Attempt("with sums over C", ln_backward_sums),
         Attempt("the library's backward", lambda dy, x, w, eps: layer_norm_backward(dy, x, w, eps)[0])],
        [Attempt("dy · w / σ alone", lambda dy, x, w, eps: dy * w / np.sqrt(x.var(-1, keepdims=True) + eps),
                 hint="that is dy · w / σ alone"),
         Attempt("forgets w", lambda dy, x, w, eps: ln_backward_sums(dy, x, np.ones_like(w), eps)),
         Attempt("var over C − 1", lambda dy, x, w, eps: ln_backward_sums(dy, x, w, eps, ddof=1)),
         Attempt("forgets the mean's path", lambda dy, x, w, eps: ln_backward_sums(dy, x, w, eps, mean_path=False)),
         forgets_return(S["layer_norm_backward"])]),
    "hide_thinking": (
        [Attempt("the solution", S["hide_thinking"]),
         Attempt("str.find in a loop", hide_by_find),
         Attempt("[\\s\\S]*? instead of re.S", lambda t: re.sub(r"<think>[\s\S]*?</think>", "", t))],
        [Attempt("greedy .*", lambda t: re.sub(r"<think>.*</think>", "", t, flags=re.S), hint=".* is greedy"),
         Attempt("without re.S: stops at a newline", lambda t: re.sub(r"<think>.*?</think>", "", t)),
         Attempt("the first block only", lambda t: re.sub(r"<think>.*?</think>", "", t, count=1, flags=re.S)),
         Attempt("removes the tags, keeps the thinking", lambda t: t.replace("<think>", "").replace("</think>", "")),
         Attempt("a list of the visible pieces", lambda t: re.split(r"<think>.*?</think>", t, flags=re.S),
                 says="you returned a list"),
         forgets_return(S["hide_thinking"])]),
    "answer_room": (
        [Attempt("the solution", S["answer_room"]),
         Attempt("np.maximum, a NumPy int", lambda n, p, t: np.maximum(0, n - p - t)),
         Attempt("a float", lambda n, p, t: float(max(0, n - p - t)))],
        [Attempt("can go negative", lambda n, p, t: n - p - t, hint="never fewer than 0"),
         Attempt("forgets the thinking", lambda n, p, t: max(0, n - p)),
         Attempt("forgets the prompt", lambda n, p, t: max(0, n - t)),
         Attempt("the absolute value", lambda n, p, t: abs(n - p - t)),
         forgets_return(S["answer_room"])]),
}
