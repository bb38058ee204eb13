"""``Compare``: measurements laid out in tables, one per label: a row per sub-label (grouped
by thread count), a column per description, each cell the median in one shared unit."""

from __future__ import annotations

import math

from .common import Measurement, select_unit, trim_sigfig, unit_to_english

__all__ = ["Compare"]


class Compare:
    """Tables of ``results`` (a list of :class:`Measurement`); ``print()`` or ``str()``.

    Replicates of one task are pooled first (:meth:`Measurement.merge`). ``colorize`` is
    accepted and draws no colour.
    """

    def __init__(self, results: list[Measurement]) -> None:
        self._results: list[Measurement] = []
        self._trim = False
        self.extend_results(results)

    def extend_results(self, results: list[Measurement]) -> None:
        """Add more measurements."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Show each cell with the figures its spread supports."""
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        """Accepted for PyTorch's API; the tables stay plain text."""

    def highlight_warnings(self) -> None:
        """Accepted for PyTorch's API; cells are not marked."""

    def print(self) -> None:
        print(str(self))

    def __str__(self) -> str:
        groups: dict[str | None, list[Measurement]] = {}
        for m in Measurement.merge(self._results):
            groups.setdefault(m.label, []).append(m)
        return "\n".join(self._table(label, ms) for label, ms in groups.items())

    def _table(self, label: str | None, results: list[Measurement]) -> str:
        unit, scale = select_unit(min(m.median for m in results))
        rows = list(dict.fromkeys((m.num_threads, m.env, m.as_row_name) for m in results))
        rows.sort(key=lambda k: (k[0], k[1] or ""))
        cols = list(dict.fromkeys(m.description for m in results))
        cell = {((m.num_threads, m.env, m.as_row_name), m.description): m for m in results}
        digits = [math.ceil(math.log10(m.median / scale)) for m in results]
        decimals = (
            min(max(m.significant_figures - d, 0) for m, d in zip(results, digits)) if self._trim else 1
        )
        width = max(digits) + decimals + (1 if decimals else 0)

        def number(m: Measurement | None) -> str:
            if m is None:
                return " " * width
            value = m.median / scale
            return (
                f"{trim_sigfig(value, m.significant_figures) if self._trim else value:>{width}.{decimals}f}"
            )

        envs = {m.env for m in results}
        env_width = max(len(e) for e in envs) + 4 if len(envs) > 1 else 4
        table = [[""] + [c or "" for c in cols]]
        prior_env = None
        for key in rows:
            env = f"({key[1]})" if len(envs) > 1 and key[1] != prior_env else ""
            prior_env = key[1]
            table.append(["  " + env.ljust(env_width) + key[2]] + [number(cell.get((key, c))) for c in cols])
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        header = "  |  ".join(s.center(w) for s, w in zip(table[0], widths))
        lines = [header]
        prior_threads = None
        for key, row in zip(rows, table[1:]):
            if key[0] != prior_threads:
                lines.append(f"{key[0]} threads: ".ljust(len(header), "-"))
                prior_threads = key[0]
            lines.append(
                "  |  ".join([row[0].ljust(widths[0])] + [s.center(w) for s, w in zip(row[1:], widths[1:])])
            )
        title = f"[{(' ' + (label or '') + ' ').center(len(header) - 2, '-')}]"
        return "\n".join([title, *lines, "", f"Times are in {unit_to_english(unit)}s ({unit}).", ""])
