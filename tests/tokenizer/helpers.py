"""Shared loaders for the tokenizer tests (each vocabulary is read once per test process)."""
import functools
import gzip
import json

from minillm.tokenizer import Tokenizer
from tests.conftest import FIXTURES


@functools.lru_cache(maxsize=None)
def named(name: str) -> Tokenizer:
    return Tokenizer.load(name)


@functools.lru_cache(maxsize=None)
def smollm2_gguf_metadata() -> dict:
    with gzip.open(FIXTURES / "tokenizer_smollm2" / "gguf_metadata.json.gz", "rt",
                   encoding="utf-8") as f:
        return json.load(f)


@functools.lru_cache(maxsize=None)
def smollm2_from_gguf() -> Tokenizer:
    return Tokenizer.from_gguf_metadata(smollm2_gguf_metadata())


@functools.lru_cache(maxsize=None)
def smollm2_from_json() -> Tokenizer:
    return Tokenizer.load(FIXTURES / "tokenizer_smollm2" / "tokenizer.json.gz")


def fixture_json(relative: str):
    return json.loads((FIXTURES / relative).read_text(encoding="utf-8"))
