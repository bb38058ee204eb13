"""Buffers that live in the host's shared-memory segment, so that all-reducing or
broadcasting them copies nothing in.

The shared-memory all-reduce and broadcast (``algorithms/shm.py``) normally copy each
rank's buffer into the rank's slot of the segment before the others can read it. A buffer
that is all-reduced again and again (a DDP gradient bucket) or broadcast again and again
(ZeRO's parameters) can instead be made *in* the segment, in this rank's arena
(``wire/shm.py``): the collective then reads every rank's buffer where it is and saves
that copy. ::

    buf = segment_buffer(group, 1 << 20, np.float32)   # None: use a private array
    ...
    dist.all_reduce(buf, group=group)                   # reads the others' buf in place
    release_segment_buffer(group, buf)

Every rank of the group must take and release such buffers with the same sizes in the
same order, so that each buffer lies at the same offset of every rank's arena (the
all-reduce checks it and raises ``TagMismatch`` where it does not).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .algorithms import select
from .algorithms import shm as shm_algorithm

__all__ = ["segment_buffer", "release_segment_buffer"]


def _board(pg: Any, nbytes: int, collective: str):
    """The group's board, if ``collective`` of ``nbytes`` would run through it and could
    read a buffer in place (larger than the one-step size); else ``None``."""
    t = getattr(pg, "transport", None)
    board = getattr(t, "board", None)
    if board is None or not t.shared or len(t.hosts) != 1 or nbytes <= shm_algorithm.ONE_STEP_BYTES:
        return None
    if select.choose(collective, nbytes, pg.size(), hosts=t.hosts) != "shm":
        return None
    return board


def segment_buffer(pg: Any, numel: int, dtype: Any, collective: str = "all_reduce") -> Optional[np.ndarray]:
    """A zero-filled 1-D array of ``numel`` ``dtype`` elements in this rank's arena of the
    segment of process group ``pg``, or ``None`` when the group's ``collective``
    (``"all_reduce"`` or ``"broadcast"``) would not read it in place (ranks on several
    hosts, another algorithm chosen, a small buffer) or the arena has no room left."""
    dtype = np.dtype(dtype)
    nbytes = numel * dtype.itemsize
    board = _board(pg, nbytes, collective)
    memory = board.lease(nbytes) if board is not None else None
    if memory is None:
        return None
    memory.fill(0)
    return memory.view(dtype)


def release_segment_buffer(pg: Any, buf: np.ndarray) -> None:
    """Give back a buffer of :func:`segment_buffer` (nothing for any other array)."""
    board = getattr(getattr(pg, "transport", None), "board", None)
    if board is not None:
        board.release(buf)
