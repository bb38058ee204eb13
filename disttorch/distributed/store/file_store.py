"""``FileStore``: a store kept in a file that several processes share (for ``file://`` init).

The file is an append-only log of records, written under an exclusive
``flock`` and read under a shared one, so processes (and several stores in
one process) see each other's writes whole::

    b"S" key_length:u32 value_length:u64 key value    set a key
    b"D" key_length:u32 key                           delete a key
    b"J"  /  b"L"                                     a user joined / left

Each store replays the records it has not seen yet into a dict before every
operation. ``get``/``wait`` poll the file (with back-off) until their keys
appear. A writer that died mid-record leaves a torn tail, which the next
writer cuts off. When ``world_size`` users have joined and all have closed the
store, the last one deletes the file, as torch.distributed's FileStore does.
Use a file that does not exist yet (or is empty) for each job.
"""

from __future__ import annotations

import fcntl
import os
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta

from ..base.errors import DistStoreError
from .base import DEFAULT_TIMEOUT, Key, Store, Value, key_bytes, timeout_error, value_bytes

_SET = struct.Struct("!cIQ")
_DELETE = struct.Struct("!cI")
_POLL_MIN_S = 0.001
_POLL_MAX_S = 0.05


class FileStore(Store):
    """A store backed by a file shared by every process of the job (mirrors ``torch.distributed.FileStore``).

    Args:
        file_name: path of the file (created if absent; use a fresh path per job).
        world_size: the number of processes sharing the file; when all have closed
            their stores the file is deleted. ``-1`` means unknown (never deleted).
        timeout: how long ``get`` and ``wait`` wait for missing keys.
    """

    def __init__(self, file_name: str, world_size: int = -1, timeout: timedelta = DEFAULT_TIMEOUT) -> None:
        super().__init__(timeout)
        if world_size == 0 or world_size < -1:
            raise ValueError(f"world_size must be positive or -1 (unknown), got {world_size}")
        self.path = os.fspath(file_name)
        self.world_size = world_size
        self._table: dict[bytes, bytes] = {}
        self._offset = 0
        self._joined = 0
        self._left = 0
        self._thread_lock = threading.Lock()
        try:
            self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise DistStoreError(f"FileStore cannot open {self.path!r}: {error.strerror}") from None
        try:
            with self._locked(exclusive=True):
                if 0 < world_size <= self._joined:
                    raise DistStoreError(
                        f"FileStore {self.path!r} already has {self._joined} users, the world_size {world_size}; "
                        "is the file left over from an earlier job? Use a fresh path"
                    )
                self._append(b"J")
        except BaseException:
            self._close_fd()
            raise

    # ------------------------------------------------------------ API

    def set(self, key: Key, value: Value) -> None:
        k, v = key_bytes(key), value_bytes(value)
        with self._locked(exclusive=True):
            self._append_set(k, v)

    def get(self, key: Key) -> bytes:
        k = key_bytes(key)
        return self._wait_for([k], self.timeout, "get")[0]

    def add(self, key: Key, amount: int) -> int:
        k = key_bytes(key)
        with self._locked(exclusive=True):
            old = self._table.get(k, b"0")
            try:
                result = int(old) + int(amount)
            except ValueError:
                raise ValueError(
                    f"add() on key {k!r} expects an integer value, but it holds {old[:40]!r}"
                ) from None
            self._append_set(k, str(result).encode())
            return result

    def append(self, key: Key, value: Value) -> None:
        k, v = key_bytes(key), value_bytes(value)
        with self._locked(exclusive=True):
            self._append_set(k, self._table.get(k, b"") + v)

    def check(self, keys: Sequence[Key]) -> bool:
        encoded = [key_bytes(k) for k in keys]
        with self._locked(exclusive=False):
            return all(k in self._table for k in encoded)

    def wait(self, keys: Sequence[Key], timeout: timedelta | None = None) -> None:
        self._wait_for([key_bytes(k) for k in keys], self.timeout if timeout is None else timeout, "wait")

    def compare_set(self, key: Key, expected_value: Value, desired_value: Value) -> bytes:
        k, expected, desired = key_bytes(key), value_bytes(expected_value), value_bytes(desired_value)
        with self._locked(exclusive=True):
            current = self._table.get(k)
            if (current is None and expected == b"") or current == expected:
                self._append_set(k, desired)
                return desired
            return expected if current is None else current

    def delete_key(self, key: Key) -> bool:
        k = key_bytes(key)
        with self._locked(exclusive=True):
            if k not in self._table:
                return False
            self._append(_DELETE.pack(b"D", len(k)) + k)
            return True

    def num_keys(self) -> int:
        with self._locked(exclusive=False):
            return len(self._table)

    def close(self) -> None:
        """Leave the store; the last of ``world_size`` users deletes the file. Safe to call twice."""
        if self._fd is None:
            return
        with self._locked(exclusive=True):
            self._append(b"L")
            if 0 < self.world_size <= self._left and self._joined <= self._left:
                os.unlink(self.path)
        self._close_fd()

    def __repr__(self) -> str:
        return f"FileStore({self.path!r}, world_size={self.world_size})"

    # ------------------------------------------------------------ log

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        """Hold the file lock (and this object's thread lock), with the table brought up to date."""
        with self._thread_lock:
            if self._fd is None:
                raise DistStoreError(f"FileStore {self.path!r} is closed")
            fcntl.flock(self._fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                self._replay(cut_torn_tail=exclusive)
                yield
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _append_set(self, key: bytes, value: bytes) -> None:
        self._append(_SET.pack(b"S", len(key), len(value)) + key + value)

    def _append(self, record: bytes) -> None:
        """Write one record at the end of the log (exclusive lock held) and apply it."""
        assert self._fd is not None
        written = os.pwrite(self._fd, record, self._offset)
        if written != len(record):
            raise DistStoreError(f"FileStore {self.path!r}: short write ({written} of {len(record)} bytes)")
        self._replay(cut_torn_tail=False)

    def _replay(self, cut_torn_tail: bool) -> None:
        """Apply the records written since the last replay."""
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size < self._offset:
            raise DistStoreError(
                f"FileStore {self.path!r} shrank from {self._offset} to {size} bytes; "
                "something else modified it"
            )
        data = os.pread(self._fd, size - self._offset, self._offset)
        position = 0
        while position < len(data):
            consumed = self._apply(data, position)
            if consumed == 0:  # a torn record left by a writer that died
                if cut_torn_tail:
                    os.ftruncate(self._fd, self._offset + position)
                break
            position += consumed
        self._offset += position

    def _apply(self, data: bytes, position: int) -> int:
        """Apply the record at ``position``; return its length, or 0 if it is incomplete."""
        tag = data[position : position + 1]
        if tag in (b"J", b"L"):
            if tag == b"J":
                self._joined += 1
            else:
                self._left += 1
            return 1
        if tag == b"S":
            if len(data) - position < _SET.size:
                return 0
            _, key_length, value_length = _SET.unpack_from(data, position)
            end = position + _SET.size + key_length + value_length
            if end > len(data):
                return 0
            key_end = position + _SET.size + key_length
            self._table[data[position + _SET.size : key_end]] = data[key_end:end]
            return end - position
        if tag == b"D":
            if len(data) - position < _DELETE.size:
                return 0
            _, key_length = _DELETE.unpack_from(data, position)
            end = position + _DELETE.size + key_length
            if end > len(data):
                return 0
            self._table.pop(data[position + _DELETE.size : end], None)
            return end - position
        raise DistStoreError(
            f"{self.path!r} is not a disttorch FileStore log (unknown record {tag!r} at byte {self._offset + position})"
        )

    def _wait_for(self, keys: list[bytes], timeout: timedelta, operation: str) -> list[bytes]:
        """Poll until every key is set; return their values."""
        deadline = time.monotonic() + timeout.total_seconds()
        pause = _POLL_MIN_S
        while True:
            with self._locked(exclusive=False):
                missing = [k for k in keys if k not in self._table]
                if not missing:
                    return [self._table[k] for k in keys]
            if time.monotonic() >= deadline:
                raise timeout_error(operation, missing, timeout)
            time.sleep(pause)
            pause = min(pause * 2, _POLL_MAX_S)
