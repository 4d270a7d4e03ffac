"""Make tests/fixtures/chat_templates/: each family's real chat template, rendered by transformers.

Dev-only script (transformers, tokenizers, jinja2). For every chat format minillm renders
(minillm/chat/formats/), the family's REAL Jinja template renders a set of conversations with
``tokenizer.apply_chat_template`` (system / no system, several turns, add_generation_prompt True
and False, unicode, empty and padded content, the family's own options), and the rendered text and
its ids are stored. A template that refuses a conversation (Gemma 2's system message, roles that
do not alternate) is stored as refused, with its message.

The tokenizer: GPT-2's byte-level BPE (``encoder.json`` + ``vocab.bpe``) plus the family's markers
added as special tokens (ids from 50257 in the order listed below), a stand-in for the family's
own vocabulary: it tokenises markers and text the way the real one does (markers whole, the text
between them as text), with a vocabulary that fits in the repository.

Where the templates come from (offline copies; the source of each is stored in its fixture):
  --llama-cpp DIR   a checkout of llama.cpp (``models/templates/*.jinja`` and the templates in
                    ``tests/test-chat-template.cpp``)
  --trl DIR         a checkout of Hugging Face TRL (``trl/chat_templates/*.jinja``: its "original
                    templates", stored to recognise models)
  --gguf FILE       SmolLM2-135M-Instruct's GGUF (its ``tokenizer.chat_template``)
  --gpt2 DIR        GPT-2's encoder.json and vocab.bpe
  --sdist DIR       ``vendor/llama.cpp`` of the PyPI sdist ``llama-cpp-python==0.3.36`` (a newer
                    llama.cpp: ``models/templates/HuggingFaceTB-SmolLM3-3B.jinja``)
  --olmo2 FILE      OLMo 2 Instruct's template: ``chat_template`` of the tokenizer_config.json of
                    allenai/OLMo-2-1124-13B-Instruct, as text
  --smollm3 FILE    SmolLM3's template as Hugging Face ships it (HuggingFaceTB/SmolLM3-3B): it calls
                    ``strftime_now``, which renders here as a fixed day (SMOLLM3_DAY)

    python scripts/make_chat_template_fixtures.py --llama-cpp ../llama.cpp --trl ../trl \\
        --gguf ../shared/data/models/SmolLM2-135M-Instruct.Q4_1.gguf --gpt2 ../shared/data/tokenizers/gpt2 \\
        --sdist llama_cpp_python-0.3.36/vendor/llama.cpp --olmo2 olmo2.jinja --smollm3 smollm3.jinja

Stored: one JSON per format, ``{format, sources, template, detect_also, bos_token, eos_token,
special_tokens, cases: [{name, messages, add_generation_prompt, options, text, ids} or {...,
refused}]}``.
"""
import argparse
import ast
import datetime
import importlib.metadata
import json
from pathlib import Path

import transformers.utils.chat_template_utils as chat_template_utils
from transformers import GPT2TokenizerFast

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "fixtures" / "chat_templates"
LLAMA_CPP = "ggml-org/llama.cpp (fork ye-NX/llama.cpp @ 1eeb523c3e0c7ffbd59469f5463dcbdecba3535e)"
TRL = "huggingface/trl @ f2cd57710ae345ea6428ae95363267fcf38a3dc8"
LLAMA_CPP_SDIST = "llama.cpp as vendored in the PyPI sdist llama-cpp-python==0.3.36"
OLMO2_COPY = ("github.com/mauer4/Attention-From-Scratch @ 7b2eb9540b3955e12c8645aa55cb131d38223f01:"
              " weights/allenai/OLMo-2-1124-13B-Instruct/tokenizer_config.json")
SMOLLM3_COPY = ("the raw-string ``smollm3`` template of a Swift Jinja test suite, "
                "ChatTemplates.swift 'Created by Anthony DePasquale', unindented")

LLAMA3 = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
          "<|eot_id|>", "<|eom_id|>"]
GEMMA = ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"]
PHI3 = ["<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
MISTRAL = ["<s>", "</s>", "[INST]", "[/INST]"]
CHATML = ["<|im_start|>", "<|im_end|>"]
SMOLLM3_DAY = datetime.datetime(2026, 12, 3)       # strftime_now's "today" for SmolLM3's template
SMOLLM3_DATE = {"date_string": SMOLLM3_DAY.strftime("%d %B %Y")}

# format: (template source (kind, path or test name), detect_also, specials, bos, eos, options)
FAMILIES = {
    "chatml": (("test", "teknium/OpenHermes-2.5-Mistral-7B"), [], CHATML, "", "<|im_end|>", {}),
    "smollm2": (("gguf", "SmolLM2-135M-Instruct"), [], CHATML, "<|im_start|>", "<|im_end|>", {}),
    "qwen2.5": (("llama.cpp", "Qwen-Qwen2.5-7B-Instruct.jinja"), [("trl", "qwen2_5.jinja")],
                CHATML, "", "<|im_end|>", {}),
    "qwen3": (("llama.cpp", "Qwen-Qwen3-0.6B.jinja"), [("trl", "qwen3.jinja")],
              CHATML + ["<think>", "</think>"], "", "<|im_end|>", {"enable_thinking": False}),
    "llama3": (("trl", "llama3.jinja"), [], LLAMA3, "<|begin_of_text|>", "<|eot_id|>", {}),
    "llama3.1": (("llama.cpp", "meta-llama-Llama-3.1-8B-Instruct.jinja"),
                 [("llama.cpp", "meta-llama-Llama-3.3-70B-Instruct.jinja"), ("trl", "llama3_1.jinja")],
                 LLAMA3, "<|begin_of_text|>", "<|eot_id|>", {"date_string": "3 Dec 2026"}),
    "llama3.2": (("llama.cpp", "meta-llama-Llama-3.2-3B-Instruct.jinja"), [("trl", "llama3_2.jinja")],
                 LLAMA3, "<|begin_of_text|>", "<|eot_id|>", {"date_string": "3 Dec 2026"}),
    "gemma2": (("llama.cpp", "google-gemma-2-2b-it.jinja"), [("trl", "gemma.jinja")],
               GEMMA, "<bos>", "<eos>", {}),
    "gemma3": (("trl", "gemma3.jinja"), [], GEMMA, "<bos>", "<eos>", {}),
    "phi3": (("trl", "phi3.jinja"), [], PHI3, "<s>", "<|endoftext|>", {}),
    "phi3.5": (("llama.cpp", "microsoft-Phi-3.5-mini-instruct.jinja"), [("trl", "phi3_5.jinja")],
               PHI3, "<s>", "<|endoftext|>", {}),
    "mistral": (("test", "Mistral-Large-Instruct-2407 (mistralai 'v3' template"), [],
                MISTRAL, "<s>", "</s>", {}),
    "mistral-tekken": (("llama.cpp", "mistralai-Mistral-Nemo-Instruct-2407.jinja"), [],
                       MISTRAL, "<s>", "</s>", {}),
    "olmo2": (("olmo2", "allenai/OLMo-2-1124-13B-Instruct"), [], ["<|endoftext|>"],
              "<|endoftext|>", "<|endoftext|>", {}),
    "smollm3": (("smollm3", "HuggingFaceTB/SmolLM3-3B"), [], CHATML + ["<think>", "</think>"], "",
                "<|im_end|>", {}),
    "smollm3-unsloth": (("sdist", "HuggingFaceTB-SmolLM3-3B.jinja"), [],
                        CHATML + ["<think>", "</think>"], "", "<|im_end|>", {}),
}
# formats whose cases are rendered with these option sets only (else: {} and the family's options)
VARIANTS = {"smollm3": [SMOLLM3_DATE, {**SMOLLM3_DATE, "enable_thinking": False}],
            "smollm3-unsloth": [{}, {"enable_thinking": False}]}


def m(role, content):
    return {"role": role, "content": content}


S, U1, A1, U2 = (m("system", "You are a helpful assistant"), m("user", "Hello"),
                 m("assistant", "Hi there"), m("user", "Who are you?"))
CASES = [
    ("user", [U1], True),
    ("user_no_prompt", [U1], False),
    ("system_user", [S, U1], True),
    ("multi_turn", [S, U1, A1, U2], True),
    ("multi_turn_no_system", [U1, A1, U2], True),
    ("ends_with_assistant", [S, U1, A1], False),
    ("ends_with_assistant_prompt", [U1, A1], True),
    ("unicode", [m("system", "Réponds en français — brièvement 🙂"), m("user", "日本語で？ naïve café"),
                 m("assistant", "はい。Ça va ✓"), m("user", "Ünïcödé\tand\u00a0spaces")], True),
    ("empty_content", [m("system", ""), m("user", ""), m("assistant", ""), m("user", "Hi")], True),
    ("empty_user", [m("user", "")], True),
    ("padded", [m("system", "  padded system \n"), m("user", "\n  hello  \n"),
                m("assistant", "   I am an assistant   "), m("user", " again ")], True),
    ("newlines", [m("user", "line 1\n\nline 2\n"), m("assistant", "a\nb"), m("user", "c\r\nd")],
     True),
    ("system_only", [S], True),
    ("two_users", [U1, U2], True),
    ("assistant_first", [A1, U1], True),
    ("system_late", [U1, A1, S, U2], True),
]
THINK = [
    ("think_history", [U1, m("assistant", "<think>\nmull it over\n</think>\n\nHi there"), U2], True),
    ("think_last", [U1, m("assistant", "<think>\nmull it over\n</think>\n\nHi there")], False),
    ("no_think_last", [U1, A1], False),
    ("think_empty", [U1, m("assistant", "<think>\n\n</think>\n\nDone")], False),
    ("tool_response_user", [U1, A1, m("user", "<tool_response>\n42\n</tool_response>")], True),
]
SMOLLM3 = [      # the reasoning-mode switches in the system message, and the override
    ("system_no_think", [m("system", "Be brief. /no_think  "), U1, A1, U2], True),
    ("system_think", [m("system", "/think\nBe thorough."), U1], True),
    ("system_only_no_think", [m("system", "/no_think"), U1], True),
    ("system_both", [m("system", "a /think b /no_think"), U1, A1], False),
    ("system_override", [m("system", "Only this. /system_override /no_think "), U1, A1, U2], True),
    ("reply_leading_newlines", [U1, m("assistant", "\n\nHi there\n"), U2], True),
]   # (no empty conversation: transformers refuses every one, whatever the template)


def template_text(source, args) -> str:
    kind, where = source
    if kind == "llama.cpp":
        return (Path(args.llama_cpp) / "models" / "templates" / where).read_text()
    if kind == "trl":
        return (Path(args.trl) / "trl" / "chat_templates" / where).read_text()
    if kind == "sdist":
        return (Path(args.sdist) / "models" / "templates" / where).read_text()
    if kind in ("olmo2", "smollm3"):
        return Path(getattr(args, kind)).read_text()
    if kind == "test":                       # a C++ string literal in test-chat-template.cpp
        src = (Path(args.llama_cpp) / "tests" / "test-chat-template.cpp").read_text()
        start = src.index('/* .template_str= */', src.index(f'/* .name= */ "{where}'))
        literal = src[start + len('/* .template_str= */'):src.index("\n", start)].strip()
        return ast.literal_eval(literal.rstrip(","))   # plain "..." with C escapes \n \" \\
    from minillm.io.gguf.read import read_gguf
    return read_gguf(args.gguf).metadata["tokenizer.chat_template"]


def source_name(source) -> str:
    kind, where = source
    return {"llama.cpp": f"{LLAMA_CPP}: models/templates/{where}",
            "trl": f"{TRL}: trl/chat_templates/{where}",
            "test": f"{LLAMA_CPP}: tests/test-chat-template.cpp, test case {where!r}",
            "gguf": "SmolLM2-135M-Instruct.Q4_1.gguf (HuggingFaceTB/SmolLM2-135M-Instruct): "
                    "tokenizer.chat_template",
            "sdist": f"{LLAMA_CPP_SDIST}: models/templates/{where} (its header: \"Edits made by "
                     "Unsloth to make it work for most inference engines\")",
            "olmo2": f"{where}: tokenizer_config.json chat_template (a copy at {OLMO2_COPY})",
            "smollm3": f"{where}: chat_template.jinja (a verbatim copy: {SMOLLM3_COPY})"}[kind]


def tokenizer_for(specials, bos, eos, gpt2: Path):
    tok = GPT2TokenizerFast(vocab=str(gpt2 / "encoder.json"), merges=str(gpt2 / "vocab.bpe"))
    assert len(tok) == 50257, len(tok)
    tok.add_special_tokens({"additional_special_tokens": specials})
    tok.bos_token, tok.eos_token = bos or None, eos
    return tok


def render(tok, template, messages, add_generation_prompt, options):
    kw = dict(chat_template=template, add_generation_prompt=add_generation_prompt, **options)
    try:
        text = tok.apply_chat_template(messages, tokenize=False, **kw)
        ids = tok.apply_chat_template(messages, tokenize=True, return_dict=False, **kw)
    except Exception as exc:                 # the template's raise_exception (or a failed lookup)
        return {"refused": f"{type(exc).__name__}: {exc}"}
    assert ids == tok(text, add_special_tokens=False)["input_ids"]
    return {"text": text, "ids": list(ids)}


def compact_json(data: dict) -> str:
    """The fixture's JSON, one case a line (readable diffs, no line per id)."""
    head = json.dumps({k: v for k, v in data.items() if k != "cases"}, ensure_ascii=False, indent=1)
    cases = ",\n".join(json.dumps(c, ensure_ascii=False) for c in data["cases"])
    return head[:-2] + ',\n "cases": [\n' + cases + "\n ]\n}\n"


def main():
    ap = argparse.ArgumentParser()
    for flag in ("--llama-cpp", "--trl", "--gguf", "--gpt2", "--sdist", "--olmo2", "--smollm3"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--only", nargs="*", default=None, help="these formats only")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    # SmolLM3's template always asks for today's date: a fixed day, the one its fixture names
    chat_template_utils.datetime = type("FixedDay", (datetime.datetime,),
                                        {"now": classmethod(lambda cls, tz=None: SMOLLM3_DAY)})
    for name, (source, also, specials, bos, eos, options) in FAMILIES.items():
        if args.only is not None and name not in args.only:
            continue
        template = template_text(source, args)
        tok = tokenizer_for(specials, bos, eos, Path(args.gpt2))
        cases = []
        extra = THINK if name == "qwen3" else SMOLLM3 if name.startswith("smollm3") else []
        for case, messages, gen in CASES + extra:
            # subtle: Llama 3.2's template dates its preamble with today's date unless given one
            variants = VARIANTS.get(name) or ([options] if name == "llama3.2" else
                                              [{}] + ([options] if options else []))
            for opts in variants:
                label = case + "".join(f"+{k}={v}" for k, v in opts.items())
                cases.append({"name": label, "messages": messages, "add_generation_prompt": gen,
                              "options": opts, **render(tok, template, messages, gen, opts)})
        data = {"format": name, "sources": [source_name(source)], "template": template,
                "detect_also": [{"source": source_name(s), "template": template_text(s, args)}
                                for s in also],
                "bos_token": bos, "eos_token": eos,
                "special_tokens": {t: tok.convert_tokens_to_ids(t) for t in specials},
                "tokenizer": "GPT-2 (encoder.json + vocab.bpe) + the special tokens above",
                "versions": {p: importlib.metadata.version(p)
                             for p in ("transformers", "tokenizers", "jinja2")},
                "cases": cases}
        path = OUT / f"{name}.json"
        path.write_text(compact_json(data), encoding="utf-8")
        refused = sum("refused" in c for c in cases)
        print(f"{path.name}: {len(cases)} cases ({refused} refused), {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
