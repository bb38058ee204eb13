"""Exceptions raised by ``disttorch.distributed``, on its lowest floor (every floor raises them).

The names follow PyTorch where it has them (``DistError``, ``DistBackendError``,
``DistNetworkError``, ``DistStoreError``): ``DistError`` is the root; ``DistStoreError``
means a store operation failed or timed out (a ``get`` or ``wait`` whose key never
appeared); ``DistNetworkError`` means the store or a peer could not be reached;
``AuthenticationError`` means it was reached but refused us (or we refused it) because the
job secrets differ. The subclasses below say more precisely what went wrong and are what a
caller may catch:

- :class:`CollectiveMismatchError`: ranks called different collectives (or the same one
  with a different dtype, size or root) at the same sequence number.
- :class:`DistTimeoutError`: a collective did not complete within the group's timeout.
- :class:`PeerDiedError`: a peer process vanished (killed, crashed, or left the group).
"""

from __future__ import annotations

__all__ = [
    "DistError",
    "DistBackendError",
    "DistNetworkError",
    "DistStoreError",
    "AuthenticationError",
    "CollectiveMismatchError",
    "DistTimeoutError",
    "PeerDiedError",
]


class DistError(RuntimeError):
    """Root of the errors raised by ``disttorch.distributed``."""


class DistStoreError(DistError):
    """A store operation failed, e.g. ``get``/``wait`` timed out before the key was set."""


class DistNetworkError(DistError):
    """The store (or a peer) could not be reached or stopped answering."""


class AuthenticationError(DistNetworkError):
    """A connection was refused because it does not carry this job's secret."""


class DistBackendError(DistError):
    """A collective or point-to-point operation failed inside the process group."""


class CollectiveMismatchError(DistBackendError):
    """Ranks disagree on the collective at one sequence number (op, dtype, size or root)."""


class DistTimeoutError(DistBackendError, TimeoutError):
    """A collective did not complete within the process group's timeout."""


class PeerDiedError(DistNetworkError):
    """A peer of the process group died or left it while this rank still needed it.

    Attributes:
        rank: global rank of the peer that is gone.
    """

    def __init__(self, message: str, rank: int) -> None:
        super().__init__(message)
        self.rank = rank

    def __reduce__(self):
        return (type(self), (str(self), self.rank))
