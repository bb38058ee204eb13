"""Exceptions raised by ``disttorch.distributed``.

The names follow PyTorch where it has them (``DistError``, ``DistBackendError``,
``DistNetworkError``, ``DistStoreError``; the store's ``store/errors.py`` defines those
shared with the store and they are re-exported here); the subclasses below say more precisely what
went wrong and are what a caller may catch:

- :class:`CollectiveMismatchError`: ranks called different collectives (or the same one
  with a different dtype, size or root) at the same sequence number.
- :class:`DistTimeoutError`: a collective did not complete within the group's timeout.
- :class:`PeerDiedError`: a peer process vanished (killed, crashed, or left the group).
"""
from __future__ import annotations

from .store.errors import AuthenticationError, DistError, DistNetworkError, DistStoreError

__all__ = ["DistError", "DistBackendError", "DistNetworkError", "DistStoreError", "AuthenticationError",
           "CollectiveMismatchError", "DistTimeoutError", "PeerDiedError"]


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
