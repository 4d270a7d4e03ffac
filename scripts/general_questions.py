"""Does a fine-tune keep the rest? Five general questions to SmolLM2-135M-Instruct, greedily,
without and with the shipped Tarvessa adapter (weights/tarvessa-lora), each answer printed with
whether it holds the expected word (notebooks/tarvessa.py's rule: whole words, any case).

    OPENBLAS_NUM_THREADS=1 python scripts/general_questions.py

The base model: $MINILLM_SHARED_DATA/models/SmolLM2-135M-Instruct.Q4_1.gguf when that variable
names a folder holding it, else the downloaded one (``python -m minillm download smollm2``).

Prints one block per question and the totals, "k/5 before, k/5 after" (README.md "## Fine-tune").
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "notebooks"))
import tarvessa  # noqa: E402
from minillm import GPT, load_adapter, merged_params  # noqa: E402
from minillm.engine.gpt import to_engine  # noqa: E402
from minillm.loading import load_model  # noqa: E402

GGUF = Path(os.environ.get("MINILLM_SHARED_DATA", REPO.parent / "shared" / "data")) \
    / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"       # (scripts/finetune_demo.py's base)
ADAPTER = REPO / "weights" / "tarvessa-lora"

QUESTIONS = [           # (question, the word a right answer contains)
    ("What is the capital of France?", "Paris"),
    ("How many legs does a spider have?", "eight"),
    ("What color is the sky on a clear day?", "blue"),
    ("What is the largest planet in our solar system?", "Jupiter"),
    ("What do bees make?", "honey"),
]


def main() -> None:
    base, tok = load_model(GGUF if GGUF.is_file() else "smollm2", fast=False)
    tuned = GPT(base.config, merged_params(base.params, load_adapter(ADAPTER, base.config)))
    models = {"before": to_engine(base), "after": to_engine(tuned)}
    answers = {when: tarvessa.answer_all(model, tok, [q for q, _ in QUESTIONS])
               for when, model in models.items()}
    right = {when: 0 for when in models}
    for i, (question, key) in enumerate(QUESTIONS):
        print(question, f"(expected: {key})")
        for when in models:
            ok = tarvessa.is_right(answers[when][i], key)
            right[when] += ok
            print(f"  {when:6} {'right' if ok else 'wrong'}: {answers[when][i]!r}")
    print(f"{right['before']}/{len(QUESTIONS)} before, {right['after']}/{len(QUESTIONS)} after")


if __name__ == "__main__":
    main()
