"""What a generation yields: one ``Step`` per chosen token, its text passed through the stop strings.
Where it runs — shared (every generation's Steps, the engine and --reference alike): StepWriter.step.

``generate``'s loop and speculative decoding's rounds choose tokens differently but report them
the same way, through a ``StepWriter`` made once per generation:

    writer = StepWriter(settings)                 # its text state: stream decoder, stop strings
    yield writer.step(token, logits, last)        # the Step: text released so far, log-probs
    writer.stopped                                # a stop string has appeared: end here
    writer.held_text()                            # a stop id ended it: what was held back

Text: tokens are decoded by a ``StreamDecoder`` (an unfinished UTF-8 character waits for its
next byte) and pushed through ``StopText`` (a possible stop-string start waits to be confirmed).
Log-probs are of the model's RAW distribution, log softmax(logits) (see ``generate``).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from minillm.decoding.stop_strings import StopText
from minillm.functional import log_softmax


@dataclasses.dataclass(frozen=True)
class Step:
    """One generated token. ``text``: the text it releases ("" while held back: an unfinished
    UTF-8 character or a possible stop-string start), None without a tokenizer. ``logprob``:
    log p(id) under the raw model distribution (with ``logprobs=True``). ``top``: the ``top_n``
    most likely ids as ((id, logprob), ...), best first. ``top_sampled``: the same ids'
    probabilities in the distribution the draw used — after temperature, top-k, top-p, min-p and
    penalties; 0.0 for an id they removed — and ``sampled``: the chosen id's (both None when the
    loop did not compute them: without ``top_n``, or in speculative rounds). ``id`` is None only
    for a last, text-only step that releases held-back text when a stop id ended the generation.
    """
    id: int | None
    text: str | None = None
    logprob: float | None = None
    top: tuple[tuple[int, float], ...] | None = None
    top_sampled: tuple[float, ...] | None = None
    sampled: float | None = None


class StepWriter:
    """Turns the chosen tokens of ONE generation into ``Step``s (``settings``: a
    ``GenerationSettings``: its tokenizer, stop strings, logprobs and top_n are read)."""

    def __init__(self, settings):
        self.decoder = None
        if settings.tokenizer is not None:
            from minillm.tokenizer.stream import StreamDecoder
            self.decoder = StreamDecoder(settings.tokenizer)
        self.stop_text = StopText(settings.stop_strings)
        self.logprobs, self.top_n = settings.logprobs, settings.top_n

    @property
    def stopped(self) -> bool:
        """A stop string has appeared: the text is complete."""
        return self.stop_text.stopped

    def held_text(self) -> str:
        """A stop id ended the text: what was held back (a possible stop-string start, an
        unfinished UTF-8 character) is released."""
        return self.stop_text.flush() + (self.decoder.flush() if self.decoder is not None else "")

    def step(self, token: int, logits: np.ndarray, last: bool, probs=None) -> Step:
        """The ``Step`` for ``token``, chosen from ``logits`` [V]; ``last``: no token follows;
        ``probs`` [V]: the distribution the draw used (the sampler's), when the loop has it."""
        text = None
        if self.decoder is not None:
            piece = self.decoder.feed(token) + (self.decoder.flush() if last else "")
            text = self.stop_text.push(piece)
            if last and not self.stop_text.stopped:
                text += self.stop_text.flush()
        lp = top = None
        if self.logprobs or self.top_n:
            logp = log_softmax(logits)                             # [V] raw model distribution
            if self.logprobs:
                lp = float(logp[token])
            if self.top_n:
                best = np.argsort(-logp, kind="stable")[:self.top_n]   # [n] ties: lower id first
                top = tuple((int(i), float(logp[i])) for i in best)
        if top is None or probs is None:
            return Step(token, text, lp, top)
        return Step(token, text, lp, top, tuple(float(probs[i]) for i, _ in top), float(probs[token]))
