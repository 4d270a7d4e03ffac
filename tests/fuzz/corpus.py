"""A small valid file of every format minillm reads, the loader to try on it, and how to mutate it.

Each format is ``Format(name, seed_files(tmp) -> {file name: bytes}, load(folder), mutators)``.
``load`` returns the loaded object (a Tokenizer, or (model, tokenizer)); a mutation that still
loads must give a tokenizer whose decode(encode(text)) is the text (no silent wrong result).
"""
import base64
import functools
import gzip
import json
from dataclasses import dataclass

import numpy as np

from minillm.config import ModelConfig
from minillm.io.checkpoints import load_hf_checkpoint
from minillm.loading import load_gguf_model
from minillm import GPT
from minillm.tokenizer import Tokenizer
from minillm.tokenizer.formats.byte_alphabet import bytes_to_unicode
from tests.fuzz.mutate import dumps, mutate_bytes, mutate_json
from tests.io import gguf_writer as w

TEXT = "The sea is blue, 海水 12345!\n  the end. " * 3
TABLE = bytes_to_unicode()


@functools.lru_cache(maxsize=None)
def tiny_tokenizer() -> Tokenizer:
    return Tokenizer.train(TEXT * 20, 300)


def V() -> int:
    return tiny_tokenizer().vocab_size


def _model_files() -> dict:
    import tempfile
    from pathlib import Path
    model = GPT(ModelConfig(vocab_size=300, n_ctx=16, d_model=16, n_heads=2, n_layers=1))
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(d)
        return {p.name: p.read_bytes() for p in Path(d).iterdir()}


def _tiktoken_text() -> bytes:
    tok = tiny_tokenizer()
    lines = [f"{base64.b64encode(tok.token_bytes(i)).decode()} {i}" for i in range(256)]
    return ("\n".join(lines) + "\n").encode()


def _hf_json() -> dict:
    tok = tiny_tokenizer()
    vocab = {"".join(TABLE[b] for b in tok.token_bytes(i)): i for i in range(tok.vocab_size)}
    merges = [" ".join("".join(TABLE[b] for b in part) for part in pair)
              for pair, _ in sorted(tok.merges.items(), key=lambda kv: kv[1])]
    return {"version": "1.0", "added_tokens": [{"id": V(), "content": "<|end|>", "special": True,
                                                "lstrip": False, "rstrip": False,
                                                "normalized": False, "single_word": False}],
            "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated",
                 "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}]},
            "decoder": {"type": "ByteLevel"},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "fuse_unk": False,
                      "byte_fallback": False, "vocab": vocab, "merges": merges}}


def _gguf_meta() -> dict:
    hf = _hf_json()
    tokens = [None] * (V() + 1)
    for s, i in hf["model"]["vocab"].items():
        tokens[i] = s
    tokens[V()] = "<|end|>"
    return {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt2", "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.token_type": [1] * V() + [3], "tokenizer.ggml.merges": hf["model"]["merges"],
            "tokenizer.ggml.eos_token_id": V()}


def _gguf_file() -> bytes:
    from tests.io.test_gguf_model import write_gguf
    import tempfile
    from pathlib import Path
    model = GPT(ModelConfig(vocab_size=V() + 1, n_ctx=16, d_model=16, n_heads=2, n_layers=1,
                            arch="llama"))
    meta = _gguf_meta()
    extra = {"tokenizer.ggml.model": (w.STRING, "gpt2"), "tokenizer.ggml.pre": (w.STRING, "gpt2"),
             "tokenizer.ggml.tokens": (w.ARRAY, (w.STRING, meta["tokenizer.ggml.tokens"])),
             "tokenizer.ggml.token_type": (w.ARRAY, (w.INT32, meta["tokenizer.ggml.token_type"])),
             "tokenizer.ggml.merges": (w.ARRAY, (w.STRING, meta["tokenizer.ggml.merges"])),
             "tokenizer.ggml.eos_token_id": (w.UINT32, V())}
    with tempfile.TemporaryDirectory() as d:
        return write_gguf(Path(d) / "m.gguf", model, extra_meta=extra).read_bytes()


@dataclass(frozen=True)
class Format:
    name: str
    seed: object            # () -> {file name: bytes} (or a dict, for gguf_vocab)
    load: object            # (folder or metadata) -> loaded object
    mutate: object          # (seed value, rng) -> mutated value


def _bytes_of(file):
    def mutate(files, rng):
        return {**files, file: mutate_bytes(files[file], rng)}
    return mutate


def _json_or_bytes(file):
    def mutate(files, rng):
        if rng.random() < 0.25:
            return {**files, file: mutate_bytes(files[file], rng)}
        return {**files, file: dumps(mutate_json(json.loads(files[file]), rng))}
    return mutate


def _gz_mutate(files, rng):
    name = "gpt2-fuzz.tiktoken.gz"
    if rng.random() < 0.5:
        return {name: mutate_bytes(files[name], rng)}
    return {name: gzip.compress(mutate_bytes(gzip.decompress(files[name]), rng), mtime=0)}


def _gguf_vocab_mutate(meta, rng):
    mutated = mutate_json(meta, rng)
    return mutated if isinstance(mutated, dict) else {"tokenizer.ggml.model": mutated}


def _tokenizer_file(name):
    return lambda folder: Tokenizer.load(folder / name)


def _minillm_json() -> bytes:
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        tiny_tokenizer().save(Path(d) / "tokenizer.json")
        return (Path(d) / "tokenizer.json").read_bytes()


FORMATS = {f.name: f for f in [
    Format("safetensors", _model_files, load_hf_checkpoint, _bytes_of("model.safetensors")),
    Format("config.json", _model_files, load_hf_checkpoint, _json_or_bytes("config.json")),
    Format("gguf", lambda: {"m.gguf": _gguf_file()}, lambda d: load_gguf_model(d / "m.gguf"),
           _bytes_of("m.gguf")),
    Format("tiktoken", lambda: {"gpt2-fuzz.tiktoken": _tiktoken_text()},
           _tokenizer_file("gpt2-fuzz.tiktoken"), _bytes_of("gpt2-fuzz.tiktoken")),
    Format("tiktoken.gz", lambda: {"gpt2-fuzz.tiktoken.gz": gzip.compress(_tiktoken_text(), mtime=0)},
           _tokenizer_file("gpt2-fuzz.tiktoken.gz"), _gz_mutate),
    Format("encoder.json", lambda: {
        "encoder.json": json.dumps(_hf_json()["model"]["vocab"]).encode(),
        "vocab.bpe": ("#version: 0.2\n" + "\n".join(_hf_json()["model"]["merges"]) + "\n").encode()},
        lambda d: Tokenizer.load(d), _json_or_bytes("encoder.json")),
    Format("vocab.bpe", lambda: FORMATS["encoder.json"].seed(), lambda d: Tokenizer.load(d),
           _bytes_of("vocab.bpe")),
    Format("hf tokenizer.json", lambda: {"tokenizer.json": json.dumps(_hf_json()).encode()},
           _tokenizer_file("tokenizer.json"), _json_or_bytes("tokenizer.json")),
    Format("minillm json", lambda: {"tokenizer.json": _minillm_json()},
           _tokenizer_file("tokenizer.json"), _json_or_bytes("tokenizer.json")),
    Format("gguf vocab", _gguf_meta, Tokenizer.from_gguf_metadata, _gguf_vocab_mutate),
]}


def tokenizer_of(loaded):
    if isinstance(loaded, Tokenizer):
        return loaded
    if isinstance(loaded, tuple) and len(loaded) == 2 and isinstance(loaded[1], Tokenizer):
        return loaded[1]
    return None


def round_trips(tok: Tokenizer) -> bool:
    """No silent wrong result: the text comes back (when every byte has a token)."""
    if tok.unk_id is not None or any(bytes([b]) not in tok.encoder for b in range(256)):
        return True
    ids = tok.encode_ordinary(TEXT)
    return tok.decode(ids) == TEXT and all(isinstance(i, int) for i in ids) and \
        np.max(ids) < tok.vocab_size
