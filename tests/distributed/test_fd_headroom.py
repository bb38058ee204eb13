"""The file-descriptor headroom check before a ZeroMQ socket, and closing a store with none left."""

import os
import resource

import pytest

from disttorch import _fd_limit
from disttorch.distributed import TCPStore

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts with /proc")


def _open_now():
    return len(os.listdir("/proc/self/fd")) - 1


class _Exhausted:
    """Every descriptor but ``free`` taken, under a soft RLIMIT_NOFILE just above the highest
    open now (restored on exit): a limit below an open descriptor's number breaks libzmq."""

    def __init__(self, free):
        self.free, self.held = free, []

    def __enter__(self):
        self.saved = resource.getrlimit(resource.RLIMIT_NOFILE)
        highest = max(map(int, os.listdir("/proc/self/fd")))
        resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 64, self.saved[1]))
        try:
            while True:
                self.held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass
        for _ in range(self.free):
            os.close(self.held.pop())

    def __exit__(self, *exc):
        for fd in self.held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, self.saved)


def test_headroom_is_taken_not_counted(monkeypatch):
    # listing /proc/self/fd took 1 ms per thousand open descriptors, at every socket
    monkeypatch.setattr(_fd_limit, "open_count", lambda: pytest.fail("counted the open descriptors"))
    before = _open_now()
    _fd_limit.ensure_headroom("a socket", 16)
    assert _open_now() == before
    monkeypatch.undo()
    with _Exhausted(8):
        _fd_limit.ensure_headroom("a socket", 8)
        with pytest.raises(
            OSError, match=r"a socket: too few file descriptors left .*RLIMIT_NOFILE soft limit"
        ):
            _fd_limit.ensure_headroom("a socket", 9)
    assert _open_now() == before


@pytest.mark.timeout(60)
def test_a_store_closes_with_no_descriptor_left():
    store = TCPStore("127.0.0.1", 0, 1, True, wait_for_workers=False)
    store.set("k", b"v")
    with _Exhausted(0):
        store.close()  # it made a socket to wake itself: 'Too many open files', and stayed open
    assert store._closed and not store._server._thread.is_alive()
