"""llama.cpp's tokenizer test vocabularies -> tests/fixtures/llamacpp_vocab/ (compact, reduced).

Dev-only: needs `cyllama==0.2.18` (a wheel with llama.cpp build b9190 inside) in the development
venv, never at run or test time. The vocabularies and their test vectors are llama.cpp's own
`models/ggml-vocab-*.gguf` (+ `.gguf.inp` / `.gguf.out`), MIT; they are 0.7-16 MB each (75 MB in
all), so they are not vendored: pass the folder that holds them (llama.cpp's `models/`, or the copy
inside the PyPI sdist `llama-cpp-python==0.3.36`: `vendor/llama.cpp/models/`):

    /work/venvs/vocab/bin/python scripts/make_llamacpp_vocab_fixtures.py /path/to/models

For each vocabulary it

1. reads the texts of `.inp` and llama.cpp's ids of `.out` (the test vectors of llama.cpp's
   `test-tokenizer-0`: no BOS, special tokens not parsed), adds EXTRA texts (multilingual, runs of
   spaces, "schön", emoji, code), and tokenizes all of them with llama.cpp itself (cyllama): the
   `.out` ids must come back unchanged, the EXTRA ids are recorded;
2. keeps of the vocabulary only what those texts can touch: every token that is not an ordinary
   one (control, user-defined, unknown, byte) and every token whose string occurs in the texts as
   the tokenizer sees them (byte-level: in GPT-2's byte alphabet; SentencePiece: spaces as "▁").
   Every merge result and every final token of a text is such a substring, and a merge whose
   result is dropped is one no text can apply, so the kept tokens (same ids, same scores) and the
   kept merges (same order) tokenize these texts exactly as the whole vocabulary does;
3. writes `<name>.json.gz`: the texts, llama.cpp's ids, and the reduced `tokenizer.*` metadata
   (`tokens`/`token_type`/`scores` as {id: value}, `merges` in rank order, the scalar keys).

It also writes `pre_names.json.gz`: for every BPE pre-tokeniser name llama.cpp knows
(pattern_names.LLAMA_CPP_PRE), llama.cpp's ids for all the texts with GPT-2's vocabulary (reduced
the same way) under that name: the regexes tested through llama.cpp itself.

cyllama 0.2.18 aborts on a vocab-only GGUF, so each vocabulary is copied into a one-layer
zero-weight Llama model file (the tokenizer does not look at the weights).
"""
from __future__ import annotations

import gzip
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from minillm.io.gguf.read import read_gguf  # noqa: E402
from minillm.io.gguf.write import (ARRAY, BOOL, F32, FLOAT32, INT32, STRING, UINT32,  # noqa: E402
                                   write_gguf)
from minillm.tokenizer.byte_alphabet import bytes_to_unicode  # noqa: E402
from minillm.tokenizer.pattern_names import LLAMA_CPP_PRE  # noqa: E402

OUT = ROOT / "tests/fixtures/llamacpp_vocab"
EXTRA = [
    "a  b", "schön", "Schöne Grüße aus Köln", "  leading and trailing  ", "tab\tand\nnewline\r\n",
    "a    b     c      d", "Hello World", " Hello World", "héllo naïve café", "façade über straße",
    "海水会吸收较多红光，蓝光更容易被散射回来。", "東京は日本の首都です。", "안녕하세요 세계",
    "Привет, мир!", "Γειά σου Κόσμε", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया",
    "😀 👩‍💻 🇫🇷 👍🏽", "\u200d\u200c zero width", "def f(x):\n    return x ** 2  # square\n",
    "for (int i = 0; i < n; ++i) { s += a[i]; }", "{\"key\": [1, 2, 3], \"ok\": true}",
    "123 4567 89012 3.14159 1e-9", "don't won't I'm we're they've she'll he'd",
    "<s> </s> <unk> <|endoftext|> [INST] hi [/INST]", "\x00\x01 control \x7f chars",
    "ÀÉÎÕÜ àéîõü ßẞ ǅ", "▁ already has the meta space ▁▁", "x" * 40 + " " + "ab" * 25,
]
SPM_MODELS = {"llama", "gemma4"}          # tokens written as text with "▁" for spaces
REFUSED_MODELS = {"bert", "t5"}           # WordPiece, Unigram: minillm refuses them


def read_tests(models: Path, name: str):
    inp, out = models / f"ggml-vocab-{name}.gguf.inp", models / f"ggml-vocab-{name}.gguf.out"
    if not inp.exists():
        return [], []
    texts = inp.read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    lines = out.read_text(encoding="utf-8").split("\n")
    if texts and texts[-1].endswith("\n__ggml_vocab_test__"):      # (a trailing marker)
        texts[-1] = texts[-1][:-len("\n__ggml_vocab_test__")]
    return texts, [[int(x) for x in ln.split()] for ln in lines[:len(texts)]]


def typed(key: str, value):
    """A metadata value as read by minillm -> (GGUF type, value) for the writer."""
    if isinstance(value, bool):
        return BOOL, value
    if isinstance(value, int):
        return UINT32, value
    if isinstance(value, str):
        return STRING, value
    if key.endswith("scores"):
        return ARRAY, (FLOAT32, value)
    if key.endswith("token_type"):
        return ARRAY, (INT32, value)
    return ARRAY, (STRING, value)


def model_file(meta: dict, path: Path) -> Path:
    """A one-layer zero-weight Llama model carrying `meta`'s tokenizer.* keys (cyllama needs one)."""
    n_vocab, c, f = len(meta["tokenizer.ggml.tokens"]), 16, 32
    keys = {"general.architecture": (STRING, "llama"), "llama.block_count": (UINT32, 1),
            "llama.context_length": (UINT32, 256), "llama.embedding_length": (UINT32, c),
            "llama.feed_forward_length": (UINT32, f), "llama.attention.head_count": (UINT32, 2),
            "llama.attention.head_count_kv": (UINT32, 2),
            "llama.attention.layer_norm_rms_epsilon": (FLOAT32, 1e-5),
            "llama.rope.dimension_count": (UINT32, c // 2), "llama.vocab_size": (UINT32, n_vocab)}
    for k, v in meta.items():
        if k.startswith("tokenizer.") and k != "tokenizer.ggml.precompiled_charsmap":
            keys[k] = typed(k, v)
    shapes = {"token_embd.weight": (n_vocab, c), "output_norm.weight": (c,),
              "blk.0.attn_norm.weight": (c,), "blk.0.ffn_norm.weight": (c,),
              "blk.0.attn_q.weight": (c, c), "blk.0.attn_k.weight": (c, c),
              "blk.0.attn_v.weight": (c, c), "blk.0.attn_output.weight": (c, c),
              "blk.0.ffn_gate.weight": (f, c), "blk.0.ffn_up.weight": (f, c),
              "blk.0.ffn_down.weight": (c, f)}
    tensors = {n: (F32, s, np.zeros(s, np.float32).view(np.uint8).reshape(-1))
               for n, s in shapes.items()}
    write_gguf(path, keys, tensors)
    return path


def llama_cpp_ids(meta: dict, texts: list[str]) -> list[list[int]]:
    """llama.cpp's ids (no BOS, specials not parsed), through cyllama on a model file."""
    from cyllama.llama import llama_cpp as cy
    cy.disable_logging()
    with tempfile.TemporaryDirectory() as d:
        model = cy.LlamaModel(str(model_file(meta, Path(d) / "m.gguf")), cy.LlamaModelParams())
        vocab = model.get_vocab()      # subtle: a vocabulary must not outlive its model
        ids = [list(vocab.tokenize(t, add_special=False, parse_special=False)) if t else []
               for t in texts]
        del vocab, model
    return ids


def seen_strings(meta: dict, texts: list[str]) -> str:
    """The texts as the tokenizer's tokens spell them, joined (a token outside it is not needed)."""
    if meta["tokenizer.ggml.model"] in SPM_MODELS:
        return "\x00".join("▁" + t.replace(" ", "▁") for t in texts)
    b2u = bytes_to_unicode()
    return "\x00".join("".join(b2u[b] for b in t.encode("utf-8")) + "\x00" + t for t in texts)


def reduced(meta: dict, texts: list[str]) -> dict:
    tokens, types = meta["tokenizer.ggml.tokens"], meta.get("tokenizer.ggml.token_type")
    seen = seen_strings(meta, texts)
    keep = {i for i, t in enumerate(tokens) if (types and types[i] != 1) or t in seen}
    out = {k: v for k, v in meta.items() if not isinstance(v, list) and k.startswith("tokenizer.")
           and "chat_template" not in k}
    out["tokenizer.ggml.n_tokens"] = len(tokens)
    out["tokenizer.ggml.tokens"] = {i: tokens[i] for i in sorted(keep)}
    for key in ("tokenizer.ggml.token_type", "tokenizer.ggml.scores"):
        if key in meta:
            out[key] = {i: meta[key][i] for i in sorted(keep)}
    if "tokenizer.ggml.merges" in meta:
        kept = {tokens[i] for i in keep}
        out["tokenizer.ggml.merges"] = [m for m in meta["tokenizer.ggml.merges"]
                                        if m.replace(" ", "", 1) in kept and " " in m]
    return out


def main(models: Path, only_pre_names: bool = False) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    report = []
    for path in [] if only_pre_names else sorted(models.glob("ggml-vocab-*.gguf")):
        name = path.name[len("ggml-vocab-"):-len(".gguf")]
        meta = dict(read_gguf(str(path)).metadata)
        texts, expected = read_tests(models, name)
        if meta["tokenizer.ggml.model"] in REFUSED_MODELS:
            record = {"name": name, "model": meta["tokenizer.ggml.model"], "texts": texts,
                      "ids": expected, "refused": True}
        else:
            all_texts = texts + EXTRA
            got = llama_cpp_ids(meta, all_texts)
            bad = [t for t, e, g in zip(texts, expected, got) if e != g]
            if bad:
                raise SystemExit(f"{name}: cyllama differs from the .out file on {bad[:3]}")
            record = {"name": name, "model": meta["tokenizer.ggml.model"], "texts": all_texts,
                      "ids": got, "n_from_test_file": len(texts),
                      "vocab": reduced(meta, all_texts)}
        (OUT / f"{name}.json.gz").write_bytes(gzip.compress(
            json.dumps(record, ensure_ascii=False).encode("utf-8"), mtime=0))
        report.append((name, len(record["texts"]), sum(map(len, record["ids"]))))
    gpt2 = dict(read_gguf(str(models / "ggml-vocab-gpt-2.gguf")).metadata)
    texts = read_tests(models, "gpt-2")[0] + EXTRA
    names = {}
    for pre in sorted(LLAMA_CPP_PRE):
        try:
            names[pre] = llama_cpp_ids({**gpt2, "tokenizer.ggml.pre": pre}, texts)
        except Exception as exc:        # a name this llama.cpp build does not know yet
            print(f"pre {pre}: llama.cpp refuses it ({exc})")
            names[pre] = None
    record = {"texts": texts, "vocab": reduced(gpt2, texts), "ids": names}
    (OUT / "pre_names.json.gz").write_bytes(gzip.compress(
        json.dumps(record, ensure_ascii=False).encode("utf-8"), mtime=0))
    for name, n_texts, n_ids in report:
        print(f"{name:16s} {n_texts:3d} texts {n_ids:6d} ids")
    print(f"pre_names: {len(names)} names x {len(texts)} texts")


if __name__ == "__main__":
    main(Path(sys.argv[1]), only_pre_names="--pre-names" in sys.argv[2:])
