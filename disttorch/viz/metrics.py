"""Per-rank training metrics as JSON lines, the input of ``disttorch-plot --metrics``.

    log = MetricsLog("metrics")           # writes metrics/rank<k>.jsonl (k = RANK)
    log.write(step=10, epoch=0, loss=0.41)
    log.close()

One file per rank, one JSON object per line, so ranks never share a file and a run that
is stopped half-way leaves every line it wrote readable.
"""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["MetricsLog", "read_metrics"]


class MetricsLog:
    """Appends ``{"rank": k, **values}`` lines to ``<directory>/rank<k>.jsonl``.

    Args:
        directory (str): where to write (created if missing).
        rank (int, optional): the rank; default ``$RANK`` or 0.
        append (bool): keep the lines of an earlier run (for a resumed run); default False.
    """

    def __init__(self, directory: str | os.PathLike, rank: int | None = None, append: bool = False) -> None:
        self.rank = int(os.environ.get("RANK", "0")) if rank is None else rank
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(os.fspath(directory), f"rank{self.rank}.jsonl")
        self._file = open(self.path, "a" if append else "w", encoding="utf-8")

    def write(self, **values: Any) -> None:
        """Write one line of values (numbers or strings)."""
        self._file.write(json.dumps({"rank": self.rank, **values}) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def read_metrics(directory: str | os.PathLike) -> dict[int, list[dict]]:
    """Every rank's lines from ``directory/rank<k>.jsonl``: ``{rank: [record, ...]}``.

    Raises:
        FileNotFoundError: the directory holds no ``rank<k>.jsonl`` file.
    """
    out: dict[int, list[dict]] = {}
    names = sorted(n for n in os.listdir(directory) if n.startswith("rank") and n.endswith(".jsonl"))
    for name in names:
        rank = int(name[4:-6])
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            lines = [line for line in f.read().split("\n") if line.strip()]
        try:
            out[rank] = [json.loads(line) for line in lines]
        except ValueError:  # a rank stopped in the middle of its last line: keep the whole ones
            out[rank] = [json.loads(line) for line in lines[:-1]]
    if not out:
        raise FileNotFoundError(
            f"no rank<k>.jsonl metrics files in {os.fspath(directory)!r}; "
            f"expected the directory an example wrote with --log-metrics"
        )
    return out
