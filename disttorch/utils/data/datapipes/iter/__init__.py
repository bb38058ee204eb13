"""Iterable DataPipes: ``IterableWrapper`` and ``Shuffler``."""

from .combinatorics import ShufflerIterDataPipe as Shuffler
from .utils import IterableWrapperIterDataPipe as IterableWrapper

__all__ = ["IterableWrapper", "Shuffler"]
