"""Reading byte-level BPE vocabularies written as text: GPT-2 `encoder.json` + `vocab.bpe` and
Hugging Face `tokenizer.json` (with `tokenizer_config.json`); GGUF metadata: ../gguf/meta.py.

Both write each token's bytes with GPT-2's byte-to-unicode alphabet (../byte_alphabet.py) and the
merges as "left right" lines in rank order. Each reader returns the keyword arguments of
`Tokenizer(...)`; `check_hf_features` refuses, by name, every tokenizer.json feature minillm does
not implement before anything is built (what is honoured and refused: features.py).
"""
from __future__ import annotations

from ...patterns import GPT2_PATTERN
from ..byte_alphabet import parse_merges, vocab_from_strings
from ..validate import check_pattern_object, shown
from .features import check_honoured, pre_tokenizer_steps
from .normalizers import normalizer as as_normalizer
from .post_processors import post_processor as as_post_processor
from .pre_tokenizers import WHOLE_TEXT, step_stages
from .spm import read_hf_spm


def read_gpt2_files(encoder_json: dict, vocab_bpe: str) -> dict:
    """GPT-2's original release. `<|endoftext|>` (50256) is an entry of encoder.json: a special."""
    if not isinstance(encoder_json, dict):
        raise ValueError("encoder.json must map token strings to ids")
    specials = {s: i for s, i in encoder_json.items() if s == "<|endoftext|>"}
    lines = [ln for ln in vocab_bpe.splitlines() if ln and not ln.startswith("#version")]
    return dict(encoder=vocab_from_strings(encoder_json, specials), merges=parse_merges(lines),
                pattern=(GPT2_PATTERN,), special_tokens=specials, whole_piece_lookup=False,
                eos_id=specials.get("<|endoftext|>"))


def read_hf_json(data: dict, config: dict | None = None) -> dict:
    """A Hugging Face tokenizer.json (BPE model, byte-level) -> Tokenizer kwargs.

    Added tokens become special tokens (those with special=false: user-defined, split out of
    every text as Hugging Face does). `config` is tokenizer_config.json, if present: it names
    bos_token / eos_token. The post-processor (e.g. Llama-3 prepending BOS) is kept and applied by
    `encode(..., add_special_tokens=True)` (post_processors.py); the normaliser: normalizers.py; the pre-tokeniser: pre_tokenizers.py.
    """
    normalizer = check_hf_features(data, config)
    model = data.get("model") or {}
    if model.get("type") != "BPE":
        raise ValueError(f"tokenizer.json model type is {shown(model.get('type'))}; "
                         f"only BPE is supported")
    specials = {t["content"]: t["id"] for t in data.get("added_tokens", [])}  # (checked)
    if model.get("byte_fallback"):    # SentencePiece-style BPE (Llama 2, Mistral): spm.py
        return {**read_hf_spm(data, specials), **_config_ids(config, specials)}
    if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        raise ValueError("BPE with subword prefixes / suffixes is not byte-level BPE")
    if not isinstance(model.get("vocab"), dict) or not isinstance(model.get("merges", []), list):
        raise ValueError("tokenizer.json model needs a vocab object and a merges list")
    if data.get("pre_tokenizer") is None:
        raise ValueError("tokenizer.json has no pre_tokenizer: not a byte-level BPE tokenizer")
    steps = pre_tokenizer_steps(data["pre_tokenizer"])
    # subtle: ByteLevel(use_regex=false) alone splits nothing: the whole text is one pre-token
    stages = [stage for step in steps for stage in step_stages(step)] or [WHOLE_TEXT]
    if not any(step.get("type") == "ByteLevel" for step in steps):
        raise ValueError("tokenizer.json: the pre_tokenizer has no ByteLevel step, so its "
                         "vocabulary is not byte-level; minillm implements byte-level BPE only")
    kwargs = dict(encoder=vocab_from_strings(model["vocab"], specials),
                  merges=parse_merges(model.get("merges", []), keep="last"), pattern=tuple(stages),
                  special_tokens=specials, whole_piece_lookup=bool(model.get("ignore_merges")),
                  normalizer=as_normalizer(normalizer),
                  post_processor=as_post_processor(data.get("post_processor")),
                  user_defined=[t["content"] for t in data.get("added_tokens", [])
                                if not t.get("special", True)])  # split always: special.py
    unk = model.get("unk_token")
    kwargs["unk_id"] = specials.get(unk, model["vocab"].get(unk)) if unk else None
    return {**kwargs, **_config_ids(config, specials)}


def _config_ids(config: dict | None, specials: dict[str, int]) -> dict:
    """tokenizer_config.json's bos_token / eos_token (a string or {"content": ...}) -> ids."""
    ids = {}
    for key in ("bos", "eos"):
        tok = (config or {}).get(f"{key}_token")
        tok = tok.get("content") if isinstance(tok, dict) else tok
        ids[f"{key}_id"] = specials.get(tok) if isinstance(tok, str) else None
    return ids


def check_hf_features(data: dict, config: dict | None):
    """Refuse every tokenizer.json feature minillm does not implement (ValueError naming it),
    and fields of the wrong JSON type, before anything is built from the file. Returns the
    normaliser as the Tokenizer keeps it (checked once, by features.check_honoured)."""
    if data.get("pre_tokenizer") is not None:
        for step in pre_tokenizer_steps(data["pre_tokenizer"]):
            if step.get("type") == "Split":
                check_pattern_object(step.get("pattern"), "Split")
    norm = data.get("normalizer")
    if norm is not None and not (isinstance(norm, dict) and (norm.get("type") != "Sequence"
                                                             or isinstance(norm.get("normalizers"), list))):
        raise ValueError(f"tokenizer.json: normalizer must be an object, got {shown(norm)}")
    if config is not None and not isinstance(config, dict):
        raise ValueError("tokenizer_config.json must hold a JSON object")
    model = data.get("model")
    if not isinstance(model, dict):
        raise ValueError("tokenizer.json: 'model' must be an object")
    if model.get("dropout") not in (None, 0, 0.0):
        raise ValueError(f"tokenizer.json: BPE dropout={shown(model['dropout'])} is not supported "
                         f"(minillm's BPE is deterministic)")
    if model.get("fuse_unk") and not model.get("byte_fallback"):
        raise ValueError("tokenizer.json: fuse_unk=true is not supported (but with byte_fallback "
                         "and all 256 <0xNN> tokens, where no unk is produced: spm.py)")
    if not isinstance(model.get("unk_token"), (str, type(None))):
        raise ValueError(f"tokenizer.json: unk_token must be a string, got {shown(model['unk_token'])}")
    for name in ("ignore_merges", "byte_fallback"):
        if not isinstance(model.get(name), (bool, type(None))):
            raise ValueError(f"tokenizer.json: model.{name} must be true or false, got "
                             f"{shown(model[name])}")
    decoder = data.get("decoder")     # absent: accepted (the vocabulary decides: ByteLevel below)
    if decoder is not None and not model.get("byte_fallback") and not (isinstance(decoder, dict) and decoder.get("type") == "ByteLevel"):
        kind = decoder.get("type") if isinstance(decoder, dict) else decoder
        raise ValueError(f"tokenizer.json: decoder {shown(kind)} is not supported (minillm decodes "
                         f"byte-level: the decoder must be ByteLevel)")
    added = data.get("added_tokens", [])
    if not isinstance(added, list) or not all(isinstance(t, dict) for t in added):
        raise ValueError("tokenizer.json: added_tokens must be a list of objects")
    for t in added:
        content, i = t.get("content"), t.get("id")
        if not isinstance(content, str) or not content or type(i) is not int or i < 0:
            raise ValueError(f"tokenizer.json: added token {shown(content)}: content must be a "
                             f"non-empty string and id an integer >= 0, got id {shown(i)}")
    for key in ("bos_token", "eos_token"):
        tok = (config or {}).get(key)
        tok = tok.get("content") if isinstance(tok, dict) else tok
        if not isinstance(tok, (str, type(None))):
            raise ValueError(f"tokenizer_config.json: {key} must be a string, got {shown(tok)}")
    return check_honoured(data)
