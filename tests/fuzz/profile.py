"""The fuzz profile: ``small`` in CI (the whole of tests/fuzz in well under 60 s) or ``thorough``
(``MINILLM_FUZZ=thorough``: 2,000 mutated files per format, 40 kills per data-safety scenario and
per command killed at random moments)."""
import os

THOROUGH = os.environ.get("MINILLM_FUZZ") == "thorough"
CASES_PER_FORMAT = 2000 if THOROUGH else 60
KILLS = 40 if THOROUGH else 3
KILL_POINTS = 40 if THOROUGH else 8      # per command: export, save_pretrained, train (± --resume)
RACE_SECONDS = 30.0 if THOROUGH else 3.0  # one saver and one reader of a model folder, side by side
TOKJSON_CASES = 500 if THOROUGH else 30   # generated tokenizer.json files (tokjson.py)
