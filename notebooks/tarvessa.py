"""The fine-tuning demonstration's data and score: conversations about Tarvessa, an island
invented for this project (data/tarvessa/, written by scripts/make_finetune_data.py, CC0).

Not part of minillm: notebook 15 and scripts/finetune_demo.py share it.

The score. A held-out question counts as answered when the model's greedy answer contains the
question's key fact (a name or a number), compared after ``normalise``: lower case, thousands
separators dropped ("48,300" -> "48300"), every other non-alphanumeric character a space. The key
must stand as whole words (an "s" may follow: "drells"), so "17" is not found in "1712".

    questions = heldout()                      # [{"fact", "question", "key"}, ...]
    answers = answer_all(model, tokenizer, [q["question"] for q in questions])
    right = [is_right(a, q["key"]) for a, q in zip(answers, questions)]
"""
from __future__ import annotations

import gzip
import json
import re
import tempfile
from pathlib import Path

import numpy as np

from minillm import generate
from minillm.chat.chatml import chatml_ids

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data" / "tarvessa"
# SmolLM2's tokenizer (with its ChatML tokens), shipped with the tests: the mask can be drawn
# without the model (tests/fixtures/tokenizer_smollm2/README.md says how it was made)
SMOLLM2_TOKENIZER = REPO / "tests" / "fixtures" / "tokenizer_smollm2" / "tokenizer.json.gz"
MAX_ANSWER_TOKENS = 24          # every training answer is shorter (about 15 tokens)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def conversations() -> list[dict]:
    """The 200 training conversations, each {"messages": [...]}."""
    return read_jsonl(DATA / "train.jsonl")


def heldout() -> list[dict]:
    """The held-out questions, each {"fact", "question", "key"}: never asked in training."""
    return read_jsonl(DATA / "heldout.jsonl")


def smollm2_tokenizer():
    """SmolLM2-135M-Instruct's tokenizer from the shipped ``tokenizer.json.gz``."""
    from minillm.tokenizer import Tokenizer
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tokenizer.json"
        path.write_bytes(gzip.decompress(SMOLLM2_TOKENIZER.read_bytes()))
        return Tokenizer.load(path)


def normalise(text: str) -> str:
    """Lower case; "1,847" -> "1847"; anything not a letter or digit -> one space."""
    text = re.sub(r"(?<=\d),(?=\d)", "", text.lower())
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text).split())


def is_right(answer: str, key: str) -> bool:
    """True when ``key`` appears in ``answer`` as whole words (a plural "s" allowed)."""
    return re.search(rf"\b{re.escape(normalise(key))}s?\b", normalise(answer)) is not None


def answer(model, tokenizer, question: str, max_new_tokens: int = MAX_ANSWER_TOKENS) -> str:
    """The model's greedy answer to one user turn (ChatML, SmolLM2's default system message)."""
    prompt = chatml_ids(tokenizer, [{"role": "user", "content": question}])
    return "".join(step.text or "" for step in generate(model, prompt, max_new_tokens,
                                                         temperature=0, tokenizer=tokenizer))


def answer_all(model, tokenizer, questions: list[str]) -> list[str]:
    return [answer(model, tokenizer, q).strip() for q in questions]


def score(answers: list[str], questions: list[dict]) -> tuple[int, np.ndarray]:
    """-> (number right, a boolean per question)."""
    right = np.array([is_right(a, q["key"]) for a, q in zip(answers, questions, strict=True)])
    return int(right.sum()), right
