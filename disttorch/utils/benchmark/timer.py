"""``Timer``: run a Python statement many times and return a :class:`Measurement`."""

from __future__ import annotations

import enum
import sys
import textwrap
import time
import timeit
from collections.abc import Callable
from typing import Any

from ... import _threads
from .common import Measurement, TaskSpec

__all__ = ["Language", "Timer"]


class Language(enum.Enum):
    """The language of a statement; only Python is timed here."""

    PYTHON = 0
    CPP = 1


class Timer:
    """Time ``stmt`` (run after ``setup``) in a namespace holding ``globals`` (and ``torch``,
    this library, unless ``globals`` names another), with the library's thread count set to
    ``num_threads`` while timing.

    ``label``, ``sub_label``, ``description`` and ``env`` only label the result (for
    :class:`Compare`). ``timer`` is the clock (default ``time.perf_counter``).
    """

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = time.perf_counter,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Timer: only Python statements can be timed here, got language={language!r}")
        stmt, setup = textwrap.dedent(stmt).strip() or "pass", textwrap.dedent(setup).strip() or "pass"
        self._task_spec = TaskSpec(stmt, setup, global_setup, label, sub_label, description, env, num_threads)
        namespace = dict(globals or {})
        namespace.setdefault("torch", sys.modules[__name__.split(".")[0]])  # as PyTorch's, for convenience
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=namespace)

    def _timeit(self, number: int) -> float:
        """Seconds for ``number`` runs under the set thread count (0 runs: the loop's own
        cost), at least 1 ns."""
        before = _threads.get_num_threads()
        _threads.set_num_threads(self._task_spec.num_threads)
        try:
            return max(self._timer.timeit(int(number)), 1e-9)
        finally:
            _threads.set_num_threads(before)

    def _measure(self, number: int, times: list[float]) -> Measurement:
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of ``number`` runs, after a warm-up of ``number // 100`` (at least 2)."""
        self._timeit(max(number // 100, 2))
        return self._measure(number, [self._timeit(number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], Any] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        """Runs per block: ten-fold steps until a block takes a thousandth of ``min_run_time``
        (and the clock's own cost is under 1e-4 of it), or more than ``min_run_time``."""
        overhead = sorted(self._timeit(0) for _ in range(5))[2]
        number = 1
        while True:
            taken = self._timeit(number)
            if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                return number
            if number * 10 > 2147483647:
                return number
            number *= 10

    def blocked_autorange(
        self, callback: Callable[[int, float], Any] | None = None, min_run_time: float = 0.2
    ) -> Measurement:
        """Blocks of a size found first, until ``min_run_time`` seconds have been timed;
        ``callback(number, seconds)`` after each block."""
        number = self._block_size(min_run_time)
        times: list[float] = []
        while sum(times) < min_run_time:
            times.append(self._timeit(number))
            if callback is not None:
                callback(number, times[-1])
        return self._measure(number, times)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], Any] | None = None,
    ) -> Measurement:
        """Blocks until the IQR is under ``threshold`` of the median (after ``min_run_time``
        and at least 3 blocks) or ``max_run_time`` seconds have been timed."""
        number = self._block_size(min_run_time=0.05)
        times: list[float] = []
        while True:
            times.append(self._timeit(number))
            if callback is not None:
                callback(number, times[-1])
            spent = sum(times)
            if spent >= max_run_time:
                break
            if (
                spent >= min_run_time
                and len(times) > 3
                and self._measure(number, times).meets_confidence(threshold)
            ):
                break
        return self._measure(number, times)

    def collect_callgrind(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "Timer.collect_callgrind needs valgrind and a C++ toolchain; not available here"
        )
