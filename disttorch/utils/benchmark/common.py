"""What a benchmark measured: :class:`TaskSpec` (the statement and its labels) and
:class:`Measurement` (its times), with the unit and significant-figure helpers."""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..._public_name import package_name

__all__ = ["Measurement", "TaskSpec", "select_unit", "trim_sigfig", "unit_to_english"]

_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def select_unit(t: float) -> tuple[str, float]:
    """The unit (``"ns"``, ``"us"``, ``"ms"`` or ``"s"``) showing ``t`` seconds as a number
    from 1 to 999, and its scale in seconds."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3) if t > 0 else -3, "s")
    return unit, _UNITS[unit]


def unit_to_english(u: str) -> str:
    """``"us"`` -> ``"microsecond"`` and so on."""
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (``3.14159, 2 -> 3.1``)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10.0 ** (math.ceil(math.log10(abs(x))) - n)
    return float(np.round(x / scale) * scale)


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What a :class:`Timer` runs: statement, setup and the labels a table groups by."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the one-line statement), with the sub-label."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        """The setup as shown in a repr ("" for none)."""
        if self.setup in ("pass", ""):
            return ""
        return (
            f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"
        )

    def summarize(self) -> str:
        """Title, description and setup, one block each."""
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(f"{p}\n" if "\n" in p else p for p in parts)


@dataclasses.dataclass(repr=False)
class Measurement:
    """Times of ``number_per_run`` runs of a statement, one entry of ``raw_times`` per block.

    ``times`` are per run; ``median``, ``mean`` and ``iqr`` are over them. The fields of the
    :class:`TaskSpec` (``stmt``, ``label``, ``num_threads``, ...) read through.
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        if name in {f.name for f in dataclasses.fields(TaskSpec)}:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list[float]:
        """Seconds per run of each block."""
        return [t / self.number_per_run for t in self.raw_times]

    def _quantile(self, q: float) -> float:
        return float(np.quantile(np.asarray(self.times, dtype=np.float64), q))

    @property
    def median(self) -> float:
        return self._quantile(0.5)

    @property
    def mean(self) -> float:
        return float(np.mean(self.times))

    @property
    def iqr(self) -> float:
        return self._quantile(0.75) - self._quantile(0.25)

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the IQR is under ``threshold`` of the median."""
        return self.iqr / self.median < threshold

    @property
    def significant_figures(self) -> int:
        """Figures the middle half of the times supports (1 to 4), from a 90% interval."""
        ordered = sorted(self.times)
        middle = ordered[len(ordered) // 4 : math.ceil(3 * len(ordered) / 4)]
        interval = max(1.645 * float(np.std(middle)) / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        return min(max(math.floor(math.log10(self.median / interval)), 1), _MAX_SIGNIFICANT_FIGURES)

    def _warnings(self) -> list[str]:
        if self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            if self.meets_confidence(_IQR_WARN_THRESHOLD):
                return []
            why = "This could indicate system fluctuation."
        else:
            why = "This suggests significant environmental influence."
        share = self.iqr / self.median * 100
        return [
            f"  WARNING: Interquartile range is {share:.1f}% of the median measurement.\n           {why}"
        ]

    @property
    def has_warnings(self) -> bool:
        return bool(self._warnings())

    def __repr__(self) -> str:
        n = len(self.raw_times)
        unit, scale = select_unit(self.median)
        head = object.__repr__(self)
        if package_name() == "torch":  # under the alias, PyTorch's module path
            head = f"<torch.utils.benchmark.utils.common.Measurement object at {id(self):#x}>"
        lines = [head, self.task_spec.summarize()]
        lines.append(f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}")
        if n >= 4:
            p25, p75 = self._quantile(0.25) / scale, self._quantile(0.75) / scale
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({p25:.2f} to {p75:.2f})")
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        runs = f"{self.number_per_run} runs {'per measurement,' if n > 1 else ','}"
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {runs} {threads}")
        lines.extend(self._warnings())
        return "\n".join(line for line in "\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """One measurement per task, the replicates' per-run times pooled (``number_per_run`` 1)."""
        pooled: dict[TaskSpec, list[float]] = {}
        for m in measurements:
            pooled.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(1, times, spec) for spec, times in pooled.items()]
