"""Sampling: turn next-token logits into a token.

One module per step — ``temperature``, ``top_k``, ``top_p``, ``min_p``, ``penalties``
(repetition, frequency/presence), ``bias`` (logit bias, allowed set), ``greedy``, ``categorical``
(the weighted draw) — and ``pipeline``, which composes them in a documented order and holds the
presets. Every filter takes logits ``[V]`` or ``[B, V]`` and returns logits of the same shape and
dtype with the removed tokens at -inf, so the steps compose.
"""
from .bias import allow_only, logit_bias
from .categorical import categorical
from .greedy import greedy
from .min_p import min_p
from .penalties import frequency_presence_penalty, repetition_penalty, token_counts
from .pipeline import PRESETS, Sampler
from .temperature import apply_temperature
from .top_k import top_k
from .top_p import top_p

__all__ = ["PRESETS", "Sampler", "allow_only", "apply_temperature",
           "categorical", "frequency_presence_penalty", "greedy", "logit_bias", "min_p",
           "repetition_penalty", "token_counts", "top_k", "top_p"]
