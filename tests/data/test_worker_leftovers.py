"""A DataLoader worker ended by SIGTERM (the launcher stopping its ranks' process groups on
Ctrl-C; its parent's death, tested in test_dist_no_leftovers) leaves no temporary directory
behind: a worker that passed a tensor in shared memory has multiprocessing's ``pymp-*``
directory holding its resource sharer's listening socket, which only a normal exit removed.
A worker's Ctrl-C is quiet, as PyTorch's (the main process reports it)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import tempfile
import time
from collections.abc import Iterator

import pytest

import disttorch
import disttorch.multiprocessing  # noqa: F401 - tensors cross in shared memory
from disttorch.utils.data import DataLoader


def _wait_gone(workers: list, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(w.is_alive() for w in workers):
        time.sleep(0.02)


@pytest.fixture
def ctrl_c_interrupts() -> Iterator[None]:
    """Python's SIGINT handler in this process, and so in the workers it forks, as an
    interactive program has: pytest started with SIGINT ignored (a background job, ``nohup``)
    would fork workers that ignore it, as PyTorch's would, and the Ctrl-C'd one stayed."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.timeout(60)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and signals")
def test_workers_ended_by_sigterm_leave_no_temporary_directory_and_sigint_is_quiet(
    tmp_path, monkeypatch, capfd, ctrl_c_interrupts
):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delitem(multiprocessing.process.current_process()._config, "tempdir", raising=False)
    others = set(multiprocessing.active_children())
    loader = DataLoader([disttorch.ones(4)] * 64, batch_size=2, num_workers=2, persistent_workers=True)
    it = iter(loader)
    for _ in range(4):
        next(it)
    workers = [c for c in multiprocessing.active_children() if c not in others]
    try:
        made = sorted(os.listdir(tmp_path))
        assert len(made) == 2 and all(d.startswith("pymp-") for d in made), made
        os.kill(workers[0].pid, signal.SIGTERM)
        os.kill(workers[1].pid, signal.SIGINT)
        _wait_gone(workers)
        assert sorted(os.listdir(tmp_path)) == []
        assert [w.exitcode for w in workers] == [-signal.SIGTERM, 0]
        assert "Traceback" not in capfd.readouterr().err
    finally:
        del it
        loader._shutdown_pool()
