"""Make the tokenizer fixtures: reference ids from tiktoken and Hugging Face `tokenizers`.

    /work/venv/bin/python scripts/make_tokenizer_fixtures.py [--shared ../shared/data]

Writes
  tests/fixtures/tokenizer/tiktoken_parity.json       texts + tiktoken ids for gpt2, cl100k, o200k
  tests/fixtures/tokenizer_smollm2/gguf_metadata.json.gz   SmolLM2's tokenizer.ggml.* metadata
  tests/fixtures/tokenizer_smollm2/tokenizer.json.gz  a tokenizer.json serialised by `tokenizers`
                                                      from that metadata
  tests/fixtures/tokenizer_smollm2/reference_ids.json texts + ids from that `tokenizers` object
Needs tiktoken, tokenizers and gguf (dev venv only; never imported by minillm or the tests).
"""
from __future__ import annotations

import argparse
import base64
import gzip
import json
import random
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "fixtures"

TEXTS = [
    "Hello world",
    "hello world",
    "The quick brown fox jumps over the lazy dog. It's 3:45pm; we'll see—maybe.",
    "I'm sure you're right, they've said they'd go and I'll follow. DON'T SHOUT! He's here.",
    "def f(x):\n    return x ** 2  # square\n\n\nclass A:\n\tpass\n",
    "for (int i = 0; i < n; ++i) { sum += a[i]; }  // C\n",
    "   leading spaces and trailing spaces   ",
    "tabs\t\tand\n\n\nnewlines\r\n and  double  spaces \n \n",
    "Numbers: 1 12 123 1234 12345 3.14159 -42 1,000,000 0x1F 2024-11-29",
    "camelCaseWord HTTPServer getHTTPResponseCode XMLHttpRequest",
    "海水会吸收较多红光",
    "我们在图书馆学习人工智能。这是一个测试句子，包含标点符号！",
    "日本語のテキストです。カタカナとひらがな、漢字を混ぜます。",
    "한국어 텍스트입니다. 안녕하세요!",
    "emoji 👍🏽 family 👨‍👩‍👧‍👦 flag 🇫🇷 heart ❤️",
    "combining: e\u0301 a\u0300\u0323 n\u0303 Z\u0351\u0352\u0353 — café naïve",
    "العربية نص من اليمين إلى اليسار مع 123",
    "עברית טקסט",
    "control \x00\x01\x07\x1b[0m\x7f chars",
    "Ελληνικά και русский текст, ещё немного.",
    "<|endoftext|> is ordinary text here",
    "mixed: Über straße ÆØÅ ½ ² ℃ ∑ √ ∞ ≠ ≤",
    "URL https://example.com/path?q=1&r=two#frag and email a.b@c.org",
    "'s 't 're 've 'm 'll 'd 'S 'T 'RE can't won't",
    "",
    " ",
    "\n",
    "a" * 200,
    "ab " * 40,
]


def random_texts(n: int, seed: int = 0) -> list[str]:
    """Random strings over a mix of scripts, symbols and whitespace (fixed seed)."""
    rng = random.Random(seed)
    blocks = [(0x20, 0x7e), (0x09, 0x0d), (0xa0, 0x24f), (0x300, 0x36f), (0x400, 0x4ff),
              (0x590, 0x6ff), (0x3040, 0x30ff), (0x4e00, 0x4fff), (0xac00, 0xac7f),
              (0x1f300, 0x1f64f), (0x2000, 0x206f)]
    out = []
    for _ in range(n):
        chars = []
        for _ in range(rng.randint(1, 60)):
            lo, hi = rng.choice(blocks)
            chars.append(chr(rng.randint(lo, hi)))
        out.append("".join(chars))
    return out


def read_ranks(path: Path) -> dict[bytes, int]:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    ranks = {}
    for line in raw.splitlines():
        if line:
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return ranks


def tiktoken_fixture(shared: Path) -> None:
    import tiktoken
    import tiktoken_ext.openai_public as public
    files = {"gpt2": shared / "tokenizers/gpt2/gpt2.tiktoken",
             "cl100k": shared / "tokenizers/cl100k_base.tiktoken.gz",
             "o200k": shared / "tokenizers/o200k_base.tiktoken.gz"}
    # The definitions' patterns and special tokens, without tiktoken's download of the ranks:
    public.load_tiktoken_bpe = public.data_gym_to_mergeable_bpe_ranks = lambda *a, **k: {}
    defs = {"gpt2": public.gpt2(), "cl100k": public.cl100k_base(), "o200k": public.o200k_base()}
    texts = TEXTS + random_texts(60)
    special_texts = ["hello <|endoftext|>", "<|endoftext|><|endoftext|>x<|endoftext|>",
                     "a<|endofprompt|>b <|fim_prefix|>"]
    result = {"tiktoken_version": tiktoken.__version__, "texts": texts,
              "special_texts": special_texts, "ids": {}, "special_ids": {}}
    for name, path in files.items():
        enc = tiktoken.Encoding(name, pat_str=defs[name]["pat_str"],
                                mergeable_ranks=read_ranks(path),
                                special_tokens=defs[name]["special_tokens"])
        result["ids"][name] = [enc.encode_ordinary(t) for t in texts]
        result["special_ids"][name] = [enc.encode(t, allowed_special="all") for t in special_texts]
    (OUT / "tokenizer").mkdir(parents=True, exist_ok=True)
    (OUT / "tokenizer" / "tiktoken_parity.json").write_text(
        json.dumps(result, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")


def gguf_metadata(path: Path) -> dict:
    from gguf import GGUFReader
    reader = GGUFReader(str(path))
    meta = {}
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer.ggml."):
            continue
        values = [field.parts[i] for i in field.data]
        if values and values[0].dtype.itemsize == 1 and values[0].dtype.kind == "u":
            decoded = [bytes(v).decode("utf-8") for v in values]
        else:
            decoded = [v.tolist()[0] for v in values]
        is_array = key in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                           "tokenizer.ggml.token_type", "tokenizer.ggml.scores")
        meta[key] = decoded if is_array else decoded[0]
    return meta


def smollm2_fixture(shared: Path) -> None:
    import tokenizers
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
    meta = gguf_metadata(shared / "models/SmolLM2-135M-Instruct.Q4_1.gguf")
    out = OUT / "tokenizer_smollm2"
    out.mkdir(parents=True, exist_ok=True)
    (out / "gguf_metadata.json.gz").write_bytes(
        gzip.compress(json.dumps(meta, ensure_ascii=False).encode("utf-8"), 9, mtime=0))
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = [tuple(m.split(" ")) for m in meta["tokenizer.ggml.merges"]]
    # unk_token: SmolLM2 lacks a few single bytes (e.g. 0x04); GGUF names <|endoftext|> as unknown.
    unk = tokens[meta["tokenizer.ggml.unknown_token_id"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token=unk))
    # llama.cpp's "smollm" pre-tokeniser: every digit alone, then GPT-2's regex (ByteLevel).
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\p{N}"), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, ty in zip(tokens, types) if ty == 3])
    raw = tok.to_str()
    (out / "tokenizer.json.gz").write_bytes(gzip.compress(raw.encode("utf-8"), 9, mtime=0))
    # what SmolLM2-Instruct's tokenizer_config.json says (and the GGUF's bos/eos ids 1 and 2)
    (out / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}) + "\n")
    texts = TEXTS + random_texts(40, seed=1)
    chat = "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
    ref = {"tokenizers_version": tokenizers.__version__, "texts": texts,
           "ids": [tok.encode(t, add_special_tokens=False).ids for t in texts],
           "chat_text": chat, "chat_ids": tok.encode(chat, add_special_tokens=False).ids}
    (out / "reference_ids.json").write_text(json.dumps(ref, ensure_ascii=False, indent=0) + "\n",
                                            encoding="utf-8")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    args = ap.parse_args()
    tiktoken_fixture(args.shared)
    smollm2_fixture(args.shared)
