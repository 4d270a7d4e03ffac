"""The sampler: every step in one documented order, plus the presets of the explainer articles' table.
Where it runs — shared (every way of generating, the engine and --reference alike): Sampler._survivors.

Order (HF's: logits processors, then warpers temperature -> top-k -> top-p -> min-p):

    allowed set -> logit bias -> repetition -> frequency/presence -> temperature
        -> top-k -> top-p -> min-p -> softmax -> draw

Each step works on logits and masks with -inf, so each later step sees the distribution
renormalised after the earlier ones (top-p's mass is that of the tempered, top-k-filtered
distribution). The order changes the result: temperature before top-p makes the nucleus depend on
T. llama.cpp's default chain is logit bias -> penalties -> DRY -> top-k -> typical -> top-p ->
min-p -> XTC -> temperature -> draw: temperature LAST, so its top-p and min-p see the T = 1
distribution. vLLM applies the allowed set, logit bias and penalties, then temperature, then min-p,
then top-k and top-p together. T = 0 is greedy: the argmax (lowest id on ties), without consuming
the generator.

Speed: with a top-k set, only the k survivors can ever be drawn, so the sampler picks them first
(``top_k``, O(V) by partition; ``survivors``: its k unmasked ids) and runs temperature, top-p,
min-p, softmax and the draw on k entries instead of V — the same result (temperature keeps the
order, so top-k before or after it selects the same ids), tested equal to the step-by-step chain. At V = 49,152 this is what keeps
sampling a small fraction of a decode step (benchmarks/bench_decode.py).

Example: ``Sampler.from_preset("code").sample(logits, np.random.default_rng(0))``.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from ..functional import softmax
from .bias import allow_only, logit_bias
from .categorical import categorical
from .checks import check_logits, check_probability
from .greedy import greedy
from .min_p import min_p
from .penalties import (check_finite, check_repetition_penalty, frequency_presence_penalty,
                        repetition_penalty)
from .temperature import apply_temperature, check_temperature
from .top_k import check_top_k, top_k
from .top_p import top_p


@dataclasses.dataclass(frozen=True)
class Sampler:
    """Sampling settings, validated at construction; defaults leave the distribution unchanged.

    ``repetition_includes_prompt`` / ``frequency_includes_prompt``: whether the first
    ``prompt_len`` tokens of the history count for that penalty (see ``penalties``).
    """
    temperature: float = 1.0          # >= 0; 0 = greedy
    top_k: int = 0                    # >= 0; 0 = off
    top_p: float = 1.0                # (0, 1]; 1 = off
    min_p: float = 0.0                # [0, 1]; 0 = off
    repetition_penalty: float = 1.0   # > 0; 1 = off
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    logit_bias: Mapping[int, float] | None = None
    allowed_ids: tuple[int, ...] | None = None
    repetition_includes_prompt: bool = True
    frequency_includes_prompt: bool = False

    def __post_init__(self) -> None:
        check_temperature(self.temperature)
        check_top_k(self.top_k)
        check_probability(self.top_p, "top_p", low_open=True)
        check_probability(self.min_p, "min_p", low_open=False)
        check_repetition_penalty(self.repetition_penalty)
        check_finite(self.frequency_penalty, "frequency_penalty")
        check_finite(self.presence_penalty, "presence_penalty")
        if self.logit_bias is not None:   # ids are checked against V when logits arrive
            object.__setattr__(self, "logit_bias", dict(self.logit_bias))
            if any(np.isnan(b) or b == np.inf for b in self.logit_bias.values()):
                raise ValueError("logit_bias values must be finite or -inf (a ban)")
        if self.allowed_ids is not None:
            object.__setattr__(self, "allowed_ids", tuple(self.allowed_ids))
            if not self.allowed_ids:
                raise ValueError("allowed_ids is empty: give None (no restriction) or some ids")

    @classmethod
    def from_preset(cls, name: str, **overrides) -> Sampler:
        """A preset from ``PRESETS`` with some fields replaced: ``from_preset("chat", top_k=20)``."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
        return dataclasses.replace(PRESETS[name], **overrides)

    def process(self, logits: np.ndarray, history=None, prompt_len=0) -> np.ndarray:
        """The logits after every step (up to a per-row constant: temperature subtracts the
        row's max), masked entries at -inf: ``[V]`` or ``[B, V]``, dtype kept.

        ``history``: the tokens so far (prompt + generated), 1-D for ``[V]`` or one sequence per
        row for ``[B, V]``; ``prompt_len``: how many leading tokens are prompt (int, or per row).
        """
        ids, z = self._survivors(logits, history, prompt_len)      # [..., M]
        if ids is None:
            return z                                               # [..., V]
        out = np.full(logits.shape, -np.inf, dtype=z.dtype)        # [..., V]
        np.put_along_axis(out, ids, z, axis=-1)                    # [..., V]  survivors back
        return out

    def probs(self, logits: np.ndarray, history=None, prompt_len=0) -> np.ndarray:
        """The final distribution the draw uses: ``[V]`` or ``[B, V]``, rows sum to 1."""
        return softmax(self.process(logits, history, prompt_len))  # [..., V]

    def sample(self, logits: np.ndarray, rng: np.random.Generator, history=None,
               prompt_len=0) -> int | np.ndarray:
        """Draw the next token(s): an int for ``[V]`` logits, int64 ``[B]`` for ``[B, V]``."""
        ids, z = self._survivors(logits, history, prompt_len)      # [..., M]
        if self.temperature == 0:
            pick = greedy(z)                                       # no randomness used
        else:
            pick = categorical(softmax(z), rng)                    # [..., M] -> [B] or int
        if ids is None:
            return pick
        chosen = np.take_along_axis(ids, np.asarray(pick)[..., None], axis=-1)[..., 0]   # [B] or []
        return int(chosen) if z.ndim == 1 else chosen

    def _survivors(self, logits, history, prompt_len) -> tuple[np.ndarray | None, np.ndarray]:
        """Every step in order. Returns (ids [..., k] ascending, their logits [..., k]) when a
        top-k is set — nothing else can survive — or (None, all V logits)."""
        z = check_logits(logits)                                   # [..., V]
        if self.allowed_ids is not None:
            z = allow_only(z, self.allowed_ids)                    # [..., V]
        if self.logit_bias:
            z = logit_bias(z, self.logit_bias)                     # [..., V]
        if history is not None:
            z = self._penalise(z, history, prompt_len)             # [..., V]
        check_logits(z, "logits after the allowed set, bias and penalties")
        ids = None
        if 0 < self.top_k < z.shape[-1]:
            z = top_k(z, self.top_k)                               # [..., V]  -inf but k of them
            ids = survivors(z, self.top_k)                         # [..., k]  their ids
            z = np.take_along_axis(z, ids, axis=-1)                # [..., k]  in id order
        z = apply_temperature(z, self.temperature)                 # [..., M]
        z = top_p(z, self.top_p)                                   # [..., M]
        return ids, min_p(z, self.min_p)                           # [..., M]

    def _penalise(self, z: np.ndarray, history, prompt_len) -> np.ndarray:
        """The two penalties, each on the full history or on the part after the prompt."""
        rows = [np.asarray(history)] if z.ndim == 1 else [np.asarray(r) for r in history]
        starts = np.broadcast_to(np.asarray(prompt_len), (len(rows),))   # [B]
        if not np.issubdtype(starts.dtype, np.integer) or (starts < 0).any() \
                or any(s > len(r) for r, s in zip(rows, starts)):
            raise ValueError(f"prompt_len must be an int (or one per row) in [0, len(history)], "
                             f"got {prompt_len}")
        generated = [r[int(s):] for r, s in zip(rows, starts)]
        one = z.ndim == 1                                          # [V]: pass one history, not B
        if self.repetition_penalty != 1.0:
            seen = rows if self.repetition_includes_prompt else generated
            z = repetition_penalty(z, seen[0] if one else seen, self.repetition_penalty)
        if self.frequency_penalty != 0.0 or self.presence_penalty != 0.0:
            seen = rows if self.frequency_includes_prompt else generated
            z = frequency_presence_penalty(z, seen[0] if one else seen, self.frequency_penalty,
                                           self.presence_penalty)             # [..., V]
        return z


def survivors(z: np.ndarray, k: int) -> np.ndarray:
    """The ids of the k entries ``top_k`` left finite, ascending: ``[..., V] -> [..., k]`` (fewer
    finite: the lowest masked ids too; more, as an edited ``top_k`` gives: the k lowest finite)."""
    kept = z != -np.inf                                            # [..., V]
    if (kept.sum(axis=-1) == k).all():                             # the usual case: O(V)
        return np.nonzero(kept)[-1].reshape(z.shape[:-1] + (k,))   # [..., k] ascending per row
    return np.sort(np.argsort(~kept, axis=-1, kind="stable")[..., :k], axis=-1)  # kept first, by id


# The explainer articles' table (任务 / Temperature / Top-K / Top-P); top-k 0 means off.
PRESETS: dict[str, Sampler] = {
    "code": Sampler(temperature=0.2, top_k=50, top_p=0.9),        # 代码生成
    "qa": Sampler(temperature=0.7, top_k=40, top_p=0.85),         # 事实问答
    "chat": Sampler(temperature=0.8, top_k=50, top_p=0.9),        # 日常对话
    "creative": Sampler(temperature=1.0, top_k=0, top_p=0.95),    # 创意写作
}
