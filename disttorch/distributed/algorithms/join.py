"""``torch.distributed.algorithms.join``: ``Join``, the context manager for uneven inputs,
with ``Joinable`` and ``JoinHook``.

``Join`` lets ranks that run out of data keep answering the collectives of the ranks still
training. disttorch's ``DistributedDataParallel`` does this in its own ``join()`` context
manager, so ``Join([ddp_model], enable=True)`` runs the block inside ``ddp_model.join()``
(a joinable without a ``join()`` of its own, e.g. a ZeRO optimizer, is refused with
``NotImplementedError``); ``enable=False`` runs the block unchanged.
"""

from __future__ import annotations

import contextlib
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
        NotImplementedError: with ``enable=True`` and a joinable that is not a
            ``DistributedDataParallel`` (nothing else can shadow collectives here).
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
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Join:
        if not self._enable:
            return self
        refused = [type(j).__name__ for j in self._joinables if not callable(getattr(j, "join", None))]
        if refused:
            raise NotImplementedError(
                f"Join(enable=True): {', '.join(refused)} cannot shadow the collectives of ranks that "
                "ran out of data in disttorch (only DistributedDataParallel can); give every rank the "
                "same number of batches and pass enable=False"
            )
        divide = self._kwargs.get("divide_by_initial_world_size", True)
        for joinable in self._joinables:
            self._stack.enter_context(
                joinable.join(
                    divide, enable=True, throw_on_early_termination=self._throw_on_early_termination
                )
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.__exit__(*exc)

    @staticmethod
    def notify_join_context(joinable: Joinable) -> None:
        """Called by a ``Joinable`` before its collectives; returns None (no join in progress)."""
        return None
