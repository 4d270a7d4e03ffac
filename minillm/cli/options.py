"""What ``generate`` and ``chat`` share: finding a model by path or name, and sampling options."""
from __future__ import annotations

from pathlib import Path

from minillm.sampling import PRESETS


def resolve_model_path(name: str) -> Path:
    """A downloaded model's name (``smollm2``), a path as given, else a path relative to the
    repository (so ``weights/shakespeare`` works from any directory of a clone)."""
    import minillm
    from minillm.cli.download import resolve_model
    from minillm.resources import shipped_model
    path = resolve_model(name)
    if path.exists():
        return path
    repo_path = shipped_model(name) or Path(minillm.__file__).resolve().parents[1] / name
    if not path.is_absolute() and repo_path.exists():
        return repo_path
    raise FileNotFoundError(f"no model at {path.resolve()}" + ("" if path.is_absolute() else
                            f" nor at {repo_path}") + "; pass --model PATH (a checkpoint directory "
                            "or a .gguf file) or the name of a downloaded model (smollm2)")


def add_sampling_arguments(parser, default_preset: str | None = None) -> None:
    parser.add_argument("--preset", default=default_preset, choices=sorted(PRESETS),
                        help="sampling preset" + (f" (default: {default_preset})" if default_preset else ""))
    parser.add_argument("-t", "--temperature", type=float, help="T >= 0; 0 = greedy (overrides the preset)")
    parser.add_argument("--top-k", type=int, help="keep the k most likely tokens (0 = off)")
    parser.add_argument("--top-p", type=float, help="keep the smallest set with mass >= p (1 = off)")
    parser.add_argument("--min-p", type=float, help="keep tokens with p >= min_p · p_max (0 = off)")
    parser.add_argument("--seed", type=int, help="random seed: same seed, same text")


def sampling_kwargs(args) -> dict:
    """The sampling options that were given, as keyword arguments for ``generate`` / ``Chat``."""
    names = ("preset", "temperature", "top_k", "top_p", "min_p")
    return {n: getattr(args, n) for n in names if getattr(args, n) is not None}
