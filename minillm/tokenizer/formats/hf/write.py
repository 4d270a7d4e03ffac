"""Writing a tokenizer as Hugging Face does: `tokenizer.json` + `tokenizer_config.json`.

The reverse of read.py's `read_hf_json`, so that `tokenizers.Tokenizer.from_file(...)` and
`transformers.AutoTokenizer.from_pretrained(folder)` give minillm's ids. The layout is the
standard byte-level BPE one (GPT-2's, Llama-3's, Qwen2's):

    model          {"type": "BPE", "vocab": {"Ġworld": 995, ...}, "merges": ["Ġ w", ...],
                    "ignore_merges": whole_piece_lookup}
                   tokens in GPT-2's byte-to-unicode alphabet (../byte_alphabet.py); merges
                   "left right" in rank order (no token string holds a space: a space byte is
                   written "Ġ")
    pre_tokenizer  Sequence[Split(stage 1, Isolated), ..., ByteLevel(use_regex=false)]: minillm's
                   pattern stages, each keeping matches and the text between them, then bytes
    decoder        ByteLevel (characters -> bytes -> UTF-8)
    added_tokens   the special tokens (`special: true`, never split, never normalised; user-defined
                   ones `special: false`); they are also entries of the vocab, as in GPT-2's file,
                   so their ids are kept as they are
    normalizer     the tokenizer's: none, a Unicode form ("NFC") or the tokenizer.json object it
                   was read from (normalizers.py)
    post_processor the one it was read from, or none (post_processors.py)

tokenizer_config.json names the class (`PreTrainedTokenizerFast`: everything is in
tokenizer.json), bos / eos / unk tokens, `model_max_length` and
`clean_up_tokenization_spaces: false` (transformers' default would glue " ." into ".").
"""
from __future__ import annotations

import json
from pathlib import Path

from minillm.io.atomic import write_new_text
from minillm.io.commit import atomic_files

from ..byte_alphabet import bytes_to_unicode
from ..validate import written_spec

_BYTE_TO_CHAR = bytes_to_unicode()


def token_string(b: bytes) -> str:
    """b" world" -> "Ġworld" (GPT-2's byte-to-unicode alphabet; the inverse of byte_alphabet.py's)."""
    return "".join(_BYTE_TO_CHAR[x] for x in b)


def hf_tokenizer_json(tok) -> dict:
    """The tokenizer as a Hugging Face tokenizer.json object (see the module docstring)."""
    if tok.merges is None:
        raise ValueError("this tokenizer uses tiktoken's rank rule (no merge list), which a "
                         "Hugging Face BPE model cannot state; save it in minillm's format "
                         "(a file name ending in .minillm.json, or format='minillm')")
    specials = tok.special_tokens                                   # str -> id
    special_ids = set(specials.values())
    vocab: dict[str, int] = {}
    for i in range(tok.vocab_size):
        if i in special_ids:
            continue
        try:
            text = token_string(tok.token_bytes(i))
        except (ValueError, IndexError, KeyError):
            raise ValueError(f"id {i} has no token: Hugging Face's vocab cannot have "
                             f"holes") from None
        if vocab.setdefault(text, i) != i:
            raise ValueError(f"ids {vocab[text]} and {i} are the same bytes {text!r}: Hugging "
                             f"Face's vocab maps each token to one id")
    vocab.update(specials)
    merges = [f"{token_string(a)} {token_string(b)}"
              for (a, b), _ in sorted(tok.merges.items(), key=lambda kv: kv[1])]
    split = [{"type": "Split", "pattern": {"Regex": stage}, "behavior": "Isolated",
              "invert": False} for stage in tok.pattern]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": False}
    added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": s not in tok.user_defined}
             for s, i in sorted(specials.items(), key=lambda kv: kv[1])]
    unk = _token_name(tok, tok.unk_id)
    norm = written_spec(tok.normalizer, "normalizer")
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": norm} if isinstance(norm, str) else norm,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [*split, byte_level]},
        "post_processor": written_spec(tok.post_processor, "post_processor"),
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": unk,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": bool(tok.whole_piece_lookup), "vocab": vocab,
                  "merges": merges},
    }


def hf_tokenizer_config(tok, model_max_length: int | None = None) -> dict:
    """tokenizer_config.json: the class and the named special tokens (None when absent)."""
    if model_max_length is not None and (type(model_max_length) is not int or model_max_length < 1):
        raise ValueError(f"model_max_length must be a positive int, got {model_max_length!r}")
    config = {"tokenizer_class": "PreTrainedTokenizerFast",
              "bos_token": _token_name(tok, tok.bos_id), "eos_token": _token_name(tok, tok.eos_id),
              "unk_token": _token_name(tok, tok.unk_id), "clean_up_tokenization_spaces": False}
    if model_max_length is not None:
        config["model_max_length"] = model_max_length
    return config


def _token_name(tok, token_id: int | None) -> str | None:
    """A special token's text, e.g. 50256 -> "<|endoftext|>"; None for None."""
    if token_id is None:
        return None
    for text, i in tok.special_tokens.items():
        if i == token_id:
            return text
    return token_string(tok.token_bytes(token_id))


def write_hf(tok, path: Path, model_max_length: int | None = None) -> None:
    """`path` (normally .../tokenizer.json) and tokenizer_config.json beside it."""
    data = hf_tokenizer_json(tok)
    config = hf_tokenizer_config(tok, model_max_length)
    with atomic_files(path.parent, (path.name, "tokenizer_config.json")) as tmp:  # both or neither
        write_new_text(tmp[path.name], json.dumps(data, ensure_ascii=False, indent=1) + "\n")
        write_new_text(tmp["tokenizer_config.json"],
                       json.dumps(config, ensure_ascii=False, indent=1) + "\n")
