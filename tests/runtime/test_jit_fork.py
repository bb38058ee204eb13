"""A fork waits for a kernel builder or a numba compile running on another thread: a child
forked in the middle of one inherited its import lock or numba's compiler lock, held by a
thread the child does not have, and hung at its first compiled kernel (a DataLoader's
workers started while another thread ran its first ops)."""

import os
import signal
import sys
import threading
import time

import pytest

from disttorch.kernels import jit

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _fork_and_wait(child, seconds: float = 10.0) -> str:
    """Fork; the child runs ``child()`` (true: exit 0). 'ok', 'failed' or 'hung' (then killed)."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if child() else 3)
        finally:
            os._exit(4)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "ok" if os.waitstatus_to_exitcode(status) == 0 else "failed"
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "hung"


def _start(target) -> threading.Thread:
    started = threading.Event()
    thread = threading.Thread(target=lambda: target(started), daemon=True)
    thread.start()
    started.wait(5)
    return thread


def _hold(context) -> threading.Thread:
    """A thread that holds ``context`` (a lock, a scope) for half a second, started once it has it."""

    def holder(started):
        with context:
            started.set()
            time.sleep(0.5)

    return _start(holder)


@pytest.mark.timeout(30)
def test_a_fork_waits_for_a_builder_importing_on_another_thread(tmp_path, monkeypatch):
    (tmp_path / "slow_to_import_mod.py").write_text("import time\ntime.sleep(0.5)\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def run(started):
        def build():
            started.set()
            import slow_to_import_mod  # noqa: F401 - stands for numba's import

            return "loops"

        jit.compiled(build)

    thread = _start(run)
    try:
        assert _fork_and_wait(lambda: __import__("slow_to_import_mod")) == "ok"
    finally:
        thread.join(5)
        sys.modules.pop("slow_to_import_mod", None)


@pytest.mark.timeout(30)
def test_a_fork_waits_for_a_numba_compile_on_another_thread():
    pytest.importorskip("numba")
    from numba.core.compiler_lock import global_compiler_lock

    thread = _hold(global_compiler_lock)  # as a compile holds it
    try:
        assert _fork_and_wait(lambda: global_compiler_lock._lock.acquire(timeout=5)) == "ok"
    finally:
        thread.join(5)


@pytest.mark.timeout(30)
def test_a_builder_may_wait_for_a_builder_on_another_thread():
    """Builders do not exclude each other (a builder's warm-up may split an op over the pool,
    whose threads build their own kernels)."""

    def inner():
        return "inner"

    def outer():
        thread = threading.Thread(target=jit.compiled, args=(inner,), daemon=True)
        thread.start()
        thread.join(5)
        return not thread.is_alive()

    assert jit.compiled(outer) is True and jit.compiled(inner) == "inner"


@pytest.mark.timeout(30)
def test_a_fork_waits_for_a_random_draw_and_a_first_import_on_another_thread():
    """NumPy's bit generator holds a lock while it draws (without the GIL), and a disttorch
    subpackage imported on first use holds its import lock: a child forked in the middle of
    either hung at its first draw or use of that subpackage. (numba's dispatcher imports
    numpy.ma at its first call: the builders import it, so a fork waits for it.)"""
    import disttorch as dt

    lock = dt.default_generator._engine._bits.lock

    thread = _hold(lock)  # as a draw holds it
    try:
        assert _fork_and_wait(lambda: lock.acquire(timeout=5)) == "ok"
    finally:
        thread.join(5)

    thread = _hold(jit.fork_waits())  # as disttorch.__getattr__ imports a subpackage in it
    try:
        t0 = time.monotonic()
        assert _fork_and_wait(lambda: True) == "ok" and time.monotonic() - t0 > 0.3
    finally:
        thread.join(5)
