"""``Compare``: measurements laid out in tables, one per label: a row per sub-label (grouped
by thread count), a column per description, each cell the median in one shared unit."""

from __future__ import annotations

import math
from collections.abc import Callable

from .common import Measurement, select_unit, trim_sigfig, unit_to_english

__all__ = ["Compare"]


#: ANSI colours of ``colorize()``'s cells, as PyTorch's
_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _END = "\033[1m", "\033[0m"


def _colored(cell: str, value: float, best: float) -> str:
    """``cell`` coloured by how far ``value`` is from the best of its group."""
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + cell + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + cell + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + cell + _END * 2
    if value >= best * 2:
        return _BAD + cell + _END * 2
    return cell


class Compare:
    """Tables of ``results`` (a list of :class:`Measurement`); ``print()`` or ``str()``.

    Replicates of one task are pooled first (:meth:`Measurement.merge`). ``colorize()``
    colours each cell by its distance from the best of its column within a thread count (or
    of its row), ``highlight_warnings()`` marks cells of high variance, as PyTorch's.
    """

    def __init__(self, results: list[Measurement]) -> None:
        self._results: list[Measurement] = []
        self._trim = False
        self._colorize: str | None = None  # "columnwise" or "rowwise"
        self._highlight = False
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
        """Colour the cells (ANSI), against the best of each column (of each row: ``rowwise``)."""
        self._colorize = "rowwise" if rowwise else "columnwise"

    def highlight_warnings(self) -> None:
        """Mark the cells of measurements with high variance (``(! XX%)``)."""
        self._highlight = True

    def print(self) -> None:
        print(str(self))

    def __str__(self) -> str:
        groups: dict[str | None, list[Measurement]] = {}
        for m in Measurement.merge(self._results):
            groups.setdefault(m.label, []).append(m)
        return "\n".join(self._table(label, ms) for label, ms in groups.items())

    def _column_format(self, column: list[Measurement], scale: float) -> Callable[[Measurement | None], str]:
        """The cell text of one column's measurements (None: blank, as wide)."""
        digits = [math.ceil(math.log10(m.median / scale)) for m in column]
        decimals = min(max(m.significant_figures - d, 0) for m, d in zip(column, digits)) if self._trim else 1
        width = max(digits) + decimals + (1 if decimals else 0)
        marked = self._highlight and any(m.has_warnings for m in column)

        def cell(m: Measurement | None) -> str:
            if m is None:
                return " " * (width + (7 if marked else 0))
            value = m.median / scale
            text = (
                f"{trim_sigfig(value, m.significant_figures) if self._trim else value:>{width}.{decimals}f}"
            )
            if marked:
                text += f"{f' (! {m.iqr / m.median * 100:.0f}%)' if m.has_warnings else '':>7}"
            return text

        return cell

    def _table(self, label: str | None, results: list[Measurement]) -> str:
        unit, scale = select_unit(min(m.median for m in results))
        rows = list(dict.fromkeys((m.num_threads, m.env, m.as_row_name) for m in results))
        rows.sort(key=lambda k: (k[0], k[1] or ""))
        cols = list(dict.fromkeys(m.description for m in results))
        cell = {((m.num_threads, m.env, m.as_row_name), m.description): m for m in results}
        formats = [self._column_format([m for m in results if m.description == c], scale) for c in cols]
        grid = [[cell.get((key, c)) for c in cols] for key in rows]

        envs = {m.env for m in results}
        env_width = max(len(e) for e in envs) + 4 if len(envs) > 1 else 4
        table = [[""] + [c or "" for c in cols]]
        prior_env = None
        for key, found in zip(rows, grid):
            env = f"({key[1]})" if len(envs) > 1 and key[1] != prior_env else ""
            prior_env = key[1]
            table.append(["  " + env.ljust(env_width) + key[2]] + [f(m) for f, m in zip(formats, found)])
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        header = "  |  ".join(s.center(w) for s, w in zip(table[0], widths))
        lines = [header]
        prior_threads = None
        for key, row, found in zip(rows, table[1:], grid):
            if key[0] != prior_threads:
                lines.append(f"{key[0]} threads: ".ljust(len(header), "-"))
                prior_threads = key[0]
            best = self._best(key[0], found, rows, grid)
            cells = [s.center(w) for s, w in zip(row[1:], widths[1:])]
            if self._colorize is not None:
                cells = [
                    c if m is None or b is None else _colored(c, m.median, b)
                    for c, m, b in zip(cells, found, best)
                ]
            lines.append("  |  ".join([row[0].ljust(widths[0]), *cells]))
        title = f"[{(' ' + (label or '') + ' ').center(len(header) - 2, '-')}]"
        footer = [f"Times are in {unit_to_english(unit)}s ({unit})."]
        if self._highlight and any(m.has_warnings for m in results):
            footer.append("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.")
        return "\n".join([title, *lines, "", *footer, ""])

    def _best(self, threads: int, found: list, rows: list, grid: list) -> list[float | None]:
        """The value each cell of a row is coloured against: the least of its row, or of its
        column among the rows of the same thread count."""
        if self._colorize == "rowwise":
            least = min(m.median for m in found if m is not None)
            return [least] * len(found)
        group = [g for key, g in zip(rows, grid) if key[0] == threads]
        return [
            min((g[i].median for g in group if g[i] is not None), default=None) for i in range(len(found))
        ]
