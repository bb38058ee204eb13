"""The op pool (kernels/thread_pool.py): every part runs once, on the thread it was handed
to, in the caller's context; errors come back to the caller after every part finished; the
hand-off works whether the waiting threads spin (numba) or sleep, and after pauses that
put them to sleep."""

from __future__ import annotations

import contextvars
import random
import sys
import threading
import time

import pytest

from disttorch.kernels.thread_pool import OpPool

pytestmark = pytest.mark.timeout(60)

_marker: contextvars.ContextVar = contextvars.ContextVar("marker", default="unset")


@pytest.fixture(params=["spin", "sleep", "sleep at once"])
def pool(request, monkeypatch):
    """A pool of three workers: spinning before sleeping (when numba is installed), without
    the compiled loops, or spinning for a single turn (every wait takes the sleeping path)."""
    if request.param == "sleep":
        monkeypatch.setenv("DISTTORCH_JIT", "0")
    made = OpPool(3)
    if request.param != "sleep" and made.spin is None:
        made.close()
        pytest.skip("numba is not installed: the pool cannot spin")
    if request.param == "sleep at once":
        made.turns = 1
    yield made
    made.close()


def _parts(log: list, count: int, pause: float = 0.0) -> list:
    def body(start: int, stop: int) -> None:
        if pause:
            time.sleep(pause)
        log.append((start, stop, threading.current_thread().name, _marker.get()))

    return [(body, i, i + 1) for i in range(count)]


def test_each_part_runs_once_on_its_thread_in_the_callers_context(pool):
    log: list = []
    token = _marker.set("caller's")
    try:
        pool.run(_parts(log, 4))
    finally:
        _marker.reset(token)
    assert sorted(log) == [
        (0, 1, threading.current_thread().name, "caller's"),
        (1, 2, "disttorch-intraop_0", "caller's"),
        (2, 3, "disttorch-intraop_1", "caller's"),
        (3, 4, "disttorch-intraop_2", "caller's"),
    ]


def test_fewer_parts_than_workers_leave_the_others_idle(pool):
    for count in (1, 2, 3, 2, 1):
        log: list = []
        pool.run(_parts(log, count))
        assert sorted(entry[:2] for entry in log) == [(i, i + 1) for i in range(count)]


def test_parts_after_pauses_long_enough_for_the_workers_to_sleep(pool):
    for pause in (0.0, 0.005, 0.05):
        time.sleep(pause)
        log: list = []
        pool.run(_parts(log, 4))
        assert len(log) == 4


def test_a_caller_that_sleeps_for_a_long_part_is_woken(pool):
    log: list = []
    started = time.perf_counter()
    pool.run([(lambda i, j: None, 0, 1)] + _parts(log, 3, pause=0.05)[1:])
    assert len(log) == 2 and time.perf_counter() - started < 5


def test_a_workers_error_reaches_the_caller_after_every_part_finished(pool):
    log: list = []

    def fails(start: int, stop: int) -> None:
        raise ValueError(f"part {start} failed")

    parts = _parts(log, 4, pause=0.02)
    parts[2] = (fails, 2, 3)
    with pytest.raises(ValueError, match="part 2 failed"):
        pool.run(parts)
    assert len(log) == 3  # the others ran to the end
    pool.run(_parts(log, 4))  # and the pool still works
    assert len(log) == 7


def test_the_callers_error_waits_for_the_workers(pool):
    log: list = []

    def fails(start: int, stop: int) -> None:
        raise KeyError("caller")

    with pytest.raises(KeyError):
        pool.run([(fails, 0, 1)] + _parts(log, 4, pause=0.02)[1:])
    assert len(log) == 3


def test_an_interrupted_wait_is_finished_before_the_next_split(pool, monkeypatch):
    """Ctrl-C while the caller waits (a ``KeyboardInterrupt`` out of its wait): the workers'
    parts still run to the end, the next split waits for them before posting its own, and
    nothing is lost or run twice."""
    log: list = []
    waits = pool._spin

    def interrupted(index: int, value: int) -> bool:
        monkeypatch.setattr(pool, "_spin", waits)  # only the first wait is interrupted
        raise KeyboardInterrupt

    monkeypatch.setattr(pool, "_spin", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pool.run([(lambda i, j: None, 0, 1)] + _parts(log, 4, pause=0.05)[1:])
    assert pool.busy == 3
    pool.run(_parts(log, 4))
    assert sorted(entry[:2] for entry in log) == sorted([(1, 2), (2, 3), (3, 4)] * 2 + [(0, 1)])
    assert pool.busy == 0


def test_many_hand_offs_of_uneven_parts_lose_none(pool):
    rng = random.Random(0)
    counts = [0] * 4
    lock = threading.Lock()

    def body(start: int, stop: int) -> None:
        if rng.random() < 0.05:
            time.sleep(rng.choice([0.0001, 0.003]))
        with lock:
            counts[start] += 1

    for _ in range(2000):
        pool.run([(body, i, i + 1) for i in range(4)])
    assert counts == [2000] * 4


def test_close_stops_the_workers():
    made = OpPool(2)
    made.run(_parts([], 3))
    made.close()
    assert not any(thread.is_alive() for thread in made.threads)


def test_without_numba_the_pool_sleeps(monkeypatch):
    monkeypatch.setenv("DISTTORCH_JIT", "0")
    made = OpPool(1)
    try:
        assert made.spin is None and made.turns == 0
        log: list = []
        made.run(_parts(log, 2))
        assert len(log) == 2
    finally:
        made.close()


def _cpu_seconds(thread: threading.Thread) -> float:
    """CPU time a thread has used so far (Linux: /proc/self/task/<tid>/stat)."""
    import os

    fields = open(f"/proc/self/task/{thread.native_id}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_idle_workers_stop_spinning_and_sleep(pool):
    pool.run(_parts([], 4))
    time.sleep(0.2)  # a spin lasts SPIN_SECONDS (5 ms), then the workers sleep
    before = [_cpu_seconds(thread) for thread in pool.threads]
    time.sleep(0.5)
    used = [_cpu_seconds(thread) - start for thread, start in zip(pool.threads, before)]
    assert max(used) < 0.05, f"idle workers used {used} s of CPU in 0.5 s"
