"""``PrefixStore``: a view of another store whose keys all start with ``prefix + "/"``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from .base import Key, Store, Value, key_bytes


class PrefixStore(Store):
    """Wraps ``store`` so that every key is stored as ``prefix + "/" + key`` (mirrors ``torch.distributed.PrefixStore``).

    ``num_keys`` counts every key of the underlying store, as torch.distributed's does.

    Args:
        prefix: the prefix added to every key.
        store: the store holding the keys.
    """

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__(store.timeout)
        self.prefix = prefix
        self.underlying_store = store
        self._prefix = key_bytes(prefix) + b"/"

    def _k(self, key: Key) -> bytes:
        return self._prefix + key_bytes(key)

    @property
    def timeout(self) -> timedelta:
        return self.underlying_store.timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self.underlying_store.set_timeout(timeout)

    def set(self, key: Key, value: Value) -> None:
        self.underlying_store.set(self._k(key), value)

    def get(self, key: Key) -> bytes:
        return self.underlying_store.get(self._k(key))

    def add(self, key: Key, amount: int) -> int:
        return self.underlying_store.add(self._k(key), amount)

    def append(self, key: Key, value: Value) -> None:
        self.underlying_store.append(self._k(key), value)

    def check(self, keys: Sequence[Key]) -> bool:
        return self.underlying_store.check([self._k(k) for k in keys])

    def wait(self, keys: Sequence[Key], timeout: timedelta | None = None) -> None:
        self.underlying_store.wait([self._k(k) for k in keys], timeout)

    def compare_set(self, key: Key, expected_value: Value, desired_value: Value) -> bytes:
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)

    def delete_key(self, key: Key) -> bool:
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self) -> int:
        return self.underlying_store.num_keys()

    def client_id(self) -> bytes | None:
        return self.underlying_store.client_id()

    def gone_for(self, client_ids: Sequence[bytes]) -> list[float | None]:
        return self.underlying_store.gone_for(client_ids)

    def __repr__(self) -> str:
        return f"PrefixStore(prefix={self.prefix!r}, store={self.underlying_store!r})"
