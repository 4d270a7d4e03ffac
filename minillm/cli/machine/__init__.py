"""Machine-readable generation: ``generate --json`` / ``--json-final`` (json_steps.py) and many
prompts from a JSON Lines file, ``generate --prompts FILE.jsonl`` (prompts_file.py)."""
