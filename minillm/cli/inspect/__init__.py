"""Commands that look at a model or a text without generating: ``perplexity``, ``score``,
``info``, ``detokenize`` (one module each; registered in minillm/cli/__init__.py's COMMANDS)."""
