"""Variants of the exercises of notebook 15 (the loss mask, merging LoRA)."""
import numpy as np

from minillm.train.grad_model import cross_entropy_with_grad

from .common import SOLUTIONS as S, Attempt, as_list, forgets_return, in_float32


def selected_rows(logits, targets, mask):
    keep = np.asarray(mask, bool)
    return cross_entropy_with_grad(logits[keep].astype(np.float32), targets[keep])[0]


def nll(logits, targets):
    z = logits - logits.max(axis=-1, keepdims=True)
    return -(z - np.log(np.exp(z).sum(axis=-1, keepdims=True)))[np.arange(len(targets)), targets]


VARIANTS = {
    "masked_loss": (
        [Attempt("the solution", S["masked_loss"]),
         Attempt("the counted rows alone, the library's loss", selected_rows),
         Attempt("a bool mask and np.mean", lambda z, t, m: float(nll(z, t)[np.asarray(m, bool)].mean())),
         Attempt("float32", in_float32(S["masked_loss"]))],
        [Attempt("divides by T", lambda z, t, m: float((nll(z, t) * m).sum() / len(t)),
                 hint="divide by the number of counted positions"),
         Attempt("ignores the mask", lambda z, t, m: float(nll(z, t).mean()), hint="the mask is ignored"),
         Attempt("counts the other positions", lambda z, t, m: float((nll(z, t) * (1 - m)).sum() / max(1, (1 - m).sum()))),
         Attempt("a sum, not a mean", lambda z, t, m: float((nll(z, t) * m).sum())),
         forgets_return(S["masked_loss"])]),
    "merge_lora": (
        [Attempt("the solution", S["merge_lora"]),
         Attempt("a list", as_list(S["merge_lora"])),
         Attempt("einsum", lambda W, A, B, a: W + a / A.shape[1] * np.einsum("ir,ro->io", A, B)),
         Attempt("float32", in_float32(S["merge_lora"]))],
        [Attempt("scales by alpha", lambda W, A, B, a: W + a * (A @ B), hint="scale by alpha / r"),
         Attempt("returns the update only", lambda W, A, B, a: a / A.shape[1] * (A @ B), hint="A B alone is only the update"),
         Attempt("forgets the scale", lambda W, A, B, a: W + A @ B),
         Attempt("divides by the wrong dimension", lambda W, A, B, a: W + a / A.shape[0] * (A @ B)),
         forgets_return(S["merge_lora"])]),
}
