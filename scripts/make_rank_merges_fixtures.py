"""Fixture: merges derived from tiktoken ranks, checked by llama.cpp and `tokenizers`.

Dev-only (cyllama==0.2.18, tokenizers; see scripts/README.md). Run from the repository root:

    python scripts/make_rank_merges_fixtures.py

1. GPT-2's tiktoken ranks (`Tokenizer.load("gpt2")`, no merge list) exported by minillm into a
   one-layer GPT-2 GGUF (the merges derived by minillm/tokenizer/rank_merges.py): llama.cpp
   (cyllama) tokenizes the texts with that file, and `tokenizers` with a byte-level BPE built
   from the file's own tokens and merges (HF's GPT-2 pre-tokenizer).
2. cl100k's ranks (llama.cpp has no name for its exact pattern, so no GGUF): `tokenizers` with
   the derived merges and cl100k's split regex.

Writes tests/fixtures/rank_merges/ids.json: the texts and each reference's ids. The texts are the
tiktoken parity texts (tests/fixtures/tokenizer/tiktoken_parity.json) and lines of the shipped
weights/shakespeare/val_sample.txt.
"""
import json
import re
import sys
import tempfile
from pathlib import Path

import tokenizers
from tokenizers import Regex, decoders, models, pre_tokenizers

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from llama_cpp_ref import LlamaCpp  # noqa: E402
from minillm import GPT, ModelConfig  # noqa: E402
from minillm.io.gguf.read import read_gguf  # noqa: E402
from minillm.tokenizer import Tokenizer  # noqa: E402
from minillm.tokenizer.byte_alphabet import bytes_to_unicode  # noqa: E402
from minillm.tokenizer.rank_merges import merges_from_ranks  # noqa: E402

OUT = ROOT / "tests/fixtures/rank_merges"


def texts() -> list[str]:
    parity = json.loads((ROOT / "tests/fixtures/tokenizer/tiktoken_parity.json").read_text())
    lines = (ROOT / "weights/shakespeare/val_sample.txt").read_text().splitlines()
    return parity["texts"] + [line for line in lines if line.strip()][:200]


def hf_bpe(vocab: dict[str, int], merges: list[tuple[str, str]], split=None):
    """A `tokenizers` byte-level BPE: HF's GPT-2 pre-tokenizer, or `split` then bytes."""
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True) \
        if split is None else pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(split), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    return tok


def gpt2_file_references(sample: list[str]) -> dict:
    tok = Tokenizer.load("gpt2")
    model = GPT(ModelConfig(vocab_size=tok.vocab_size, n_ctx=16, d_model=16, n_heads=2,
                            n_layers=1))
    with tempfile.TemporaryDirectory() as d:
        path = model.save_gguf(Path(d) / "gpt2-ranks.gguf", tok)
        meta = read_gguf(str(path)).metadata
        with LlamaCpp(path) as ref:
            llama_ids = [ref.tokenize(t) for t in sample]
    vocab = {t: i for i, t in enumerate(meta["tokenizer.ggml.tokens"])}
    merges = [tuple(m.split(" ")) for m in meta["tokenizer.ggml.merges"]]
    hf = hf_bpe(vocab, merges)
    print(f"gpt2 ranks -> GGUF: {len(merges)} merges, pre {meta['tokenizer.ggml.pre']!r}")
    return {"llama_cpp": llama_ids,
            "tokenizers": [hf.encode(t, add_special_tokens=False).ids for t in sample]}


def cl100k_tokenizers_ids(sample: list[str]) -> list[list[int]]:
    tok = Tokenizer.load("cl100k")
    b2u = bytes_to_unicode()
    spell = lambda b: "".join(b2u[x] for x in b)                       # noqa: E731
    vocab = {spell(b): i for b, i in tok._encoder.items()}
    merges = [(spell(a), spell(b)) for (a, b), _ in
              sorted(merges_from_ranks(tok._encoder).items(), key=lambda kv: kv[1])]
    # subtle: Oniguruma (tokenizers' regex engine) reads `{1,3}+` as "one or more runs of 1-3
    # digits", not as possessive, and `$` as the end of a line: the split regex is given without
    # possessive quantifiers (the same matches) and with `\z` for tiktoken's end of text
    split = re.sub(r"(\{\d+(?:,\d*)?\}|[+?*])\+", r"\1", tok.pattern[0]).replace("$", r"\z")
    hf = hf_bpe(vocab, merges, split=split)
    return [hf.encode(t, add_special_tokens=False).ids for t in sample]


def main():
    sample = texts()
    gpt2 = gpt2_file_references(sample)
    cl100k = cl100k_tokenizers_ids(sample)
    ours = {name: [tok.encode_ordinary(t) for t in sample]     # special-token text: ordinary
            for name, tok in (("gpt2", Tokenizer.load("gpt2")), ("cl100k", Tokenizer.load("cl100k")))}
    for name, got in (("gpt2 llama.cpp", gpt2["llama_cpp"]), ("gpt2 tokenizers", gpt2["tokenizers"]),
                      ("cl100k tokenizers", cl100k)):
        ranks = ours[name.split()[0]]
        same = sum(a == b for a, b in zip(got, ranks))
        print(f"{name}: {same} of {len(sample)} texts give the ranks' (tiktoken's) ids")
    OUT.mkdir(parents=True, exist_ok=True)
    data = {"cyllama": "0.2.18", "tokenizers": tokenizers.__version__, "texts": sample,
            "gpt2_llama_cpp": gpt2["llama_cpp"], "gpt2_tokenizers": gpt2["tokenizers"],
            "cl100k_tokenizers": cl100k}
    (OUT / "ids.json").write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT / 'ids.json'}")


if __name__ == "__main__":
    main()
