"""``IterableWrapper``: any iterable as a DataPipe."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from typing import Any

from ..datapipe import IterDataPipe

__all__ = ["IterableWrapperIterDataPipe"]


class IterableWrapperIterDataPipe(IterDataPipe):
    """The items of ``iterable`` (a deep copy of it per iteration when ``deepcopy``, so
    changes to it during one pass do not leak into the next)."""

    def __init__(self, iterable: Iterable, deepcopy: bool = True) -> None:
        self.iterable, self.deepcopy = iterable, deepcopy

    def __iter__(self) -> Iterator[Any]:
        source = self.iterable
        if self.deepcopy:
            try:
                source = copy.deepcopy(self.iterable)
            except TypeError:  # not deep-copyable: iterate it as it is (PyTorch's fallback)
                pass
        yield from source

    def __len__(self) -> int:
        return len(self.iterable)
