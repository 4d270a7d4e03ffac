"""The decoding loop and its variants, in reading order.

``generate.py`` (``generate_simple`` in a dozen lines, then ``generate`` with the KV cache; its
arguments checked once into a frozen ``GenerationSettings`` in ``generate_args.py``; each chosen
token becomes a ``Step`` in ``steps.py``) · ``beam.py`` (beam search) · ``batch.py`` (prompts of
different lengths in one batch) · ``speculative.py`` with ``speculative_drafts.py`` (k guesses
checked in one forward) · ``serving.py`` (continuous batching) · ``stop_strings.py`` ·
``options.py`` (scoring A/B/C/D in one forward) · ``budget.py`` (what fits in the window) ·
``chunks.py`` (a longer document in overlapping chunks that fit).
"""
