"""Chat template ids with the families' REAL tokenizers, not GPT-2's stand-in.

Reference: tests/fixtures/chat_templates/real/<vocab>.json.gz
(scripts/make_chat_real_tokenizer_fixtures.py): every conversation of a format's fixture
(tests/fixtures/chat_templates/<format>.json), tokenised by transformers'
``apply_chat_template(tokenize=True)`` with the family's real template and real tokenizer:

    llama-bpe   llama3, llama3.1, llama3.2   Llama 3's byte-level BPE (llama.cpp's ggml-vocab)
    phi-3       phi3, phi3.5                 Phi-3's SentencePiece: a "▁" after every marker
    qwen2       chatml, qwen2.5              Qwen2 / Qwen2.5's byte-level BPE
    smollm2     smollm2                      SmolLM2-135M-Instruct's GGUF tokenizer
    olmo2       olmo2                        cl100k_base + OLMo 2's added tokens: its template's
                                             <|user|> tags are ordinary text there

llama.cpp (b9190) gives the same ids as transformers for every rendered text of the GGUF
vocabularies (checked by the script). The GGUF vocabularies are stored reduced to what these
conversations touch (same ids, scores and merges); cl100k_base ships with minillm. Not checked with
a real tokenizer (none offline): gemma2 and gemma3 (llama.cpp ships Gemma 4's vocabulary, which has
no <start_of_turn>), mistral and mistral-tekken (llama.cpp's llama-spm is Llama 2's, without
Mistral's [INST] control tokens), qwen3 (Qwen2's vocabulary lacks <think>), smollm3 and
smollm3-unsloth (no SmolLM3 vocabulary). Exact equality of ids.
"""
import functools
import gzip
import json
from pathlib import Path

import pytest

from minillm.chat.formats import get_format
from minillm.tokenizer import Tokenizer, tokenizer_from_gguf_metadata
from tests.tokenizer.llamacpp_vocab import metadata

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "chat_templates" / "real"
TEMPLATES = REAL.parent
RECORDS = {p.name[:-len(".json.gz")]: json.loads(gzip.decompress(p.read_bytes()))
           for p in sorted(REAL.glob("*.json.gz"))}
OLMO2_SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                  "<|fim_suffix|>": 100260, "<|im_start|>": 100264, "<|im_end|>": 100265,
                  "<|endofprompt|>": 100276, "<|pad|>": 100277}
UNCHECKED = {"gemma2", "gemma3", "mistral", "mistral-tekken", "qwen3", "smollm3", "smollm3-unsloth"}


@functools.cache
def tokenizer(vocab: str):
    if vocab == "olmo2":                          # OLMo 2's tokenizer: cl100k_base's BPE
        base = Tokenizer.load("cl100k")
        return Tokenizer(base.encoder, base.merges, base.pre_tokenizer, OLMO2_SPECIALS,
                         eos_id=OLMO2_SPECIALS["<|endoftext|>"])
    return tokenizer_from_gguf_metadata(metadata(RECORDS[vocab]["vocab_reduced"]))


@functools.cache
def fixture(fmt: str) -> dict:
    return json.loads((TEMPLATES / f"{fmt}.json").read_text(encoding="utf-8"))


CASES = [(vocab, fmt, i) for vocab, record in RECORDS.items() for fmt in record["formats"]
         for i in range(len(record["formats"][fmt]))]


def test_every_format_is_checked_with_a_real_tokenizer_or_named_as_not():
    checked = {fmt for record in RECORDS.values() for fmt in record["formats"]}
    every = {p.stem for p in TEMPLATES.glob("*.json")}
    assert checked | UNCHECKED == every and not checked & UNCHECKED
    assert sorted(RECORDS) == ["llama-bpe", "olmo2", "phi-3", "qwen2", "smollm2"]
    for vocab, record in RECORDS.items():       # the same conversations as the format's fixture
        assert vocab == "olmo2" or record["llama_cpp"].startswith("llama.cpp b9190 (cyllama")
        for fmt, ids in record["formats"].items():
            assert len(ids) == len(fixture(fmt)["cases"]) >= 16, (vocab, fmt)


@pytest.mark.parametrize("vocab, fmt, i", CASES,
                         ids=[f"{v}-{f}-{fixture(f)['cases'][i]['name']}" for v, f, i in CASES])
def test_ids_equal_transformers_with_the_real_tokenizer(vocab, fmt, i):
    case, expected = fixture(fmt)["cases"][i], RECORDS[vocab]["formats"][fmt][i]
    chat = get_format(fmt).with_options(**case["options"]) if case["options"] else get_format(fmt)
    if expected == "refused":
        with pytest.raises(ValueError):
            chat.ids(tokenizer(vocab), case["messages"], case["add_generation_prompt"])
        return
    assert chat.ids(tokenizer(vocab), case["messages"], case["add_generation_prompt"]) == expected


def test_sentencepiece_writes_a_space_after_each_marker():
    """Phi-3's "<|user|>\\nHi": [<|user|>, "▁", "<0x0A>", "Hi"]: the text after a marker starts a
    new SentencePiece run, with its prefix space (a GPT-2 stand-in cannot show this)."""
    tok = tokenizer("phi-3")
    ids = get_format("phi3").ids(tok, [{"role": "user", "content": "Hello"}])
    assert ids[:3] == [tok.special_tokens["<|user|>"], 29871, 13]


def test_olmo2_tags_are_ordinary_tokens():
    tok = tokenizer("olmo2")
    ids = get_format("olmo2").ids(tok, [{"role": "user", "content": "Hello"}])
    assert ids[0] == 100257 and ids[1:] == tok.encode_ordinary("<|user|>\nHello\n<|assistant|>\n")
