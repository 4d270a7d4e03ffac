"""Draw the course map: which notebook teaches which step of the pipeline, as notebooks/course_map.svg.

    python scripts/make_course_map.py           # (re)draw it after adding or renaming a notebook

The steps run left to right as the text does (text → tokens → vectors → blocks → logits → the
next token → the loop → ...); under each step, the notebooks that teach it, titled from the first
heading of their sources (``# NN · Title``). Notebook 14 rebuilds every part, so it spans the row.
A notebook missing from STEP_OF is an error: a new notebook needs its place on the map.

The SVG keeps its text as text (small, and searchable) and carries no date, so the same
notebooks give the same file with the same matplotlib.
"""
from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCES = REPO / "scripts" / "notebook_sources"
TARGET = REPO / "notebooks" / "course_map.svg"

# the pipeline, in the order a token meets it
STEPS = ["text → tokens", "tokens → vectors\n(+ positions)", "attention and\nblocks", "logits → the\nnext token",
         "the loop and\nthe KV cache", "the window:\ncost, options,\nreasoning", "training",
         "speed"]
# notebook number -> the step it teaches; "all" spans every step
STEP_OF = {"01": 0, "02": 1, "03": 2, "13": 2, "06": 3, "07": 3, "04": 4, "05": 4,
           "08": 5, "09": 5, "11": 5, "10": 6, "15": 6, "12": 7, "14": "all", "16": 2, "17": 3, "18": 2,
           "19": 6}


def notebooks() -> dict[str, str]:
    """{number: title} of every notebook source, from its first ``# NN · Title`` heading."""
    found = {}
    for path in sorted(SOURCES.glob("[0-9][0-9]_*.py")):
        heading = re.search(r"^# # (\d\d) · (.+)$", path.read_text(encoding="utf-8"), re.M)
        if heading is None:
            raise ValueError(f"{path.name} has no '# NN · Title' heading")
        found[heading.group(1)] = heading.group(2)
    return found


def draw(titles: dict[str, str]):
    """The map as a matplotlib figure: a row of steps joined by arrows, notebooks beneath."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    missing = sorted(set(titles) - set(STEP_OF))
    if missing:
        raise ValueError(f"notebooks {missing} have no step in STEP_OF: give each its place on the map")
    columns = {k: sorted(n for n in titles if STEP_OF[n] == k) for k in range(len(STEPS))}
    depth = max(len(c) for c in columns.values())
    width, gap = 1.9, 0.35                                   # box width and the space between steps
    fig, ax = plt.subplots(figsize=(len(STEPS) * 1.75, 2.2 + 1.05 * depth))
    for k, step in enumerate(STEPS):
        x = k * (width + gap)
        ax.add_patch(plt.Rectangle((x, 0), width, 1, color="#dbe8f5"))
        ax.text(x + width / 2, 0.5, step, ha="center", va="center", fontsize=8.5, weight="bold")
        if k:
            ax.annotate("", (x, 0.5), (x - gap, 0.5), arrowprops=dict(arrowstyle="->", lw=1.2))
        for row, number in enumerate(columns[k]):
            y = -0.25 - 1.05 * (row + 1)
            ax.add_patch(plt.Rectangle((x, y), width, 0.9, fill=False, lw=0.8))
            ax.text(x + 0.08, y + 0.72, number, fontsize=9, weight="bold", va="center")
            ax.text(x + width / 2, y + 0.36, textwrap.fill(titles[number], 26), ha="center",
                    va="center", fontsize=6.5)
    total = len(STEPS) * (width + gap) - gap
    bottom = -0.25 - 1.05 * (depth + 1)
    for number in (n for n in titles if STEP_OF[n] == "all"):
        ax.add_patch(plt.Rectangle((0, bottom), total, 0.8, color="#f5e6cc"))
        ax.text(0.08, bottom + 0.4, number, fontsize=9, weight="bold", va="center")
        ax.text(total / 2, bottom + 0.4, f"{titles[number]}: every part above, written by you and "
                f"checked as it runs", ha="center", va="center", fontsize=8)
        bottom -= 0.95
    ax.set_xlim(-0.1, total + 0.1)
    ax.set_ylim(bottom + 0.8 - 0.1, 1.1)
    ax.axis("off")
    ax.set_title("The course map: each step of the pipeline and the notebooks that teach it", fontsize=10)
    fig.tight_layout()
    return fig


def main() -> int:
    import matplotlib
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "course-map"})
    fig = draw(notebooks())
    fig.savefig(TARGET, format="svg", metadata={"Date": None})
    print(f"wrote {TARGET.relative_to(REPO)} ({TARGET.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
