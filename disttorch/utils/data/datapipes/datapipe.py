"""``IterDataPipe``: an ``IterableDataset`` that restarts its state (``reset``) each time a
new iteration begins; ``functional_datapipe(name)`` makes a DataPipe class callable as
``dp.<name>(...)`` (``dp.shuffle()``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..dataset import IterableDataset

__all__ = ["IterDataPipe", "functional_datapipe"]


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


def functional_datapipe(name: str) -> Callable[[type], type]:
    """Class decorator: ``dp.<name>(*args)`` builds ``cls(dp, *args)`` on every IterDataPipe."""

    def register(cls: type) -> type:
        def method(self: IterDataPipe, *args: Any, **kwargs: Any) -> Any:
            return cls(self, *args, **kwargs)

        method.__name__ = name
        method.__doc__ = cls.__doc__
        setattr(IterDataPipe, name, method)
        return cls

    return register
