"""The key-value table behind the TCP store server: the store semantics, with memory caps.

Values are bytes. ``add`` keeps its counter as a decimal ASCII integer (so
``get`` after ``add(key, 5)`` returns ``b"5"``, as in torch.distributed).
The table refuses to grow past ``max_keys`` keys or ``max_bytes`` bytes of keys
plus values, so no client can make the server's memory grow without bound.
"""

from __future__ import annotations

from ..base.errors import DistStoreError

#: Default caps: one million keys, 1 GiB of keys plus values.
MAX_TOTAL_KEYS = 1_000_000
MAX_TOTAL_BYTES = 1 << 30


class StoreFullError(DistStoreError):
    """The store would exceed its key-count or byte cap."""


class KeyValueTable:
    """A dict of bytes to bytes implementing the Store operations, with size caps.

    Args:
        max_keys: most keys held at once.
        max_bytes: most bytes (keys plus values) held at once.
    """

    def __init__(self, max_keys: int = MAX_TOTAL_KEYS, max_bytes: int = MAX_TOTAL_BYTES) -> None:
        self._data: dict[bytes, bytes] = {}
        self._bytes = 0
        self.max_keys = max_keys
        self.max_bytes = max_bytes

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: bytes) -> bool:
        return key in self._data

    def __getitem__(self, key: bytes) -> bytes:
        return self._data[key]

    def get(self, key: bytes) -> bytes | None:
        return self._data.get(key)

    def set(self, key: bytes, value: bytes) -> None:
        old = self._data.get(key)
        new_keys = len(self._data) + (old is None)
        new_bytes = self._bytes + len(value) + (len(key) if old is None else -len(old))
        if new_keys > self.max_keys:
            raise StoreFullError(f"store holds its maximum of {self.max_keys} keys; cannot add key {key!r}")
        if new_bytes > self.max_bytes:
            raise StoreFullError(
                f"store would hold {new_bytes} bytes, above its cap of {self.max_bytes}; refused key {key!r}"
            )
        self._data[key] = value
        self._bytes = new_bytes

    def add(self, key: bytes, amount: int) -> int:
        old = self._data.get(key, b"0")
        try:
            current = int(old)
        except ValueError:
            raise ValueError(
                f"add() on key {key!r} expects an integer value, but it holds {old[:40]!r}"
            ) from None
        result = current + amount
        self.set(key, str(result).encode())
        return result

    def append(self, key: bytes, value: bytes) -> None:
        self.set(key, self._data.get(key, b"") + value)

    def compare_set(self, key: bytes, expected: bytes, desired: bytes) -> bytes:
        """Set ``key`` to ``desired`` if it holds ``expected`` (or is absent and ``expected`` is empty).

        Returns the value the key holds afterwards; for an absent key that was
        not set, returns ``expected`` (torch.distributed's rule).
        """
        current = self._data.get(key)
        if (current is None and expected == b"") or current == expected:
            self.set(key, desired)
            return desired
        return expected if current is None else current

    def delete(self, key: bytes) -> bool:
        value = self._data.pop(key, None)
        if value is None:
            return False
        self._bytes -= len(key) + len(value)
        return True
