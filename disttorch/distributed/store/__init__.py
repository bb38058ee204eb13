"""Rendezvous stores: the key-value stores processes use to find each other (torch.distributed's Store API).

* :class:`Store` - the abstract API (``set, get, add, append, check, wait,
  compare_set, delete_key, num_keys, set_timeout, timeout``).
* :class:`TCPStore` - hosted by one process (rank 0), reached over ZeroMQ,
  authenticated with the job secret (:mod:`disttorch.distributed.base.auth`).
* :class:`FileStore` - a file shared by processes on one machine or a shared file system.
* :class:`HashStore` - in this process's memory, shared by its threads.
* :class:`PrefixStore` - a namespaced view of another store.
"""

from ..base.errors import AuthenticationError, DistError, DistNetworkError, DistStoreError
from .base import DEFAULT_TIMEOUT, Store
from .file_store import FileStore
from .hash_store import HashStore
from .prefix_store import PrefixStore
from .tcp_store import TCPStore

__all__ = [
    "DEFAULT_TIMEOUT",
    "AuthenticationError",
    "DistError",
    "DistNetworkError",
    "DistStoreError",
    "FileStore",
    "HashStore",
    "PrefixStore",
    "Store",
    "TCPStore",
]
