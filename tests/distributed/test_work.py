"""``Work`` handles: waiting with a timeout given as PyTorch gives it (a ``timedelta``)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from disttorch.distributed.engine.work import Work


def test_wait_takes_a_timedelta_and_times_out_on_pending_work():
    work = Work("all_reduce(float32[4]) #1")
    with pytest.raises(TimeoutError, match=r"all_reduce\(float32\[4\]\) #1 did not complete within 0.05 s"):
        work.wait(timeout=timedelta(milliseconds=50))
    with pytest.raises(TimeoutError):
        work.wait(0.05)  # seconds, as before


def test_wait_with_a_timedelta_returns_true_once_done():
    work = Work("barrier() #2")
    threading.Timer(0.05, work._complete).start()
    assert work.wait(timeout=timedelta(seconds=30)) is True
    assert work.wait(timedelta(seconds=1)) is True


def test_a_zero_timedelta_means_no_limit_as_in_pytorch():
    work = Work("broadcast(float32[1], root=0) #3")
    threading.Timer(0.05, work._complete).start()
    assert work.wait(timedelta(0)) is True


@pytest.mark.parametrize("bad", ["5", [1], True])
def test_wait_rejects_other_timeouts_clearly(bad):
    with pytest.raises(TypeError, match="timedelta or seconds"):
        Work("x").wait(bad)
    with pytest.raises(ValueError, match="must not be negative"):
        Work("x").wait(timedelta(seconds=-1))
