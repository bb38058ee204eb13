"""``ShufflerIterDataPipe``: a shuffling buffer, PyTorch's algorithm and seeding."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sized
from typing import Any

from ..... import _creation, _dtype
from ..datapipe import IterDataPipe, functional_datapipe

__all__ = ["ShufflerIterDataPipe"]


@functional_datapipe("shuffle")
class ShufflerIterDataPipe(IterDataPipe):
    """Items of ``datapipe`` shuffled through a buffer of ``buffer_size``: once the buffer is
    full, each new item replaces a random one, which is yielded; the rest come out in
    random order at the end. Each iteration seeds a ``random.Random`` from ``set_seed`` or
    else from disttorch's global generator (so ``manual_seed`` fixes the order, as in
    PyTorch); ``set_shuffle(False)`` passes the items through in order."""

    def __init__(self, datapipe: Any, *, buffer_size: int = 10000, unbatch_level: int = 0) -> None:
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        if unbatch_level != 0:
            raise NotImplementedError("ShufflerIterDataPipe: unbatch_level is not supported")
        self.datapipe, self.buffer_size = datapipe, buffer_size
        self._buffer: list = []
        self._enabled = True
        self._seed: int | None = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle: bool = True) -> ShufflerIterDataPipe:
        self._enabled = shuffle
        return self

    def set_seed(self, seed: int) -> ShufflerIterDataPipe:
        self._seed = seed
        return self

    def reset(self) -> None:
        self._buffer = []
        if self._enabled:
            if self._seed is None:
                self._seed = int(_creation.empty((), dtype=_dtype.int64).random_().item())
            self._rng.seed(self._seed)
            self._seed = None

    def __iter__(self) -> Iterator[Any]:
        if not self._enabled:
            yield from self.datapipe
            return
        for x in self.datapipe:
            if len(self._buffer) == self.buffer_size:
                i = self._rng.randint(0, len(self._buffer) - 1)
                value, self._buffer[i] = self._buffer[i], x
                yield value
            else:
                self._buffer.append(x)
        while self._buffer:
            yield self._buffer.pop(self._rng.randint(0, len(self._buffer) - 1))

    def __len__(self) -> int:
        if isinstance(self.datapipe, Sized):
            return len(self.datapipe)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
