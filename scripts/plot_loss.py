"""Plot a training log (train_log.jsonl written by ``minillm train``) as loss_curve.png.

    python scripts/plot_loss.py weights/shakespeare [weights/songci ...]

Development tool (matplotlib is not a minillm dependency): the PNG is a committed artefact.
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot(directory: Path) -> Path:
    records = [json.loads(line) for line in (directory / "train_log.jsonl").read_text().splitlines()
               if line.strip()]
    steps = [r["step"] for r in records if "loss" in r]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(steps, [r["loss"] for r in records if "loss" in r], lw=1, label="train (mean over 10 steps)")
    val = [(r["step"], r["val_loss"]) for r in records if "val_loss" in r and not r.get("final")]
    ax.plot(*zip(*val), "o-", ms=3, label="validation (held-out windows)")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats / token)")
    ax.set_title(f"minillm train: {directory.name}")
    ax.set_ylim(top=min(ax.get_ylim()[1], records[0]["loss"] + 0.5))
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out = directory / "loss_curve.png"
    fig.savefig(out)
    return out


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(plot(Path(arg)))
