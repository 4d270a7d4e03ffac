"""What a re-export keeps: the GGUF metadata minillm read but does not compute itself.

A GGUF file says more than the weights and the vocabulary: the chat template llama.cpp formats a
conversation with, the model's name and licence (``general.*``), the padding id, whether BOS is
added... A file written from the model and tokenizer alone would lose them (llama.cpp then finds
no chat template). So loading keeps them, each with its GGUF type, on the object they describe,
and ``save_gguf`` writes them back::

    tokenizer.*       -> tokenizer.gguf_metadata   (a Hugging Face checkpoint: its chat template)
    everything else   -> model.gguf_metadata       (set by load_gguf_model)

    tok.gguf_metadata == {"tokenizer.chat_template": (STRING, "{% for message in messages %}..."),
                          "tokenizer.ggml.padding_token_id": (UINT32, 2), ...}

**Computed, never carried**: the keys the writer derives from the model and the tokenizer, so a
carried value can never contradict them. ``general.architecture``, ``general.file_type``,
``general.quantization_version``, ``general.alignment``; the architecture's shape keys
(``llama.*``, ``qwen2.*``, ``gpt2.*``); the vocabulary: ``tokenizer.ggml.`` ``model``, ``pre``,
``tokens``, ``token_type``, ``token_type_count``, ``merges``, ``scores`` and the BOS / EOS /
unknown ids.

To drop a key, delete it from the dict before exporting (``minillm export --drop-metadata KEY``).
Not carried: arrays of arrays (GGUF allows them, no model llama.cpp runs has one, and the reader
keeps no element types for the inner arrays).
"""
from __future__ import annotations

from pathlib import Path

from minillm.io.gguf.write import ARRAY, STRING

ARCH_PREFIXES = ("llama.", "qwen2.", "gpt2.")       # the architectures minillm reads and writes
COMPUTED = {"general.architecture", "general.file_type", "general.quantization_version",
            "general.alignment"} | {f"tokenizer.ggml.{k}" for k in (
                "model", "pre", "tokens", "token_type", "token_type_count", "merges", "scores",
                "bos_token_id", "eos_token_id", "unknown_token_id")}


def is_computed(key: str, arch: str | None = None) -> bool:
    """Does the writer derive ``key`` from the model or tokenizer (so it is never carried)?
    ``arch``: the source file's architecture, whose shape keys are computed too."""
    prefixes = ARCH_PREFIXES + ((f"{arch}.",) if isinstance(arch, str) else ())
    return key in COMPUTED or key.startswith(prefixes)


def carried(meta) -> tuple[dict, dict]:
    """A file's metadata as read (``gguf.Metadata``, which knows each value's type) -> (the model's
    keys, the tokenizer's keys), ``{key: (GGUF type, value)}`` as the writer takes them. A plain
    dict has lost the types: nothing is carried from it."""
    types = getattr(meta, "types", None)
    model, tokenizer = {}, {}
    if types is None:
        return model, tokenizer
    arch = meta.get("general.architecture")
    for key, v in meta.items():
        vtype, etype = types[key]
        if is_computed(key, arch) or etype == ARRAY:
            continue
        typed = (vtype, (etype, v) if vtype == ARRAY else v)
        (tokenizer if key.startswith("tokenizer.") else model)[key] = typed
    return model, tokenizer


def hf_chat_templates(config: dict | None, folder: Path) -> dict:
    """A Hugging Face checkpoint's chat template(s) as GGUF keys, as llama.cpp's converter writes
    them. ``tokenizer_config.json``'s ``chat_template``: a string -> ``tokenizer.chat_template``;
    a list of ``{"name", "template"}`` -> "default" as ``tokenizer.chat_template``, the others as
    ``tokenizer.chat_template.NAME``. Without one, ``chat_template.jinja`` beside it (what newer
    transformers save)."""
    template = (config or {}).get("chat_template")
    jinja = folder / "chat_template.jinja"
    if template is None and jinja.is_file():
        template = jinja.read_text(encoding="utf-8")
    if template is None:
        return {}
    if isinstance(template, str):
        return {"tokenizer.chat_template": (STRING, template)}
    if not isinstance(template, list) or not all(
            isinstance(t, dict) and isinstance(t.get("name"), str)
            and isinstance(t.get("template"), str) for t in template):
        raise ValueError("tokenizer_config.json: chat_template must be a string or a list of "
                         "{\"name\": str, \"template\": str} objects")
    return {"tokenizer.chat_template" + ("" if t["name"] == "default" else f".{t['name']}"):
            (STRING, t["template"]) for t in template}


def checked(carried_keys: dict, owner: str) -> dict:
    """``model.gguf_metadata`` / ``tokenizer.gguf_metadata`` as the writer will write it, refusing a
    key the writer computes (it would contradict the model) or a value without its GGUF type."""
    for key, typed in carried_keys.items():
        if not isinstance(key, str) or is_computed(key):
            raise ValueError(f"{owner}.gguf_metadata holds {key!r}, which the writer computes "
                             f"from the model and tokenizer; remove it")
        if not (isinstance(typed, tuple) and len(typed) == 2 and type(typed[0]) is int):
            raise ValueError(f"{owner}.gguf_metadata[{key!r}] must be (GGUF type, value), got "
                             f"{typed!r:.80}")
    return carried_keys


def drop(model, tokenizer, keys) -> None:
    """Remove ``keys`` (exact keys, or prefixes ending in ``*``: ``general.*``) from what the model
    and tokenizer carry; a key that matches nothing carried is a ValueError naming what is."""
    dicts = [d for d in (getattr(model, "gguf_metadata", None),
                         getattr(tokenizer, "gguf_metadata", None)) if d]
    for pattern in keys:
        prefix = pattern[:-1] if pattern.endswith("*") else None
        hits = [(d, k) for d in dicts for k in d
                if (k.startswith(prefix) if prefix is not None else k == pattern)]
        if not hits:
            names = sorted(k for d in dicts for k in d)
            raise ValueError(f"--drop-metadata {pattern!r} matches no carried key; carried: "
                             f"{', '.join(names) or 'none'}")
        for d, k in hits:
            del d[k]
