"""The shared-memory board (``wire/shm.py``): the segment's hand-over gives the descriptor
only to the processes the job named, leaves no name anywhere, and syncs compare stamps."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

from disttorch.distributed.wire import shm

pytestmark = pytest.mark.skipif(not shm.enabled(), reason="needs memfd on x86-64 Linux")


def _named_by_us() -> set[str]:
    """Entries of /dev/shm and /tmp that carry this process's id (other jobs share them)."""
    mark = f"-{os.getpid()}-"
    found = set()
    for folder in ("/dev/shm", "/tmp"):
        if os.path.isdir(folder):
            found |= {e for e in os.listdir(folder) if mark in e}
    return found


def _serve(server, fd, pids, seconds=5.0):
    outcome = {}

    def run():
        try:
            shm.hand_out(server, fd, pids, time.monotonic() + seconds, lambda r: f"rank {r}")
        except Exception as e:  # noqa: BLE001 - reported to the test
            outcome["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.mark.timeout(30)
def test_the_segment_reaches_a_named_process_and_has_no_name():
    fd, mapping = shm.new_segment(2, slot_bytes=4096)
    server, name = shm.listen(1)
    thread, outcome = _serve(server, fd, {1: os.getpid()})
    got = shm.fetch(name, 1, os.getpid(), time.monotonic() + 5)
    thread.join()
    server.close()
    assert "error" not in outcome, outcome
    other = shm.map_segment(got, 2, slot_bytes=4096)
    a, b = np.frombuffer(mapping, np.uint8), np.frombuffer(other, np.uint8)
    a[-1] = 42
    assert b[-1] == 42, "both mappings show the same memory"
    assert os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:"), "anonymous: no name anywhere"
    assert _named_by_us() == set(), "no file appears in /dev/shm or /tmp"
    os.close(fd)
    del a, b
    mapping.close()
    other.close()


@pytest.mark.timeout(30)
def test_a_process_the_job_did_not_name_gets_nothing():
    fd, mapping = shm.new_segment(2, slot_bytes=4096)
    server, name = shm.listen(1)
    thread, outcome = _serve(server, fd, {1: os.getppid()}, seconds=1.0)  # a live process, not us
    with pytest.raises(ConnectionError):
        shm.fetch(name, 1, os.getpid(), time.monotonic() + 5)
    thread.join()
    assert isinstance(outcome.get("error"), TimeoutError) and "rank 1" in str(outcome["error"])
    server.close()
    os.close(fd)
    mapping.close()


@pytest.mark.timeout(30)
def test_a_silent_outsider_does_not_hold_up_the_hand_over():
    """The abstract name is listed in /proc/net/unix for every user: another process that
    connects first and sends nothing made the leader wait for it until the deadline."""
    import subprocess
    import sys

    fd, mapping = shm.new_segment(2, slot_bytes=4096)
    server, name = shm.listen(4)
    hold = "import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.connect(chr(0) + sys.argv[1]); print(1, flush=True); time.sleep(30)"
    outsider = subprocess.Popen([sys.executable, "-c", hold, name], stdout=subprocess.PIPE)
    try:
        assert outsider.stdout.readline() == b"1\n"  # connected, silent
        thread, outcome = _serve(server, fd, {1: os.getpid()}, seconds=5.0)
        start = time.monotonic()
        os.close(shm.fetch(name, 1, os.getpid(), time.monotonic() + 5))
        thread.join()
        assert "error" not in outcome, outcome
        assert time.monotonic() - start < 2
    finally:
        outsider.kill()
        outsider.wait()
        server.close()
        os.close(fd)
        mapping.close()


@pytest.mark.timeout(30)
def test_a_socket_of_another_process_is_not_trusted():
    server, name = shm.listen(1)
    with pytest.raises(PermissionError, match="not to the job's process"):
        shm.fetch(name, 1, os.getpid() + 1_000_000, time.monotonic() + 5)
    server.close()


def _boards(n: int, slot_bytes: int = 256) -> list[shm.Board]:
    memory = np.zeros(shm.segment_bytes(n, slot_bytes), np.uint8)
    return [shm.Board(memory, r, n, slot_bytes) for r in range(n)]


@pytest.mark.timeout(30)
def test_ranks_with_different_stamps_fail_at_the_sync_naming_each_other():
    boards = _boards(2)
    errors = {}

    def run(r):
        session = boards[r].session((7, 1, 10 + r), lambda late, waited: None)
        try:
            session.sync()
        except shm.StampMismatch as e:
            errors[r] = e

    threads = [threading.Thread(target=run, args=(r,)) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert errors[0].peer == 1 and errors[0].theirs == (7, 1, 11)
    assert errors[1].peer == 0 and errors[1].theirs == (7, 1, 10)


@pytest.mark.timeout(30)
def test_a_waiting_rank_hears_who_is_late_and_can_give_up():
    boards = _boards(3)
    heard = []

    def idle(late, waited):
        heard.append(late)
        if waited > 0.3:
            raise TimeoutError(f"late: {late}")

    with pytest.raises(TimeoutError, match=r"late: \[1, 2\]"):
        boards[0].session((1, 0, 0), idle).sync()
    assert heard and all(late == [1, 2] for late in heard)


@pytest.mark.timeout(30)
def test_many_syncs_between_threads_keep_in_step():
    n, rounds = 4, 300
    boards = _boards(n)
    seen = [[] for _ in range(n)]

    def run(r):
        session = boards[r].session((0, 0, 0), lambda late, waited: None)
        for k in range(rounds):
            slots = session.slots()
            slots[r][0] = (k + r) % 251
            session.sync()
            seen[r].append([int(s[0]) for s in slots])

    threads = [threading.Thread(target=run, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    for r in range(n):
        assert seen[r] == [[(k + j) % 251 for j in range(n)] for k in range(rounds)]


def test_memory_grows_with_the_ranks_and_only_with_what_is_touched():
    per_rank = 2 * shm.SLOT_BYTES
    extra = shm.segment_bytes(64) - shm.segment_bytes(32) - 32 * per_rank
    assert 0 <= extra <= 32 * 4096 // 16, "linear in the ranks (slots, and control lines of 128 bytes)"
    assert shm.segment_bytes(32) < 32 * per_rank + (1 << 20)
    fd, mapping = shm.new_segment(32)
    try:
        assert os.fstat(fd).st_blocks == 0, "nothing is reserved up front"
        np.frombuffer(mapping, np.uint8)[-1] = 1
        assert 0 < os.fstat(fd).st_blocks * 512 <= 64 << 10, "a touched page is allocated alone"
    finally:
        os.close(fd)
        mapping.close()


def test_leases_take_the_lowest_free_offset_and_agree_between_ranks():
    memory = np.zeros(shm.segment_bytes(2, 256, arena=4096), np.uint8)
    boards = [shm.Board(memory, r, 2, 256) for r in range(2)]
    for b in boards:
        first, second = b.lease(1000), b.lease(100)
        assert [b.offset(first), b.offset(second)] == [0, 1024], "cache-line aligned, in order"
        assert b.lease(4096) is None, "a lease that does not fit is refused"
        b.release(first)
        assert b.offset(b.lease(900)) == 0, "a freed range is reused"
    assert not np.shares_memory(boards[0].arenas[0], boards[1].arenas[1]), "each rank its own arena"
    assert boards[0].offset(np.zeros(8)) is None, "private memory is not in the arena"


def test_the_arena_is_reserved_not_allocated_and_the_other_ranks_map_its_size():
    fd, mapping = shm.new_segment(4, arena=64 << 20)
    try:
        assert os.fstat(fd).st_blocks == 0
        other = shm.map_segment(os.dup(fd), 4)
        board = shm.Board(other, 1, 4)
        assert board.arenas.shape == (4, 64 << 20), "sized by the segment its maker made"
        board.close()
        other.close()
    finally:
        os.close(fd)
        mapping.close()


@pytest.mark.timeout(30)
def test_a_rank_with_another_tag_fails_the_sync_naming_it():
    boards = _boards(2)
    errors = {}

    def run(r):
        session = boards[r].session((7, 1, 10), lambda late, waited: None)
        try:
            session.sync(tag=64) if r == 0 else session.sync()
        except shm.TagMismatch as e:
            errors[r] = e

    threads = [threading.Thread(target=run, args=(r,)) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert list(errors) == [0], "only the tagged rank checks"
    assert errors[0].peer == 1 and errors[0].theirs is None and "no tag" in str(errors[0])
