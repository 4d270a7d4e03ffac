"""llama.cpp as a reference, through the `cyllama==0.2.18` wheel (llama.cpp build b9190 inside).

Dev-only helpers for the fixture and check scripts (the tests never import cyllama):

    with LlamaCpp("model.gguf") as ref:
        ref.tokenize("Hello world")            # ids, no BOS, special-token text not parsed
        ref.logits([15496, 995])               # [T, V] float32, every position
        ref.greedy([15496, 995], 16)           # argmax loop on llama.cpp's logits

Known wheel issues, worked around here:
- a vocab-only GGUF aborts the process: give it a model file (one layer is enough);
- `LlamaContext.get_logits_ith` reads `model.n_vocab`, which the extension type lacks: a Python
  subclass of `LlamaModel` carries it;
- a vocabulary must not outlive its model: `close()` drops the vocabulary first.
"""
from __future__ import annotations

import numpy as np
from cyllama.llama import llama_cpp as cy

cy.disable_logging()


class _Model(cy.LlamaModel):
    """LlamaModel plus the `n_vocab` attribute `get_logits_ith` expects."""


class LlamaCpp:
    def __init__(self, path, n_ctx: int = 256, threads: int = 2):
        self.model = _Model(str(path), cy.LlamaModelParams())
        self.vocab = self.model.get_vocab()
        self.model.n_vocab = self.vocab.n_vocab
        self.n_ctx, self.threads = n_ctx, threads

    def tokenize(self, text: str) -> list[int]:
        if not text:
            return []
        return list(self.vocab.tokenize(text, add_special=False, parse_special=False))

    def context(self, exact: bool = True):
        """A fresh llama.cpp context (its own KV cache) of n_ctx positions, all one batch.

        subtle: llama.cpp's defaults round attention through F16: flash attention (on by default
        on CPU) and an F16 KV cache; ~1e-2 of logits each. ``exact`` turns both off, so F32 files
        compare exactly; ``exact=False`` keeps llama.cpp's defaults."""
        p = cy.LlamaContextParams()
        p.n_ctx = p.n_batch = p.n_ubatch = self.n_ctx
        p.n_threads = p.n_threads_batch = self.threads
        if exact:
            p.flash_attn_type = 0        # LLAMA_FLASH_ATTN_TYPE_DISABLED
            p.type_k = p.type_v = 0      # GGML_TYPE_F32
        return cy.LlamaContext(self.model, p)

    @staticmethod
    def _decode(ctx, ids, start: int) -> np.ndarray:
        """Feed `ids` at positions start, start+1, ... -> their [T, V] logits."""
        batch = cy.LlamaBatch(n_tokens=len(ids), embd=0, n_seq_max=1)
        for k, t in enumerate(ids):
            batch.add(int(t), start + k, [0], True)
        ctx.decode(batch)
        return np.array([ctx.get_logits_ith(i) for i in range(len(ids))], np.float32)

    def logits(self, ids) -> np.ndarray:
        """[T] ids -> [T, V] logits of one fresh sequence."""
        ctx = self.context()
        out = self._decode(ctx, ids, 0)                                    # [T, V]
        del ctx
        return out

    def greedy(self, ids, n: int) -> tuple[list[int], list[float]]:
        """n argmax tokens after `ids` (llama.cpp's KV cache kept across steps), and each step's
        margin between the best and the second-best logit."""
        ctx = self.context()
        last = self._decode(ctx, ids, 0)[-1]                               # [V]
        new, margins = [], []
        for _ in range(n):
            top2 = np.sort(last)[-2:]
            new.append(int(last.argmax()))
            margins.append(float(top2[1] - top2[0]))
            last = self._decode(ctx, [new[-1]], len(ids) + len(new) - 1)[-1]
        del ctx
        return new, margins

    def close(self) -> None:
        self.vocab = None            # subtle: before the model, or the process may crash
        self.model = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
