"""Option scoring (the explainer articles' "decision model"): the probability of each answer, not a generated one.

To answer a multiple-choice question by generation, the model writes text ("The answer is B")
token by token — one forward pass per token — and may write something that is not an option at
all ("E"): "only answer A/B/C/D" in the prompt is a soft constraint. Scoring instead asks the
model for the probability of each option directly:

    log p(option | prompt) = Σ_k log p(t_k | prompt, t_1 … t_{k-1})     (t = the option's tokens)
    P(option_i) = exp(s_i) / Σ_j exp(s_j)                                (normalised over the options)

so the answer is always one of the options. Cost: the prompt runs once (batch 1); its keys and
values are copied into one cache row per option; then ONE batched forward over all options'
tokens but their last (right-padded: padding comes after the real tokens, so no real token ever
attends to it) gives every remaining log-prob. ``forward_passes`` counts model calls: 1 when every
option is a single token, else 2. Generating an answer instead costs one call per token: the
articles' 30-token answer takes 30 forward passes, scoring "A" … "D" takes one.

Tokenisation (a choice): option tokens are ``tokenizer.encode(option)`` appended to
``tokenizer.encode(prompt)``, so write " B" (with its space) if the prompt ends before a word. The
alternative (lm-evaluation-harness) encodes prompt + option together and splits at the prompt's
token count, which merges across the boundary but can change the prompt's last token.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from minillm.functional import log_softmax, softmax
from minillm.decoding.generate_args import check_prompt
from minillm.kv_cache import shared_prefix_cache


@dataclasses.dataclass(frozen=True)
class OptionScores:
    """``probs[i]`` of ``options[i]`` (sum to 1), ``logprobs[i]`` = Σ log p of its tokens,
    ``forward_passes`` used, and ``generation_passes``: the model calls generating the longest
    option token by token would take (one per token)."""
    options: tuple
    probs: np.ndarray
    logprobs: np.ndarray
    forward_passes: int
    generation_passes: int

    @property
    def best(self):
        return self.options[int(np.argmax(self.probs))]


def score_options(model, tokenizer, prompt, options) -> OptionScores:
    """P(option | prompt) for each option, normalised over the options.

    ``prompt``: a str (with a tokenizer) or token ids; ``options``: strs (with a tokenizer) or
    token-id lists (tokenizer=None). Example: ``score_options(model, tok, "Q: 2+2=? A:",
    [" 3", " 4"]).best`` -> " 4" for a model that knows.
    """
    if isinstance(options, str) or not len(options):
        raise ValueError("options must be a non-empty list of option strings (or token-id lists)")
    if len(set(map(_key, options))) != len(options):
        raise ValueError(f"options must be distinct, got {list(options)!r}")
    prompt_ids = check_prompt(model, _encode(tokenizer, prompt, "prompt"))
    rows = [check_prompt(model, _encode(tokenizer, o, "option")) for o in options]
    lengths = np.array([len(r) for r in rows])                     # [B] tokens per option
    B, P, longest = len(rows), len(prompt_ids), int(lengths.max())
    if P + longest - 1 > model.config.n_ctx:
        raise ValueError(f"prompt ({P} tokens) + the longest option ({longest}) exceed n_ctx="
                         f"{model.config.n_ctx}")
    cache, first = shared_prefix_cache(model, prompt_ids, B, capacity=P + longest - 1)
    passes = 1
    logp = np.zeros((B, longest), dtype=np.float32)                # [B, Lmax] log p of each option token
    logp[:, 0] = log_softmax(first)[[r[0] for r in rows]]          # [B] first tokens: from the prompt
    if longest > 1:
        feed = np.zeros((B, longest - 1), dtype=np.int64)          # [B, Lmax-1] right-padded with id 0
        targets = np.zeros((B, longest - 1), dtype=np.int64)       # [B, Lmax-1] the next tokens
        for b, r in enumerate(rows):
            feed[b, :len(r) - 1] = r[:-1]                          # every token but the last
            targets[b, :len(r) - 1] = r[1:]                        # the token each one predicts
        logits = model(feed, cache=cache)                          # [B, Lmax-1, V]
        passes += 1
        picked = np.take_along_axis(log_softmax(logits), targets[..., None], axis=-1)[..., 0]  # [B, Lmax-1]
        logp[:, 1:] = picked                                       # [B, Lmax-1]
    real = np.arange(longest)[None, :] < lengths[:, None]          # [B, Lmax] real token positions
    sums = np.where(real, logp, 0.0).astype(np.float64).sum(axis=1)   # [B] subtle: padding excluded
    return OptionScores(tuple(options), softmax(sums), sums, passes, longest)


def _encode(tokenizer, x, what):
    if isinstance(x, str):
        if tokenizer is None:
            raise TypeError(f"a str {what} needs a tokenizer (or give token ids)")
        x = tokenizer.encode(x)
        if not x:
            raise ValueError(f"the {what} encodes to no tokens; options and prompt must be non-empty")
    return x


def _key(option):
    return option if isinstance(option, str) else tuple(int(i) for i in option)
