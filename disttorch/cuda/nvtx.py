"""``torch.cuda.nvtx``: NVIDIA Tools Extension ranges and marks, as a CPU build answers them:
every call raises (``RuntimeError`` for the functions it stubs, ``AttributeError`` for the
range handles), and ``range`` raises on entering its ``with`` block."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

__all__ = ["mark", "range", "range_end", "range_pop", "range_push", "range_start"]

_NOT_INSTALLED = "NVTX functions not installed. Are you sure you have a CUDA build?"


def _stub_missing(name: str) -> NoReturn:
    raise AttributeError(f"'_NVTXStub' object has no attribute '{name}'")


def range_push(msg: str) -> int:
    """Open a nested range named ``msg`` (no NVTX here: ``RuntimeError``)."""
    raise RuntimeError(_NOT_INSTALLED)


def range_pop() -> int:
    """Close the innermost range (no NVTX here: ``RuntimeError``)."""
    raise RuntimeError(_NOT_INSTALLED)


def mark(msg: str) -> None:
    """An instantaneous event named ``msg`` (no NVTX here: ``RuntimeError``)."""
    raise RuntimeError(_NOT_INSTALLED)


def range_start(msg: str) -> int:
    """Start a range that may span threads (no NVTX here: ``AttributeError``)."""
    _stub_missing("rangeStartA")


def range_end(range_id: int) -> None:
    """End a range started by ``range_start`` (no NVTX here: ``AttributeError``)."""
    _stub_missing("rangeEnd")


@contextmanager
def range(msg: str, *args: Any, **kwargs: Any) -> Iterator[None]:  # noqa: A001 (PyTorch's name)
    """``with range(msg):`` brackets the block with ``range_push``/``range_pop``."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
