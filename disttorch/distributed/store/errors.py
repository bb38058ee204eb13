"""Exceptions raised by the rendezvous stores (named as torch.distributed names them).

``DistError`` is the root of every error raised by ``disttorch.distributed``;
``DistStoreError`` means a store operation failed or timed out (a ``get`` or
``wait`` whose key never appeared); ``DistNetworkError`` means the store could
not be reached; ``AuthenticationError`` means it was reached but refused us (or
we refused it) because the job secrets differ.
"""

from __future__ import annotations


class DistError(RuntimeError):
    """Root of the errors raised by ``disttorch.distributed``."""


class DistStoreError(DistError):
    """A store operation failed, e.g. ``get``/``wait`` timed out before the key was set."""


class DistNetworkError(DistError):
    """The store (or a peer) could not be reached or stopped answering."""


class AuthenticationError(DistNetworkError):
    """A connection was refused because it does not carry this job's secret."""
