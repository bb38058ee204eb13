"""Persistent DataLoader workers that die, stop or are inherited by a fork between passes."""

import os
import signal
import time

import pytest

from disttorch.utils.data import DataLoader, Dataset, IterableDataset


class Pid(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return os.getpid()


def _loader(timeout=0):
    loader = DataLoader(Pid(), batch_size=None, num_workers=2, persistent_workers=True, timeout=timeout)
    assert len(list(loader)) == 4
    return loader


@pytest.mark.timeout(60)
def test_a_worker_killed_between_passes_fails_the_next_pass_naming_it():
    loader = _loader()
    victim = loader._pool.workers[0]
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(5)
    with pytest.raises(
        RuntimeError, match=rf"DataLoader worker \(pid {victim.pid}\) is killed by signal: Killed"
    ):
        list(loader)  # it started new workers silently (worker_init_fn again, random streams reset)
    assert loader._pool is None
    assert len(list(loader)) == 4  # the pass after starts new ones


@pytest.mark.timeout(60)
def test_a_worker_stopped_between_passes_ends_the_next_pass_in_its_timeout():
    loader = _loader(timeout=0.5)
    workers = loader._pool.workers
    os.kill(workers[0].pid, signal.SIGSTOP)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.5 seconds"):
        list(loader)  # it waited forever for the stopped worker's acknowledgement
    assert time.monotonic() - start < 3
    assert not any(w.is_alive() for w in workers)


@pytest.mark.timeout(60)
def test_a_forked_child_starts_its_own_workers_and_leaves_its_parents():
    loader = _loader()
    pids = sorted(w.pid for w in loader._pool.workers)
    child = os.fork()
    if child == 0:  # it raised 'can only test a child process'; dropping the loader stopped the parent's
        ok = False
        try:
            ok = sorted(set(loader)) != pids
            del loader
        finally:
            os._exit(0 if ok else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0
    assert sorted(set(loader)) == pids


class FailsSecondTime(IterableDataset):
    def __init__(self):
        self.passes = 0

    def __iter__(self):
        self.passes += 1  # (each worker's copy counts its own passes)
        if self.passes == 2:
            raise ValueError("no second pass")
        return iter(range(4))


@pytest.mark.timeout(60)
def test_an_iterable_dataset_failing_to_restart_raises_its_error_naming_the_worker():
    loader = DataLoader(FailsSecondTime(), batch_size=None, num_workers=2, persistent_workers=True, timeout=5)
    assert sorted(loader) == [0, 0, 1, 1, 2, 2, 3, 3]
    # the worker died with the error printed, and the pass failed as 'exited unexpectedly'
    with pytest.raises(
        ValueError, match=r"(?s)^Caught ValueError in DataLoader worker process \d\..*no second pass"
    ):
        list(loader)
    assert loader._pool is None
