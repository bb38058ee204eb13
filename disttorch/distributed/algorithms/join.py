"""``torch.distributed.algorithms.join``: ``Join``, the context manager for uneven inputs,
with ``Joinable`` and ``JoinHook``, as PyTorch's.

Every iteration, the first joinable of a rank still training calls
``Join.notify_join_context`` before its collectives: an all-reduce of 1 (the heartbeat). A
rank that ran out of data leaves the ``with`` block and, in ``__exit__``, answers each
heartbeat with 0; while the sum is not 0 it runs every joinable's ``JoinHook.main_hook``
(shadowing one iteration of its collectives), then, once all ranks have joined, every
``post_hook(is_last_joiner)``. ``DistributedDataParallel`` and ``ZeroRedundancyOptimizer``
are joinables; so is any class that implements ``Joinable``'s three members.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

__all__ = ["Join", "JoinHook", "Joinable"]


def _dist() -> Any:
    from ... import distributed

    return distributed


def _scalar(value: float, device: Any) -> Any:
    from ... import ones

    return ones(1, device=device) * value


@dataclass
class _JoinConfig:
    """What ``Join`` tells each of its joinables (as ``joinable._join_config``)."""

    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config() -> _JoinConfig:
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class JoinHook:
    """What a joined rank runs in place of a ``Joinable``'s collectives (base: nothing)."""

    def main_hook(self) -> None:
        """Shadow one iteration of the collectives of the ranks not yet joined."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once every rank has joined."""


class Joinable(ABC):
    """A class whose collectives ``Join`` can shadow (DDP and ZeRO are). Subclasses call
    ``Joinable.__init__`` and ``Join.notify_join_context(self)`` before their collectives."""

    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

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
    """``with Join(joinables, enable=..., throw_on_early_termination=..., **kwargs):`` around
    a training loop with uneven inputs; ``kwargs`` go to every ``joinable.join_hook``
    (``divide_by_initial_world_size`` for DDP).

    Raises:
        ValueError: no joinables, or joinables of different process groups.
        RuntimeError: with ``throw_on_early_termination=True``, on every rank as soon as one
            runs out of inputs.
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
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, joinable in enumerate(joinables):
            joinable._join_config = _JoinConfig(enable, throw_on_early_termination, is_first_joinable=i == 0)
        self._process_group = joinables[0].join_process_group
        if any(j.join_process_group != self._process_group for j in joinables[1:]):
            raise ValueError("Using join context manager with multiple process groups")
        self._device = joinables[0].join_device
        self._rank = _dist().get_rank(self._process_group)

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        """Shadow the ranks still training until all have joined, then run the post-hooks."""
        if not self._enable or exc_type is not None:
            return
        is_last_joiner = True
        skew = 0
        while self._nonjoined() != 0:
            if skew == _WARN_THRESHOLD + 1:
                warnings.warn(
                    f"Detected uneven input skew of greater than {_WARN_THRESHOLD}. This means that "
                    f"rank {self._rank} has at least {_WARN_THRESHOLD} fewer inputs than other "
                    "currently-active ranks. This level of skew could lead to performance "
                    "degradation during training.",
                    stacklevel=2,
                )
            if self._throw_on_early_termination:
                _dist().all_reduce(_scalar(1, self._device), group=self._process_group)
                raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            skew += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _nonjoined(self) -> int:
        """Answer one heartbeat with 0: the number of ranks still training."""
        count = _scalar(0, self._device)
        _dist().all_reduce(count, group=self._process_group)
        return int(count.item())

    @staticmethod
    def notify_join_context(joinable: Joinable) -> Any:
        """The heartbeat, sent by the first joinable of a ``Join`` before its collectives:
        an asynchronous all-reduce of 1 whose ``Work`` is returned (its result: how many
        ranks are still training); ``None`` for the other joinables and outside a ``Join``.

        Raises:
            RuntimeError: with ``throw_on_early_termination=True``, when a rank has joined.
        """
        config = getattr(joinable, "_join_config", None)
        if config is None:
            raise AssertionError(
                f"{type(joinable).__name__} has no _join_config: a Joinable must call Joinable.__init__"
            )
        if not config.is_first_joinable or not config.enable:
            return None
        dist, device, group = _dist(), joinable.join_device, joinable.join_process_group
        work = dist.all_reduce(_scalar(1, device), group=group, async_op=True)
        if config.throw_on_early_termination:
            should_throw = _scalar(0, device)
            dist.all_reduce(should_throw, group=group)
            if should_throw.item():
                raise RuntimeError(
                    "Detected at least one rank that exhausted inputs. Throwing across all ranks."
                )
        return work


#: iterations of skew after which a joined rank warns
_WARN_THRESHOLD = 1000
