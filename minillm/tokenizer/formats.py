"""Where a tokenizer comes from: vendored names, tiktoken rank files, GPT-2 / Hugging Face files,
GGUF metadata and minillm's own readable format. `read(path_or_name)` returns the kwargs of
`Tokenizer(...)`; `write(tok, path)` saves one. Which names and folders are accepted: locate.py.

* tiktoken (`*.tiktoken`, optionally `.gz`): one line per token, `base64(token bytes) rank`; the
  rank is the id (the `ranks` rule of bpe.py). The file has no pattern and no special tokens:
  both come from the file name (gpt2/r50k, cl100k, o200k) or `pattern=`.
* a directory with `encoder.json` + `vocab.bpe` (GPT-2's release) or a tokenizer file.
* `tokenizer.json` (or `.json.gz`): Hugging Face (hf.py) or minillm's (minillm_format.py).
* `.gguf`: the `tokenizer.ggml.*` metadata (gguf_meta.py); the tensors are not read.

minillm's own readable format is in minillm_format.py: its file name is `*.minillm.json` (older
files named tokenizer.json still load: the reader looks at the content). `write` also writes a
`.vocab` dump. A file named `tokenizer.json` is written in Hugging Face's format (hf_write.py).
"""
from __future__ import annotations

import base64
import binascii
import gzip
import io
import json
import zlib
from pathlib import Path

from minillm.io.atomic import atomic_write_text
from minillm.io.gguf.carry import hf_chat_templates
from minillm.io.bounded import read_bounded
from minillm.io.safetensors_header import no_duplicate_keys

from .display import render_token
from .gguf_meta import read_gguf_metadata
from .hf import read_gpt2_files, read_hf_json
from .hf_write import write_hf
from .locate import NAMED, locate  # noqa: F401  (NAMED: the vendored names, kept importable here)
from .minillm_format import FORMAT_NAME, read_minillm, write_minillm
from .pattern_names import KNOWN_STAGES, NAMED_PATTERNS
from .validate import check_patterns, check_vocabulary, shown

TIKTOKEN_SPECIALS = {
    "gpt2": {"<|endoftext|>": 50256},
    "cl100k": {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
               "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
    "o200k": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}


MAX_TEXT_BYTES = 64 << 20  # the largest real tokenizer files (o200k, Gemma's tokenizer.json)
# are 3.6-35 MB; a file (or a .gz's decompressed content) beyond this is refused unread


def _read_text(path: Path) -> str:
    raw = read_bounded(path, MAX_TEXT_BYTES, "a tokenizer file")   # regular files only
    if path.suffix == ".gz":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
                raw = f.read(MAX_TEXT_BYTES + 1)          # subtle: bounded, a gzip bomb stops here
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{path} is not a valid gzip file: {exc}") from None
        if len(raw) > MAX_TEXT_BYTES:
            raise ValueError(f"{path} decompresses to more than {MAX_TEXT_BYTES:,} bytes, the "
                             f"limit for tokenizer files")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from None


def _tiktoken_family(path: Path) -> str | None:
    name = path.name.lower()
    families = (("cl100k", ("cl100k",)), ("o200k", ("o200k",)), ("gpt2", ("gpt2", "r50k")))
    for family, keys in families:
        if any(k in name for k in keys):
            return family
    return None


def read_tiktoken(path: Path, pattern=None) -> dict:
    """`base64 rank` lines -> kwargs (ranks rule; tiktoken looks a whole piece up first)."""
    encoder: dict[bytes, int] = {}
    for n, line in enumerate(_read_text(path).splitlines(), 1):
        if not line:
            continue
        fields = line.split()
        try:
            if len(fields) != 2 or not (fields[1].isascii() and fields[1].isdigit()):
                raise ValueError
            token, rank = base64.b64decode(fields[0], validate=True), int(fields[1])
        except (ValueError, IndexError, binascii.Error):
            raise ValueError(f"{path}:{n}: expected 'base64-token rank', "
                             f"got {line[:60]!r}") from None
        if token in encoder:
            raise ValueError(f"{path}:{n}: token {token!r} is listed twice (ranks "
                             f"{encoder[token]} and {rank})")
        encoder[token] = rank
    family = _tiktoken_family(path)
    if pattern is None and family is None:
        raise ValueError(f"cannot tell the split pattern of {path.name}: pass pattern= "
                         f"(a name such as 'gpt2', 'cl100k', 'o200k', or a regex)")
    return dict(encoder=encoder, merges=None, pattern=pattern or family,
                special_tokens=TIKTOKEN_SPECIALS.get(family, {}), whole_piece_lookup=True,
                eos_id=TIKTOKEN_SPECIALS.get(family, {}).get("<|endoftext|>"))


def read(path_or_name, pattern=None) -> dict:
    """A vendored name or a path -> Tokenizer kwargs (see the module docstring), validated
    (validate.py): a vocabulary that cannot be honoured is a ValueError naming the file."""
    source = str(path_or_name)
    path = locate(path_or_name)  # (its TypeError is about the argument, not the file)
    try:
        kw = _read(path, pattern)
        if path.suffix == ".gguf" or "pieces" in kw:   # checked by their readers (gguf_meta.py;
            return kw                                  # SentencePiece-style: spm_meta, hf_spm)
        return validated(kw, source, from_file=pattern is None)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:   # a field of the wrong type
        raise ValueError(f"{source}: malformed tokenizer file ({type(exc).__name__}: "
                         f"{shown(exc)})") from None
    except RecursionError:
        raise ValueError(f"{source}: nested too deeply") from None
    except ValueError as exc:            # every message names the file
        if source in str(exc):
            raise
        raise ValueError(f"{source}: {exc}") from None


def validated(kw: dict, source: str, from_file: bool = True) -> dict:
    """Check reader output ``kw`` (validate.py); patterns only when they came from the file."""
    check_vocabulary(kw["encoder"], kw["merges"], kw.get("special_tokens") or {}, source,
                     **{k: kw.get(k) for k in ("bos_id", "eos_id", "unk_id")})
    stages = kw["pattern"]
    stages = [stages] if isinstance(stages, str) else stages
    if from_file and stages is not None:
        check_patterns([s for s in stages if s not in KNOWN_STAGES and s not in NAMED_PATTERNS],
                       source)
    return kw


def _load_json(path: Path):
    text = _read_text(path)              # (its errors name the file already)
    try:
        return json.loads(text, object_pairs_hook=no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None


def _read(path: Path, pattern=None) -> dict:
    """A tokenizer file (`locate`'s answer) -> Tokenizer kwargs."""
    if path.name == "encoder.json":
        kw = read_gpt2_files(_load_json(path), _read_text(path.with_name("vocab.bpe")))
        return {**kw, "pattern": pattern or kw["pattern"]}
    if path.suffix == ".gguf":
        from minillm.io.gguf.read import read_gguf   # memory-mapped: only the metadata is read
        meta = read_gguf(path).metadata
        if "tokenizer.ggml.tokens" not in meta:
            raise ValueError(f"{path} carries no tokenizer (no tokenizer.ggml.* metadata)")
        return read_gguf_metadata(meta, pattern)
    if path.name.endswith((".tiktoken", ".tiktoken.gz")):
        return read_tiktoken(path, pattern)
    data = _load_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    if data.get("format") == FORMAT_NAME:
        kw = read_minillm(data)
    elif "model" in data:
        config_path = path.with_name("tokenizer_config.json")
        config = _load_json(config_path) if config_path.exists() else None
        if config is not None and not isinstance(config, dict):
            raise ValueError(f"{config_path}: expected a JSON object")
        kw = {**read_hf_json(data, config),
              "gguf_metadata": hf_chat_templates(config, path.parent)}   # kept for GGUF export
    else:
        raise ValueError(f"{path}: neither a Hugging Face tokenizer.json nor minillm's format")
    return {**kw, "pattern": pattern or kw["pattern"]}


FORMATS = ("hf", "minillm")


def write(tok, path, format: str | None = None, **options) -> None:
    """Save `tok`. `format=None` chooses by file name: `tokenizer.json` -> "hf" (Hugging Face's
    tokenizer.json + tokenizer_config.json beside it; `model_max_length=` goes into the config),
    any other name (e.g. `tokenizer.minillm.json`) -> "minillm". Both also write `path`.vocab."""
    path = Path(path)
    if format is None:
        format = "hf" if path.name == "tokenizer.json" else "minillm"
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS} (or None: by file name), got {format!r}")
    if format == "hf":
        write_hf(tok, path, **options)
    elif options:
        raise TypeError(f"minillm's format takes no options, got {sorted(options)}")
    else:
        write_minillm(tok, path)
    write_vocab_dump(tok, path.with_name(path.name + ".vocab"))


def write_vocab_dump(tok, path: Path) -> None:
    """"id<TAB>token" lines, the token shown readably (display.py): for people, not read back."""
    dump = [f"{i}\t{render_token(b)}" for i, b in enumerate(tok._id_to_bytes) if b is not None]
    atomic_write_text(path, "\n".join(dump) + "\n")
