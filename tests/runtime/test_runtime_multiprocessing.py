"""torch.multiprocessing: tensors in shared memory across processes (Hogwild), queues, spawn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import disttorch
import disttorch.multiprocessing as mp

ROOT = Path(__file__).resolve().parents[2]


def _run_script(tmp_path: Path, body: str, *args: str, timeout: float = 150) -> str:
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


HOGWILD = """
    import os
    import sys
    import disttorch as torch
    import disttorch.multiprocessing as mp
    from disttorch import nn


    def train(rank, model, barrier, lock):
        opt = torch.optim.SGD(model.parameters(), lr=1.0)
        barrier.wait()                  # both processes hold the shared model before either updates
        for p in model.parameters():
            p.grad = torch.full(p.shape, float(rank + 1))
        with lock:                      # Hogwild's read-modify-writes may race; the test wants both
            opt.step()                  # p -= (rank + 1), in the shared memory
        barrier.wait()
        line = f"child {rank} {model.weight.is_shared()} {type(model.weight).__name__}\\n"
        os.write(1, line.encode())      # one write: the two children's lines never interleave


    if __name__ == "__main__":
        mp.set_start_method(sys.argv[1], force=True)
        model = nn.Linear(3, 2)
        with torch.no_grad():
            for p in model.parameters():
                p.zero_()
        model.share_memory()
        barrier, lock = mp.Barrier(2), mp.Lock()
        procs = [mp.Process(target=train, args=(r, model, barrier, lock)) for r in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
        print("parent", model.weight.tolist(), model.bias.tolist())
"""


@pytest.mark.timeout(180)
@pytest.mark.parametrize("method", ["spawn", "fork", "forkserver"])
def test_hogwild_updates_of_both_processes_land_in_one_model(tmp_path, method):
    out = _run_script(tmp_path, HOGWILD, method)
    assert "parent [[-3.0, -3.0, -3.0], [-3.0, -3.0, -3.0]] [-3.0, -3.0]" in out, out
    if method != "fork":  # pickled across: still shared, still a Parameter
        assert "child 0 True Parameter" in out and "child 1 True Parameter" in out


QUEUE = """
    import disttorch as torch
    import disttorch.multiprocessing as mp
    from disttorch import nn


    def worker(inq, outq):
        t = inq.get()
        p = inq.get()
        t.add_(10)                                 # seen by the parent: same memory
        outq.put((t.is_shared(), type(p).__name__, p.requires_grad, torch.ones(2) * 5))
        assert inq.get() == "stop"


    if __name__ == "__main__":
        ctx = mp.get_context("spawn")
        inq, outq = ctx.Queue(), ctx.Queue()
        proc = ctx.Process(target=worker, args=(inq, outq))
        proc.start()
        t = torch.arange(4, dtype=torch.float32)
        inq.put(t)
        inq.put(nn.Parameter(torch.ones(2)))
        shared, kind, rg, made = outq.get(timeout=60)
        print("result", t.tolist(), t.is_shared(), shared, kind, rg, made.tolist(), made.is_shared())
        inq.put("stop")
        proc.join(30)
        from multiprocessing.reduction import ForkingPickler  # what queues pickle with
        try:
            ForkingPickler.dumps(torch.ones(2, requires_grad=True) * 2)
        except RuntimeError as e:
            print("refused", "autograd does not support crossing process boundaries" in str(e))
"""


@pytest.mark.timeout(120)
def test_tensors_through_queues_share_memory_with_the_sender(tmp_path):
    out = _run_script(tmp_path, QUEUE)
    assert "result [10.0, 11.0, 12.0, 13.0] True True Parameter True [5.0, 5.0] True" in out, out
    assert "refused True" in out


SPAWN = """
    import sys
    import disttorch.multiprocessing as mp


    def ok(i, path):
        open(f"{path}/done{i}", "w").close()


    def raises(i):
        if i == 1:
            raise ValueError("bad rank 1")


    def exits(i):
        sys.exit(3 if i == 0 else 0)


    if __name__ == "__main__":
        mp.spawn(ok, args=(sys.argv[1],), nprocs=2)
        try:
            mp.spawn(raises, nprocs=2)
        except mp.ProcessRaisedException as e:
            print("raised", e.error_index, "ValueError: bad rank 1" in str(e))
        try:
            mp.start_processes(exits, nprocs=2, start_method="fork")
        except mp.ProcessExitedException as e:
            print("exited", e.error_index, e.exit_code)
        ctx = mp.spawn(ok, args=(sys.argv[1],), nprocs=1, join=False)
        while not ctx.join():
            pass
        print("context", len(ctx.pids()))
"""


@pytest.mark.timeout(180)
def test_spawn_runs_fn_per_index_and_raises_the_first_failure(tmp_path):
    out = _run_script(tmp_path, SPAWN, str(tmp_path))
    assert (tmp_path / "done0").exists() and (tmp_path / "done1").exists()
    assert "raised 1 True" in out and "exited 0 3" in out and "context 1" in out, out


def test_share_memory_in_place_and_views_stay_shared():
    t = disttorch.arange(6, dtype=disttorch.float32)
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    data = t._data
    t.share_memory_()
    assert t._data is data  # idempotent
    assert t.view(2, 3)[1].is_shared() and t.tolist() == [0, 1, 2, 3, 4, 5]
    m = disttorch.nn.Linear(2, 2)
    w = m.weight
    m.share_memory()
    assert m.weight is w and all(p.is_shared() for p in m.parameters())
    assert not disttorch.zeros(1).is_shared()
    empty = disttorch.zeros(0).share_memory_()
    assert empty.is_shared() and empty.shape == (0,)


def test_sharing_strategies_and_api_surface():
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert mp.get_sharing_strategy() == "file_descriptor"
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError, match="unknown sharing strategy"):
        mp.set_sharing_strategy("nope")
    for name in (
        "Process",
        "Queue",
        "SimpleQueue",
        "Pool",
        "get_context",
        "set_start_method",
        "cpu_count",
        "spawn",
        "start_processes",
        "Barrier",
        "Event",
        "Lock",
    ):
        assert hasattr(mp, name), name
    with pytest.raises(ValueError, match="nprocs"):
        mp.spawn(print, nprocs=0)


def test_plain_pickle_still_copies():
    import pickle

    t = disttorch.ones(3).share_memory_()
    back = pickle.loads(pickle.dumps(t))
    back.add_(1)
    assert t.tolist() == [1.0, 1.0, 1.0] and not back.is_shared()
    np.testing.assert_array_equal(back.numpy(), [2, 2, 2])


def _stop_self_unless_first(i):
    if i:
        os.kill(os.getpid(), signal.SIGSTOP)


def _stop_self(i):
    os.kill(os.getpid(), signal.SIGSTOP)


def _children_of_this_process():
    path = f"/proc/{os.getpid()}/task/{os.getpid()}/children"
    return open(path).read().split() if os.path.exists(path) else []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process states from /proc")
def test_spawn_ends_children_stopped_with_nothing_else_running(monkeypatch):
    """A child SIGSTOPped after its sibling ended made spawn(join=True) wait forever."""
    monkeypatch.setattr(sys.modules["disttorch.multiprocessing.spawn"], "STOPPED_GRACE_S", 0.3)
    before = _children_of_this_process()
    with pytest.raises(mp.ProcessExitedException, match=r"processes \[1\] stayed stopped") as info:
        mp.spawn(_stop_self_unless_first, nprocs=2, start_method="fork")
    assert info.value.error_index == 1 and info.value.exit_code < 0
    assert _children_of_this_process() == before


class Interrupt(Exception):
    pass


def _interrupt(*_):
    raise Interrupt


@pytest.mark.timeout(60)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process states from /proc")
def test_interrupted_spawn_ends_its_stopped_children(monkeypatch):
    """An exception (here from a signal, SIGUSR1: pytest-timeout's alarm stays armed) in the
    waiting parent ends its children first."""
    monkeypatch.setattr(sys.modules["disttorch.multiprocessing.spawn"], "STOPPED_GRACE_S", 60.0)
    before = _children_of_this_process()
    old = signal.signal(signal.SIGUSR1, _interrupt)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGUSR1))
    try:
        timer.start()
        with pytest.raises(Interrupt):
            mp.spawn(_stop_self, nprocs=2, start_method="fork")
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, old)
    assert _children_of_this_process() == before


@pytest.mark.timeout(60)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process states from /proc")
def test_spawn_interrupted_while_starting_ends_the_children_it_started(monkeypatch):
    """An interrupt between two starts (a Ctrl-C, a timer's signal on a loaded machine) left the
    first child running: here stopped, for ever."""
    import multiprocessing.context

    start = multiprocessing.context.ForkProcess.start
    started = []

    def start_once(self):
        if started:
            raise Interrupt
        start(self)
        started.append(self)

    monkeypatch.setattr(multiprocessing.context.ForkProcess, "start", start_once)
    before = _children_of_this_process()
    try:
        with pytest.raises(Interrupt):
            mp.spawn(_stop_self, nprocs=2, start_method="fork")
        assert _children_of_this_process() == before
    finally:
        for p in started:
            p.kill()
            p.join()
