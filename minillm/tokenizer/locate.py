"""What `Tokenizer.load(x)` accepts, and which file `x` stands for.

    "gpt2", "r50k", "cl100k", "o200k" (and tiktoken's names)   the vocabularies shipped with
                                                              minillm (minillm/resources.py)
    "smollm2", "deepseek-v4"                                  downloaded with
                                                              `python -m minillm download NAME`
    a model folder                                            the tokenizer file it carries
                                                              (TOKENIZER_FILES, in that order)
    a file                                                    .tiktoken(.gz), tokenizer.json
                                                              (Hugging Face or minillm's format),
                                                              .gguf (the metadata only)

A name is a name even where a folder of that name exists: write "./gpt2" for the folder.

>>> locate("gpt2").name
'gpt2.tiktoken.gz'
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from minillm.io.bounded import probe, shown
from minillm.resources import shipped

# name -> vendored file under weights/ (see weights/gpt2/README.md, weights/tokenizers/README.md)
NAMED = {"gpt2": "gpt2/gpt2.tiktoken.gz", "r50k": "gpt2/gpt2.tiktoken.gz",
         "cl100k": "tokenizers/cl100k_base.tiktoken.gz",
         "o200k": "tokenizers/o200k_base.tiktoken.gz"}
NAMED.update({"r50k_base": NAMED["r50k"], "cl100k_base": NAMED["cl100k"],
              "o200k_base": NAMED["o200k"]})  # tiktoken's names
# names of `python -m minillm download NAME`: their files are where io/download.py's MODELS say
DOWNLOADED = ("smollm2", "deepseek-v4")
MINILLM_FILE = "tokenizer.minillm.json"   # minillm's own readable format, in a model folder
# Tokenizer files a model folder may carry, in the order they are tried.
TOKENIZER_FILES = ("tokenizer.json", MINILLM_FILE, "tokenizer.json.gz", "encoder.json")


def tokenizer_file(directory: Path) -> Path | None:
    """The tokenizer file a model folder carries (encoder.json counts only with vocab.bpe).
    subtle: anything under the name counts, so that a device or a folder named tokenizer.json
    is refused when read (bounded.py), not silently passed over for the next name."""
    for name in TOKENIZER_FILES:
        candidate = directory / name
        if probe(candidate) and (name != "encoder.json" or probe(directory / "vocab.bpe")):
            return candidate
    return None


def locate(path_or_name) -> Path:
    """A name, a folder or a file -> the tokenizer file it stands for (see the docstring)."""
    if not isinstance(path_or_name, (str, os.PathLike)):
        raise TypeError(f"expected a tokenizer name or a path, got {type(path_or_name).__name__}")
    if isinstance(path_or_name, str) and path_or_name in NAMED:  # (a folder named so: "./gpt2")
        return shipped(NAMED[path_or_name])
    if isinstance(path_or_name, str) and path_or_name in DOWNLOADED:
        # every file of the download checked against its sha256 (deepseek-v4's
        # tokenizer_config.json too: it names the EOS), or an error naming the command to run
        from minillm.io.download import verified_download   # (the cache: $MINILLM_HOME, ...)
        return verified_download(path_or_name)
    path = Path(path_or_name)
    found = probe(path)                      # (a 5,000-character name: a ValueError here)
    if found and stat.S_ISDIR(found.st_mode):
        tokenizer = tokenizer_file(path)
        if tokenizer is None:
            raise ValueError(f"{path} is a folder without a tokenizer: expected one of "
                             f"{', '.join(TOKENIZER_FILES[:-1])} or encoder.json + vocab.bpe")
        return tokenizer
    if found:                                # a file (a device or FIFO is refused when read)
        return path
    raise FileNotFoundError(
        f"no tokenizer {shown(path_or_name)!r}: it is not a file, a folder or a known name. "
        f"Accepted: the named tokenizers shipped with minillm ({', '.join(NAMED)}); a downloaded "
        f"one ({', '.join(DOWNLOADED)}: `python -m minillm download NAME`); a model folder (with "
        f"{' or '.join(TOKENIZER_FILES[:-1])} or encoder.json + vocab.bpe); a .tiktoken(.gz), "
        f"tokenizer.json or .gguf file")
