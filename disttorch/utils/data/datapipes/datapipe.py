"""``IterDataPipe``: an ``IterableDataset`` that restarts its state (``reset``) each time a
new iteration begins, with the functional form ``dp.shuffle()``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..dataset import IterableDataset

__all__ = ["IterDataPipe"]


class IterDataPipe(IterableDataset):
    """An iterable DataPipe: subclasses define ``__iter__`` and may define ``reset``, which
    runs before every new iteration (as PyTorch's hook does)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__iter__" in cls.__dict__:
            inner = cls.__dict__["__iter__"]

            def __iter__(self: IterDataPipe) -> Iterator:  # noqa: N807
                self.reset()
                return inner(self)

            __iter__.__doc__ = inner.__doc__
            cls.__iter__ = __iter__

    def reset(self) -> None:
        """Restart any state before a new iteration (nothing by default)."""

    def shuffle(self, *, buffer_size: int = 10000) -> IterDataPipe:
        """This DataPipe's items through a shuffling buffer of ``buffer_size``."""
        from .iter.combinatorics import ShufflerIterDataPipe

        return ShufflerIterDataPipe(self, buffer_size=buffer_size)
