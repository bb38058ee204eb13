"""``torch.distributed.algorithms.join``: ``Join``, the context manager for uneven inputs,
with ``Joinable`` and ``JoinHook``.

PyTorch's ``Join`` lets ranks that run out of data keep answering the collectives of the
ranks still training (DDP shadows their all-reduces). disttorch's DDP has no such shadowing,
so ``Join(..., enable=False)`` (what libraries pass when inputs are even) runs the block
unchanged and ``enable=True`` raises ``NotImplementedError`` instead of hanging a rank.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["Join", "JoinHook", "Joinable"]


class JoinHook:
    """What a joined rank runs in place of a ``Joinable``'s collectives (base: nothing)."""

    def main_hook(self) -> None:
        """Shadow one iteration of the collectives of the ranks not yet joined."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once every rank has joined."""


class Joinable(ABC):
    """A class whose collectives ``Join`` can shadow (PyTorch's DDP and ZeRO are)."""

    def __init__(self) -> None:
        super().__init__()

    @abstractmethod
    def join_hook(self, **kwargs: Any) -> JoinHook:
        """The hook a joined rank runs for this object."""

    @property
    @abstractmethod
    def join_device(self) -> Any:
        """The device of the join collectives."""

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        """The process group of the join collectives."""


class Join:
    """``with Join(joinables, enable=...):`` around a training loop with uneven inputs.

    Raises:
        NotImplementedError: with ``enable=True``: shadowing the collectives of joined
            ranks is not supported by disttorch (give every rank the same number of batches).
    """

    def __init__(
        self,
        joinables: list[Joinable],
        enable: bool = True,
        throw_on_early_termination: bool = False,
        **kwargs: Any,
    ) -> None:
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables, self._enable = list(joinables), enable
        self._throw_on_early_termination = throw_on_early_termination
        self._kwargs = kwargs

    def __enter__(self) -> Join:
        if self._enable:
            raise NotImplementedError(
                "torch.distributed.algorithms.join.Join(enable=True) is not supported by disttorch: "
                "its DDP cannot shadow the collectives of ranks that ran out of data; give every "
                "rank the same number of batches (e.g. DistributedSampler(drop_last=True)) and pass enable=False"
            )
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @staticmethod
    def notify_join_context(joinable: Joinable) -> None:
        """Called by a ``Joinable`` before its collectives; returns None (no join in progress)."""
        return None
