"""llama.cpp's tokenizer test vocabularies, as stored in tests/fixtures/llamacpp_vocab/.

Each `<name>.json.gz` (scripts/make_llamacpp_vocab_fixtures.py) holds texts, llama.cpp's ids for
them (its own `.gguf.out` test vectors, plus extra texts tokenized by llama.cpp itself) and the
part of the vocabulary those texts can touch: tokens as {id: string}, the merges in rank order.
`metadata(record)` turns that back into `tokenizer.ggml.*` metadata with every id present: an id
the fixture left out gets a placeholder that no text can produce (NUL bytes and its id).
"""
import gzip
import json
from pathlib import Path

from minillm.tokenizer.formats.byte_alphabet import bytes_to_unicode

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llamacpp_vocab"
NAMES = sorted(p.name[:-len(".json.gz")] for p in FIXTURES.glob("*.json.gz")
               if p.name != "pre_names.json.gz")
PLACEHOLDER_TYPE = 5  # llama.cpp's "unused"


def load(name: str) -> dict:
    """`name`.json.gz as a dict ("pre_names" too)."""
    return json.loads(gzip.decompress((FIXTURES / f"{name}.json.gz").read_bytes()))


def metadata(vocab: dict) -> dict:
    """A fixture's reduced vocabulary -> full `tokenizer.ggml.*` metadata (lists over all ids)."""
    n = vocab["tokenizer.ggml.n_tokens"]
    nul = bytes_to_unicode()[0] if vocab["tokenizer.ggml.model"] == "gpt2" else "\x00"
    meta = {k: v for k, v in vocab.items() if not isinstance(v, (dict, list))
            and k != "tokenizer.ggml.n_tokens"}
    tokens = vocab["tokenizer.ggml.tokens"]
    meta["tokenizer.ggml.tokens"] = [tokens.get(str(i), f"{nul * 3}{i}") for i in range(n)]
    fill = {"tokenizer.ggml.token_type": PLACEHOLDER_TYPE, "tokenizer.ggml.scores": -1e9}
    for key, default in fill.items():
        if key in vocab:
            meta[key] = [vocab[key].get(str(i), default) for i in range(n)]
    if "tokenizer.ggml.merges" in vocab:
        meta["tokenizer.ggml.merges"] = vocab["tokenizer.ggml.merges"]
    return meta
