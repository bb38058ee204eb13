"""Where ``ZeroRedundancyOptimizer``'s shards lie for their broadcast, and the broadcast.

After each step every rank broadcasts its updated shard, one flat buffer per dtype, to the
others. The buffers are cut the same way on every rank: each dtype's parameters form a
*section*, ordered by owner, so that each owner's parameters of a dtype are one
contiguous *range*::

    | float32: owner 0's | owner 1's | ... | float16: owner 0's | owner 1's | ... |

On ranks of one host whose broadcast runs through shared memory, the whole layout is one
buffer in this rank's *arena* of the segment (``segment_buffers.py``), at the same offset
on every rank, and every parameter's ``_data`` becomes a view of its place (its values,
version counter and ``.grad`` unchanged). The owner's optimiser then updates the arena
itself, and each range is broadcast where it lies: the others read it out of the owner's
arena (``algorithms/shm.py``), nothing is concatenated and nothing copied back.

Elsewhere (several hosts, another algorithm, no room in the arena) each range is a fresh
array: its owner copies its parameters in, the others copy them out after the broadcast.
The same copies serve a parameter that cannot be a view (not contiguous, or sharing
memory with another parameter) or whose ``.data`` was replaced after the layout.

When the optimiser is garbage-collected, :meth:`ShardLayout.close` gives the arena's
buffer back, after moving the parameters still in it to memory of their own. (Destroying
the process group drops every lease at once; the parameters keep the mapping alive.)
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
from numpy.lib.array_utils import byte_bounds

__all__ = ["ShardLayout"]

_ALIGN = 64  # each section starts on a cache line, aligned for any dtype


class _Range:
    """One owner's parameters of one dtype: ``members`` (parameter indices) at element
    ``offsets`` of ``numel`` elements that start at byte ``start`` of the layout."""

    def __init__(self, owner: int, dtype: np.dtype, start: int) -> None:
        self.owner, self.dtype, self.start = owner, dtype, start
        self.members: list[int] = []
        self.offsets: list[int] = []
        self.numel = 0


class ShardLayout:
    """The broadcast buffers of ``params`` (owned by ``owner[i]``), in the arena or not.

    Args:
        params (list of Tensor): every parameter of the optimiser, once each.
        owner (list of int): the group rank that updates each parameter.
    """

    def __init__(self, params: list, owner: list[int]) -> None:
        self.params = params
        self.ranges: list[_Range] = []
        at = 0
        for dtype in dict.fromkeys(p._data.dtype for p in params):
            at = -(-at // _ALIGN) * _ALIGN
            section = [i for i, p in enumerate(params) if p._data.dtype == dtype]
            for i in sorted(section, key=lambda i: (owner[i], i)):
                if not self.ranges or self.ranges[-1].owner != owner[i] or self.ranges[-1].dtype != dtype:
                    self.ranges.append(_Range(owner[i], dtype, at))
                r = self.ranges[-1]
                r.members.append(i)
                r.offsets.append(r.numel)
                r.numel += params[i]._data.size
                at += params[i]._data.nbytes
        self.ranges.sort(key=lambda r: r.owner)  # stable: each owner's ranges in dtype order
        self.nbytes = at
        self.group: Any = None
        self.buffer: Optional[np.ndarray] = None  # the arena's memory, once placed
        self.views: list[Optional[np.ndarray]] = [None] * len(params)

    def place(self, group: Any) -> bool:
        """Move the layout into this rank's arena of ``group``'s segment if the group's
        broadcast would read it there; whether it did. Every rank of the group must call
        it at the same point (the arena's leases must agree)."""
        from ..segment_buffers import segment_buffer

        buffer = segment_buffer(group, self.nbytes, np.uint8, "broadcast")
        if buffer is None:
            return False
        self.group, self.buffer = group, buffer
        apart = _apart([p._data for p in self.params])
        for r in self.ranges:
            flat = self._flat(r)
            for i, off in zip(r.members, r.offsets):
                p = self.params[i]
                view = flat[off : off + p._data.size].reshape(p._data.shape)
                np.copyto(view, p._data)
                self.views[i] = view
                if apart[i]:
                    p._data = view
        return True

    def _flat(self, r: _Range) -> np.ndarray:
        """The buffer of range ``r``: its place in the arena, or a fresh array."""
        if self.buffer is None:
            return np.empty(r.numel, r.dtype)
        return self.buffer[r.start : r.start + r.numel * r.dtype.itemsize].view(r.dtype)

    def broadcast(self, rank: int, send: Callable[[np.ndarray, int], None]) -> None:
        """Bring every range from its owner to every rank: ``send(flat, owner)`` is the
        group's broadcast; ``rank`` this rank's place in the group."""
        for r in self.ranges:
            flat = self._flat(r)
            copied = [self._copied(i, flat, off) for i, off in zip(r.members, r.offsets)]
            if r.owner == rank:
                for view, i in zip(copied, r.members):
                    if view is not None:
                        np.copyto(view, self.params[i]._data)
            send(flat, r.owner)
            if r.owner != rank:
                for view, i in zip(copied, r.members):
                    p = self.params[i]
                    if view is not None:
                        np.copyto(p._data, view)
                    p._bump_version()

    def _copied(self, i: int, flat: np.ndarray, off: int) -> Optional[np.ndarray]:
        """Parameter ``i``'s place in ``flat`` if its values must be copied there and
        back (it is not that place's view), else ``None``."""
        p = self.params[i]
        if self.views[i] is not None and p._data is self.views[i]:
            return None
        view = flat[off : off + p._data.size]
        if p._data.size != view.size or p._data.dtype != view.dtype:
            raise RuntimeError(
                f"parameter {i} of the ZeroRedundancyOptimizer changed from {view.dtype} of "
                f"{view.size} elements to {p._data.dtype} of {p._data.size} after the "
                "optimiser was made; make the optimiser after converting the model"
            )
        return view.reshape(p._data.shape)

    def close(self) -> None:
        """Give the arena's buffer back; the parameters still in it get their own memory."""
        from ..segment_buffers import release_segment_buffer

        if self.buffer is None:
            return
        for p, view in zip(self.params, self.views):
            if p._data is view:
                p._data = view.copy()
        release_segment_buffer(self.group, self.buffer)
        self.buffer = None


def _apart(arrays: list[np.ndarray]) -> list[bool]:
    """Which arrays are contiguous and share no memory with another (may become views)."""
    ok = [a.flags.c_contiguous for a in arrays]
    reach, widest = 0, -1  # the highest end so far, and whose
    for lo, hi, i in sorted((*byte_bounds(a), i) for i, a in enumerate(arrays) if a.nbytes):
        if lo < reach:
            ok[i] = ok[widest] = False
        if hi > reach:
            reach, widest = hi, i
    return ok
