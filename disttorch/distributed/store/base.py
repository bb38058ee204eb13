"""The abstract ``Store``: the key-value API every rendezvous store offers (torch.distributed.Store).

Keys are strings (bytes are accepted too); values are bytes (strings are
UTF-8 encoded). ``get`` and ``wait`` block until their keys exist, up to the
store's timeout, then raise :class:`DistStoreError` naming the missing keys.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from datetime import timedelta

from ..base.errors import DistStoreError

#: Default store timeout, as torch.distributed's stores use.
DEFAULT_TIMEOUT = timedelta(seconds=300)

Key = str | bytes
Value = str | bytes | bytearray | memoryview


def key_bytes(key: Key) -> bytes:
    """Encode a key (str or bytes) to bytes."""
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray)):
        return bytes(key)
    raise TypeError(f"store keys must be str or bytes, got {type(key).__name__}")


def value_bytes(value: Value) -> bytes:
    """Encode a value (bytes-like or str) to bytes."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"store values must be bytes or str, got {type(value).__name__}")


def check_timeout(timeout: timedelta) -> timedelta:
    if not isinstance(timeout, timedelta):
        raise TypeError(f"store timeout must be a datetime.timedelta, got {type(timeout).__name__}")
    if timeout < timedelta(0):
        raise ValueError(f"store timeout must not be negative, got {timeout}")
    return timeout


def timeout_error(operation: str, keys: Iterable[bytes], timeout: timedelta) -> DistStoreError:
    """The error raised when ``get``/``wait`` gave up: names the keys and the timeout."""
    names = ", ".join(repr(k.decode("utf-8", "replace")) for k in keys)
    return DistStoreError(
        f"store {operation} timed out after {timeout.total_seconds():g} s waiting for key(s) {names}; "
        "no process set them (raise the timeout with store.set_timeout() or the timeout argument "
        "if they are only slow)"
    )


class Store(abc.ABC):
    """Base class of the rendezvous stores (mirrors ``torch.distributed.Store``).

    Args:
        timeout: how long ``get`` and ``wait`` wait for missing keys.
    """

    def __init__(self, timeout: timedelta = DEFAULT_TIMEOUT) -> None:
        self._timeout = check_timeout(timeout)

    @property
    def timeout(self) -> timedelta:
        """The timeout used by ``get`` and by ``wait`` when called without one."""
        return self._timeout

    def set_timeout(self, timeout: timedelta) -> None:
        """Set the store's default timeout for ``get`` and ``wait``."""
        self._timeout = check_timeout(timeout)

    @abc.abstractmethod
    def set(self, key: Key, value: Value) -> None:
        """Insert or overwrite ``key`` with ``value``."""

    @abc.abstractmethod
    def get(self, key: Key) -> bytes:
        """Return the value of ``key``, waiting up to the store timeout for it to be set.

        Raises:
            DistStoreError: if the key is not set within the timeout (the message names it).
        """

    @abc.abstractmethod
    def add(self, key: Key, amount: int) -> int:
        """Add ``amount`` to the integer counter ``key`` (created at 0) and return the new value."""

    @abc.abstractmethod
    def append(self, key: Key, value: Value) -> None:
        """Append ``value`` to the value of ``key`` (creating it if absent)."""

    @abc.abstractmethod
    def check(self, keys: Sequence[Key]) -> bool:
        """Return whether every key in ``keys`` is set, without waiting."""

    @abc.abstractmethod
    def wait(self, keys: Sequence[Key], timeout: timedelta | None = None) -> None:
        """Wait until every key in ``keys`` is set.

        Args:
            keys: the keys to wait for.
            timeout: how long to wait; the store timeout when ``None``.

        Raises:
            DistStoreError: naming the keys still missing when the timeout expires.
        """

    @abc.abstractmethod
    def compare_set(self, key: Key, expected_value: Value, desired_value: Value) -> bytes:
        """Set ``key`` to ``desired_value`` if it currently holds ``expected_value``.

        An absent key counts as holding ``b""``. Returns the value ``key`` holds
        afterwards, except that for an absent key left unset it returns
        ``expected_value`` (as torch.distributed does).
        """

    @abc.abstractmethod
    def delete_key(self, key: Key) -> bool:
        """Delete ``key``; return ``True`` if it existed."""

    @abc.abstractmethod
    def num_keys(self) -> int:
        """Return the number of keys in the store.

        Unlike torch.distributed's stores, no internal bookkeeping key is counted.
        """

    def multi_set(self, keys: Sequence[Key], values: Sequence[Value]) -> None:
        """Set each of ``keys`` to the matching entry of ``values``."""
        if len(keys) != len(values):
            raise ValueError(f"multi_set got {len(keys)} keys but {len(values)} values")
        for key, value in zip(keys, values):
            self.set(key, value)

    def multi_get(self, keys: Sequence[Key]) -> list[bytes]:
        """Wait for all ``keys`` and return their values, in order."""
        self.wait(keys)
        return [self.get(key) for key in keys]

    def has_extended_api(self) -> bool:
        """Whether ``append``, ``multi_get`` and ``multi_set`` are available (always ``True`` here)."""
        return True

    def client_id(self) -> bytes | None:
        """How the store's server knows this process's connection (``None``: a store without
        connections). disttorch's own; PyTorch's stores have no such method."""
        return None

    def gone_for(self, client_ids: Sequence[bytes]) -> list[float | None]:
        """For each of ``client_ids`` (see :meth:`client_id`), the seconds since its connection
        to the server dropped without coming back, or ``None`` while it is connected (or the
        store cannot tell: the default). disttorch's own."""
        return [None] * len(client_ids)

    def close(self) -> None:  # noqa: B027 - stores without resources need nothing
        """Release the store's sockets, threads or files. Safe to call more than once."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
