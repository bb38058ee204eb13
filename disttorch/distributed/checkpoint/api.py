"""``CheckpointException`` (``torch.distributed.checkpoint.api``'s): what every rank raises when
a rank failed its part of a save or of a load's planning, with each failed rank's exception and traceback; and
:func:`checkpoint_directory`, where a save or load goes."""

from __future__ import annotations

import os
import traceback
from typing import Any, Callable

__all__ = ["CheckpointException", "WRAPPED_EXCEPTION", "attempt", "raise_failures"]

#: A failed rank's exception and the frames it was raised through.
WRAPPED_EXCEPTION = tuple[BaseException, traceback.StackSummary]


class CheckpointException(BaseException):
    """Raised on every rank when a checkpoint save, or a load's planning, failed on some ranks.

    Attributes:
        failures: the failed ranks, each with its exception and traceback frames.
    """

    def __init__(self, msg: str, failures: dict[int, WRAPPED_EXCEPTION]) -> None:
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self) -> dict[int, WRAPPED_EXCEPTION]:
        """The failed ranks, each with its exception and the frames it was raised through."""
        return self._failures

    def __str__(self) -> str:
        text = f"CheckpointException ranks:{self._failures.keys()}\n"
        for rank, (exc, trace) in self._failures.items():
            text += f"Traceback (most recent call last): (RANK {rank})\n"
            if trace is not None:
                text += "".join(traceback.format_list(trace))
            text += "".join(traceback.format_exception_only(type(exc), exc))
        return text


def attempt(step: Callable[[], None]) -> WRAPPED_EXCEPTION | None:
    """Run ``step``; its exception and frames if it raised (to send to the other ranks)."""
    try:
        step()
    except Exception as exc:  # noqa: BLE001 - every failure is reported to every rank
        return exc, traceback.StackSummary.from_list(traceback.extract_tb(exc.__traceback__))
    return None


def raise_failures(failures: dict[int, WRAPPED_EXCEPTION], step: str) -> None:
    """Raise :class:`CheckpointException` for the failed ranks of ``step`` (``"save"``,
    ``"load"``) in ``failures``; nothing when there are none."""
    if failures:
        raise CheckpointException(
            f"the checkpoint {step} failed on rank{'s' if len(failures) > 1 else ''} "
            f"{', '.join(map(str, failures))}",
            failures,
        )


def checkpoint_directory(checkpoint_id: str | os.PathLike | None, storage: Any) -> str:
    """The directory a save or load goes to: ``checkpoint_id``, else the storage
    writer's/reader's ``path``; neither given raises PyTorch's ``RuntimeError``."""
    if checkpoint_id is not None:
        return os.fspath(checkpoint_id)
    if storage is None:
        raise RuntimeError("`checkpoint_id` must be specified if storage_reader/storage_writer is None.")
    return os.fspath(storage.path)
