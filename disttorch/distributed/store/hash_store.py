"""``HashStore``: an in-process store that threads of one process share (mirrors ``torch.distributed.HashStore``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from datetime import timedelta

from .base import DEFAULT_TIMEOUT, Key, Store, Value, key_bytes, timeout_error, value_bytes
from .table import KeyValueTable


class HashStore(Store):
    """A thread-safe store held in this process's memory (for single-process groups and tests).

    Args:
        timeout: how long ``get`` and ``wait`` wait for missing keys.
    """

    def __init__(self, timeout: timedelta = DEFAULT_TIMEOUT) -> None:
        super().__init__(timeout)
        self._table = KeyValueTable()
        self._changed = threading.Condition()

    def _wait_for(self, keys: list[bytes], timeout: timedelta, operation: str) -> list[bytes]:
        deadline = time.monotonic() + timeout.total_seconds()
        with self._changed:
            while True:
                missing = [k for k in keys if k not in self._table]
                if not missing:
                    return [self._table[k] for k in keys]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise timeout_error(operation, missing, timeout)
                self._changed.wait(remaining)

    def set(self, key: Key, value: Value) -> None:
        with self._changed:
            self._table.set(key_bytes(key), value_bytes(value))
            self._changed.notify_all()

    def get(self, key: Key) -> bytes:
        return self._wait_for([key_bytes(key)], self.timeout, "get")[0]

    def add(self, key: Key, amount: int) -> int:
        with self._changed:
            result = self._table.add(key_bytes(key), int(amount))
            self._changed.notify_all()
            return result

    def append(self, key: Key, value: Value) -> None:
        with self._changed:
            self._table.append(key_bytes(key), value_bytes(value))
            self._changed.notify_all()

    def check(self, keys: Sequence[Key]) -> bool:
        with self._changed:
            return all(key_bytes(k) in self._table for k in keys)

    def wait(self, keys: Sequence[Key], timeout: timedelta | None = None) -> None:
        self._wait_for([key_bytes(k) for k in keys], self.timeout if timeout is None else timeout, "wait")

    def compare_set(self, key: Key, expected_value: Value, desired_value: Value) -> bytes:
        with self._changed:
            result = self._table.compare_set(
                key_bytes(key), value_bytes(expected_value), value_bytes(desired_value)
            )
            self._changed.notify_all()
            return result

    def delete_key(self, key: Key) -> bool:
        with self._changed:
            return self._table.delete(key_bytes(key))

    def num_keys(self) -> int:
        with self._changed:
            return len(self._table)

    def __repr__(self) -> str:
        return f"HashStore(num_keys={len(self._table)})"
