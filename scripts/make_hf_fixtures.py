"""Reference fixtures for the Hugging Face formats and llama.cpp's pre-tokenisers.

    PYTHONPATH=$PWD .venv-dev/bin/python scripts/make_hf_fixtures.py

(the development venv of scripts/README.md; never imported by minillm or the tests.) Writes

  tests/fixtures/hf_shipped/reference.json      for weights/shakespeare and weights/songci: the
      ids of TEXTS from `tokenizers.Tokenizer.from_file(folder/tokenizer.json)` and from
      `transformers.AutoTokenizer.from_pretrained(folder)` (the script checks they agree and that
      decoding gives the text back), and the ids whose logits are stored
  tests/fixtures/hf_shipped/logits.safetensors  `AutoModelForCausalLM.from_pretrained(folder)`
      logits [1, T, V] of those ids, one tensor per model
  tests/fixtures/gguf_pre/reference.json        for each llama.cpp pre-tokeniser name of
      minillm/tokenizer/patterns.py (LLAMA_CPP_PRE): the pieces and ids that `tokenizers` gives
      with the same Split regexes (Isolated) + ByteLevel over weights/shakespeare's vocabulary,
      `ignore_merges` set as llama.cpp sets it. (The reference is Hugging Face `tokenizers`
      running the regex sequence, not llama.cpp itself.)

It prints what it compared, for the record (scripts/README.md).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import tokenizers
import torch
import transformers
from safetensors.numpy import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from minillm.tokenizer.formats.pattern_names import LLAMA_CPP_IGNORE_MERGES, LLAMA_CPP_PRE  # noqa: E402

MODELS = ("shakespeare", "songci")
LOGIT_POSITIONS = 8   # ids whose logits are stored (the fixture stays small)
TEXTS = [
    "ROMEO: But soft! what light through yonder window breaks?\nJULIET: I'll say 'tis so.",
    "明月几时有，把酒问青天。不知天上宫阙，今夕是何年。",
    "It's 3:45pm — we'll see; they'VE SAID 12345 times: 1,000,000 / 3.14159 ≈ 318310.",
    "Ελληνικά κείμενα, русский текст, français: café naïve, Straße, İstanbul, ǅemal.",
    "日本語のテキストです。カタカナとひらがな、漢字。 한국어 텍스트입니다. ０１２ＡＢＣ！？",
    "camelCaseWord HTTPServer getHTTPResponseCode XMLHttpRequest",
    "def f(x):\r\n\treturn x ** 2  # square\n\n\n   trailing spaces   \n \n",
    "emoji 👍🏽 family 👨‍👩‍👧‍👦 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐐀𐐨 𞤀 ﬁ ½ Ⅻ ٣ \u00a0\u3000\u2028 ",
]


def shipped_references() -> tuple[dict, dict]:
    refs, logits = {}, {}
    for name in MODELS:
        folder = REPO / "weights" / name
        fast = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        auto = AutoTokenizer.from_pretrained(str(folder))
        ids = []
        for text in TEXTS:
            a = fast.encode(text).ids
            b = auto(text, add_special_tokens=False)["input_ids"]
            assert a == b, (name, text)
            assert fast.decode(a) == text and auto.decode(b) == text, (name, text)
            ids.append(a)
        model = AutoModelForCausalLM.from_pretrained(str(folder)).eval()
        prompt = ids[0][:LOGIT_POSITIONS]
        with torch.no_grad():
            out = model(torch.tensor([prompt])).logits.numpy().astype(np.float32)  # [1, T, V]
        logits[name] = np.ascontiguousarray(out)
        refs[name] = {"ids": ids, "logit_ids": prompt, "tokenizer_class": type(auto).__name__,
                      "model_class": type(model).__name__}
        print(f"{name}: tokenizers == AutoTokenizer ({type(auto).__name__}) on {len(TEXTS)} texts "
              f"({sum(map(len, ids))} ids, decode round trip exact); {type(model).__name__} "
              f"logits {list(out.shape)}")
    return refs, logits


def pre_tokenizer_references() -> dict:
    """Each llama.cpp name: the same Split sequence in `tokenizers`, over shakespeare's vocab."""
    base = json.loads((REPO / "weights" / "shakespeare" / "tokenizer.json").read_text("utf-8"))
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": False}
    to_byte = {c: b for b, c in enumerate_byte_alphabet().items()}
    out = {}
    for name, stages in sorted(LLAMA_CPP_PRE.items()):
        data = json.loads(json.dumps(base))
        data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            *({"type": "Split", "pattern": {"Regex": s}, "behavior": "Isolated",
               "invert": False} for s in stages), byte_level]}
        data["model"]["ignore_merges"] = name in LLAMA_CPP_IGNORE_MERGES
        tok = tokenizers.Tokenizer.from_str(json.dumps(data))
        pieces = [[bytes(to_byte[c] for c in p).decode("utf-8")
                   for p, _ in tok.pre_tokenizer.pre_tokenize_str(t)] for t in TEXTS]
        for t, ps in zip(TEXTS, pieces):
            assert "".join(ps) == t, (name, t)
        out[name] = {"stages": list(stages), "ignore_merges": name in LLAMA_CPP_IGNORE_MERGES,
                     "pieces": pieces, "ids": [tok.encode(t).ids for t in TEXTS]}
    print(f"pre-tokenisers: {len(out)} llama.cpp names, {len(TEXTS)} texts each")
    return out


def enumerate_byte_alphabet() -> dict[int, str]:
    from minillm.tokenizer.formats.byte_alphabet import bytes_to_unicode
    return bytes_to_unicode()


def main() -> None:
    versions = {"tokenizers": tokenizers.__version__, "transformers": transformers.__version__,
                "torch": torch.__version__}
    print("versions:", versions)
    refs, logits = shipped_references()
    out = REPO / "tests" / "fixtures" / "hf_shipped"
    out.mkdir(parents=True, exist_ok=True)
    (out / "reference.json").write_text(json.dumps(
        {"versions": versions, "texts": TEXTS, "models": refs}, ensure_ascii=False) + "\n",
        encoding="utf-8")
    save_file(logits, str(out / "logits.safetensors"))
    pre = REPO / "tests" / "fixtures" / "gguf_pre"
    pre.mkdir(parents=True, exist_ok=True)
    (pre / "reference.json").write_text(json.dumps(
        {"versions": versions, "texts": TEXTS, "vocabulary": "weights/shakespeare",
         "names": pre_tokenizer_references()}, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
