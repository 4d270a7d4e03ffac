"""Make tests/fixtures/chat_templates/real/: chat template ids with the families' REAL tokenizers.

Dev-only script (transformers, tokenizers, gguf, tiktoken; minillm for the check below).
tests/fixtures/chat_templates/*.json (make_chat_template_fixtures.py) hold each format's
conversations rendered by its real template, with ids from GPT-2's vocabulary plus the markers:
a stand-in that cannot show how a family's own tokenizer splits the text around its special
tokens (SentencePiece's "▁" after a marker, merges across a marker it does not hold). Here the
same conversations are tokenised by transformers' ``apply_chat_template(tokenize=True)`` with
the family's real template AND its real tokenizer, where one is available offline:

    llama-bpe   llama3, llama3.1, llama3.2   Llama 3's tokenizer (llama.cpp's
                                             models/ggml-vocab-llama-bpe.gguf)
    phi-3       phi3, phi3.5                 Phi-3's SentencePiece (ggml-vocab-phi-3.gguf)
    qwen2       chatml, qwen2.5              Qwen2 / Qwen2.5's tokenizer (ggml-vocab-qwen2.gguf)
    smollm2     smollm2                      SmolLM2-135M-Instruct.Q4_1.gguf's tokenizer
    olmo2       olmo2                        cl100k_base's BPE with OLMo 2 Instruct's added tokens
                                             (its tokenizer_config.json: <|endoftext|> 100257 ...)

The GGUF vocabularies become transformers tokenizers with ``AutoTokenizer.from_pretrained(
folder, gguf_file=...)``; OLMo 2's is cl100k_base converted by transformers' TikTokenConverter
plus its added tokens. Stored per vocabulary, ``<vocab>.json.gz``: for each format, each case
of its fixture (same order) -> the ids, or "refused"; and the part of the vocabulary those
renderings can touch (as scripts/make_llamacpp_vocab_fixtures.py reduces one: same ids, scores,
merges in order), so the test needs no 1-8 MB vocabulary file. Not for olmo2: cl100k_base ships
with minillm (weights/tokenizers). Before writing, minillm's tokenizer from the reduced
vocabulary is checked to give the same ids as from the whole one, for every case, and llama.cpp
(cyllama 0.2.18, build b9190) to give transformers' ids for every rendered text of a GGUF
vocabulary (``parse_special``, no BOS added): two references, one answer.

    python scripts/make_chat_real_tokenizer_fixtures.py \\
        --models llama_cpp_python-0.3.36/vendor/llama.cpp/models \\
        --smollm2 ../shared/data/models/SmolLM2-135M-Instruct.Q4_1.gguf \\
        --cl100k ../shared/data/tokenizers/cl100k_base.tiktoken.gz
"""
import argparse
import gzip
import importlib.metadata
import json
import sys
import tempfile
from pathlib import Path

from transformers import AutoTokenizer, PreTrainedTokenizerFast
from transformers.convert_slow_tokenizer import TikTokenConverter

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "scripts")]
from make_llamacpp_vocab_fixtures import reduced  # noqa: E402

from minillm.chat.formats import get_format  # noqa: E402
from minillm.io.gguf.read import read_gguf  # noqa: E402
from minillm.tokenizer import Tokenizer, tokenizer_from_gguf_metadata  # noqa: E402
from tests.tokenizer.llamacpp_vocab import metadata  # noqa: E402

TEMPLATES = REPO / "tests" / "fixtures" / "chat_templates"
OUT = TEMPLATES / "real"
VOCABS = {"llama-bpe": ["llama3", "llama3.1", "llama3.2"], "phi-3": ["phi3", "phi3.5"],
          "qwen2": ["chatml", "qwen2.5"], "smollm2": ["smollm2"], "olmo2": ["olmo2"]}
# OLMo 2 Instruct's added tokens (allenai/OLMo-2-1124-13B-Instruct tokenizer_config.json); the
# markers of its template (<|user|> ...) are not among them
OLMO2_SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                  "<|fim_suffix|>": 100260, "<|im_start|>": 100264, "<|im_end|>": 100265,
                  "<|endofprompt|>": 100276, "<|pad|>": 100277}
OLMO2_ADDED = {100256: "<|extra_id_0|>", 100261: "|||PHONE_NUMBER|||",
               100262: "|||EMAIL_ADDRESS|||", 100263: "|||IP_ADDRESS|||",
               **{100265 + i: f"<|extra_id_{i}|>" for i in range(1, 11)}}
SOURCES = {
    "llama-bpe": "llama.cpp's models/ggml-vocab-llama-bpe.gguf (Meta Llama 3's tokenizer)",
    "phi-3": "llama.cpp's models/ggml-vocab-phi-3.gguf (Microsoft Phi-3's tokenizer)",
    "qwen2": "llama.cpp's models/ggml-vocab-qwen2.gguf (Qwen2's tokenizer, Qwen2.5's too)",
    "smollm2": "SmolLM2-135M-Instruct.Q4_1.gguf (HuggingFaceTB/SmolLM2-135M-Instruct)",
    "olmo2": "cl100k_base.tiktoken + OLMo 2 Instruct's added tokens (its tokenizer_config.json)",
}


def hf_tokenizer(name: str, args):
    """The vocabulary as a transformers tokenizer (the reference) and its GGUF metadata."""
    if name == "olmo2":
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "cl100k_base.tiktoken"
            path.write_bytes(gzip.decompress(Path(args.cl100k).read_bytes()))
            fast = TikTokenConverter(vocab_file=str(path)).converted()
        tok = PreTrainedTokenizerFast(tokenizer_object=fast)   # (bos/eos: set from the fixture)
        added = {**{i: t for t, i in OLMO2_SPECIALS.items()}, **OLMO2_ADDED}
        for i in sorted(added):       # every added token at its own id, in order
            assert len(tok) == i, (len(tok), i)
            tok.add_tokens([added[i]], special_tokens=added[i] in OLMO2_SPECIALS)
        assert all(tok.convert_tokens_to_ids(t) == i for t, i in OLMO2_SPECIALS.items())
        return tok, None
    path = Path(args.smollm2) if name == "smollm2" else \
        Path(args.models) / f"ggml-vocab-{name}.gguf"
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    return tok, dict(read_gguf(str(path)).metadata)


def minillm_tokenizer(name: str, meta):
    if name == "olmo2":
        base = Tokenizer.load("cl100k")
        return Tokenizer(base.encoder, base.merges, base.pre_tokenizer, OLMO2_SPECIALS,
                         eos_id=OLMO2_SPECIALS["<|endoftext|>"])
    return tokenizer_from_gguf_metadata(meta)


def llama_cpp_ids(meta: dict, texts: list[str]) -> list[list[int]]:
    """llama.cpp's ids for each text, special tokens parsed, nothing added."""
    from cyllama.llama import llama_cpp as cy
    from make_llamacpp_vocab_fixtures import model_file
    cy.disable_logging()
    with tempfile.TemporaryDirectory() as d:
        model = cy.LlamaModel(str(model_file(meta, Path(d) / "m.gguf")), cy.LlamaModelParams())
        vocab = model.get_vocab()      # subtle: a vocabulary must not outlive its model
        ids = [list(vocab.tokenize(t, add_special=False, parse_special=True)) for t in texts]
        del vocab, model
    return ids


def with_options(name, options):
    return get_format(name).with_options(**options) if options else get_format(name)


def text_runs(data: dict, specials) -> list[str]:
    """Every rendered text, and its runs between special tokens (what a tokenizer encodes)."""
    runs = []
    for case in data["cases"]:
        if "text" in case:
            pieces = with_options(data["format"], case["options"]).pieces(
                case["messages"], case["add_generation_prompt"])
            runs += [case["text"]] + [p for p in pieces if p not in specials]
    return runs


def main():
    ap = argparse.ArgumentParser()
    for flag in ("--models", "--smollm2", "--cl100k"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--only", nargs="*", default=None, help="these vocabularies only")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, formats in VOCABS.items():
        if args.only is not None and name not in args.only:
            continue
        hf, meta = hf_tokenizer(name, args)
        tok = minillm_tokenizer(name, meta)
        record = {"vocab": name, "source": SOURCES[name], "formats": {},
                  "tokenizer": "transformers: " + ("TikTokenConverter + added tokens"
                                                   if meta is None else
                                                   "AutoTokenizer.from_pretrained(gguf_file)"),
                  "versions": {p: importlib.metadata.version(p)
                               for p in ("transformers", "tokenizers", "jinja2", "gguf")}}
        texts, equal, total, rendered, expected = [], 0, 0, [], []
        for fmt in formats:
            data = json.loads((TEMPLATES / f"{fmt}.json").read_text(encoding="utf-8"))
            hf.bos_token, hf.eos_token = data["bos_token"] or None, data["eos_token"]
            ids = []
            for case in data["cases"]:
                if "refused" in case:
                    ids.append("refused")
                    continue
                kw = dict(chat_template=data["template"], tokenize=True, return_dict=False,
                          add_generation_prompt=case["add_generation_prompt"], **case["options"])
                ids.append(list(hf.apply_chat_template(case["messages"], **kw)))
                rendered.append(case["text"])
                expected.append(ids[-1])
                ours = with_options(fmt, case["options"]).ids(tok, case["messages"],
                                                              case["add_generation_prompt"])
                equal, total = equal + (ours == ids[-1]), total + 1
            record["formats"][fmt] = ids
            texts += text_runs(data, tok.special_tokens)
        if meta is not None:
            assert llama_cpp_ids(meta, rendered) == expected, name
            record["llama_cpp"] = (f"llama.cpp b9190 (cyllama 0.2.18) gives the same ids for all "
                                   f"{len(rendered)} rendered texts")
            record["vocab_reduced"] = reduced(meta, texts)
            stored = json.loads(json.dumps(record["vocab_reduced"]))      # (ids as str keys)
            small = tokenizer_from_gguf_metadata(metadata(stored))
            for fmt in formats:          # the reduced vocabulary tokenises these as the whole one
                data = json.loads((TEMPLATES / f"{fmt}.json").read_text(encoding="utf-8"))
                for case in data["cases"]:
                    if "text" in case:
                        f = with_options(fmt, case["options"])
                        args_ = (case["messages"], case["add_generation_prompt"])
                        assert f.ids(small, *args_) == f.ids(tok, *args_), (name, fmt, case["name"])
        path = OUT / f"{name}.json.gz"
        path.write_bytes(gzip.compress(json.dumps(record, ensure_ascii=False).encode(), mtime=0))
        print(f"{path.name}: {', '.join(formats)}; minillm = transformers on {equal} of {total} "
              f"conversations; {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
