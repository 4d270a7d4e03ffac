"""``python -m minillm serve``: the OpenAI-compatible HTTP server (minillm/server/), its command line."""
