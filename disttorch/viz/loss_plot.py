"""Draw per-rank loss curves from the metrics an example wrote with ``--log-metrics DIR``.

Each rank's loss is on its own shard of the data, so the curves differ in their noise
but follow the same trend: the model (identical on every rank) is the same, only the
batches differ. A light line shows every step, a dark one a moving average.

Needs matplotlib (``pip install 'disttorch[plot]'``); imported only when drawing.
"""

from __future__ import annotations

import os

import numpy as np

from .metrics import read_metrics

__all__ = ["plot_loss"]


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    """The mean of the last ``window`` values at each point (fewer at the start)."""
    csum = np.cumsum(np.insert(values.astype(np.float64), 0, 0.0))
    idx = np.arange(1, len(values) + 1)
    lo = np.maximum(idx - window, 0)
    return (csum[idx] - csum[lo]) / (idx - lo)


def plot_loss(
    directory: str | os.PathLike, out: str | os.PathLike, key: str = "loss", title: str | None = None
) -> str:
    """Render every rank's ``key`` against ``step`` to the PNG ``out``; returns ``out``.

    Args:
        directory: the ``--log-metrics`` directory holding ``rank<k>.jsonl``.
        out: the PNG to write.
        key: the value to plot (default ``"loss"``).
        title: the figure's title.

    Raises:
        ValueError: no record holds ``key``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = read_metrics(directory)
    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=110)
    colours = plt.get_cmap("tab10")
    plotted = 0
    for rank, records in sorted(runs.items()):
        points = [(r["step"], r[key]) for r in records if key in r and "step" in r]
        if not points:
            continue
        steps, values = (np.array(v, dtype=np.float64) for v in zip(*points))
        colour = colours(rank % 10)
        ax.plot(steps, values, color=colour, alpha=0.25, linewidth=0.8)
        ax.plot(
            steps,
            moving_average(values, max(1, len(values) // 20)),
            color=colour,
            linewidth=1.8,
            label=f"rank {rank}",
        )
        plotted += 1
    if not plotted:
        raise ValueError(f"no record in {os.fspath(directory)!r} has both 'step' and {key!r}")
    ax.set_xlabel("step")
    ax.set_ylabel(key)
    if key == "loss":
        ax.set_yscale("log")
    ax.grid(True, which="both", color="#EEEEEE")
    ax.legend(frameon=False)
    ax.set_title(
        title or f"{key} on each rank's own batches (light: every step, dark: moving average)", fontsize=10
    )
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return os.fspath(out)
