"""A warm process that forks the ranks :func:`dist_helpers.run_ranks` starts.

A fresh ``python`` rank spends some 0.7 s importing NumPy, ZeroMQ and disttorch before it
runs a line of its test; the suite starts hundreds of them, one test at a time. The fork
server imports all that once (per pytest worker) and then forks each rank from itself, so a
rank starts in milliseconds with the same modules a fresh one would import.

A fork is a fresh process only where nothing was read from the environment at import time:
the server serves a rank only when that rank's environment equals the server's own but for
the variables that change from run to run (``PER_RUN_VARIABLES``: the ones the launcher sets
per rank, read when the process group starts, and pytest's name of the running test). A
test that adds variables (``env=``, ``rank_envs=``) gets fresh processes, as before; when the
test process's own environment changed (a monkeypatched variable), a new server is started
with it. Each forked rank gets its own OS-seeded default generator and NumPy global state,
as a fresh one does.

The server is the parent of the ranks: it reaps them and reports their exit statuses on its
stdout; :class:`ForkedRank` reads them back and behaves like the part of
:class:`subprocess.Popen` the helpers use (``pid``, ``returncode``, ``poll``, ``wait``,
``kill``). The server ends when its stdin closes (its pytest worker ended).
"""

from __future__ import annotations

import atexit
import io
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any

#: Variables that differ from rank to rank, job to job or test to test; none is read at import.
PER_RUN_VARIABLES = frozenset(
    {
        "RANK",
        "LOCAL_RANK",
        "WORLD_SIZE",
        "LOCAL_WORLD_SIZE",
        "MASTER_ADDR",
        "MASTER_PORT",
        "DISTTORCH_JOB_SECRET",
        "PYTHONUNBUFFERED",
        "PYTEST_CURRENT_TEST",
    }
)

_WARM_MODULES = ("numpy", "zmq", "cloudpickle", "disttorch", "disttorch.distributed")


# ------------------------------------------------------------------------------- server side
def serve() -> None:
    """The server's loop: fork a rank per request line, report each rank's exit."""
    import importlib

    for name in _WARM_MODULES:
        importlib.import_module(name)
    import disttorch.distributed as dist

    dist.init_process_group  # noqa: B018 - loads the lazily imported API, as a rank's first call does
    import dist_helpers

    if threading.active_count() != 1:  # a fork copies only the forking thread: it would be unsafe
        sys.exit(f"the rank fork server has {threading.active_count()} threads after its imports")

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    requests = sys.stdin.buffer
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    while True:
        ready, _, _ = select.select([requests, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
            _report_exits(out)
        if requests in ready:
            line = requests.readline()
            if not line:
                return
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                os.close(wake_r)
                os.close(wake_w)
                _become_rank(request, dist_helpers)
            out.write(f"started {pid}\n")
            out.flush()


def _report_exits(out: Any) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        out.write(f"exited {pid} {os.waitstatus_to_exitcode(status)}\n")
        out.flush()


def _become_rank(request: dict, dist_helpers: Any) -> None:
    """In the forked child: take the rank's environment, output files and fresh seeds, run."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_APPEND)
        os.dup2(target, fd)
        os.close(target)
    # unbuffered, as PYTHONUNBUFFERED makes a fresh rank's: a killed rank's last words are kept
    sys.stdout = sys.__stdout__ = _unbuffered(1, "strict")
    sys.stderr = sys.__stderr__ = _unbuffered(2, "backslashreplace")
    import numpy as np

    import disttorch

    np.random.seed()
    disttorch.default_generator.seed()
    try:
        dist_helpers._child_main(request["job"])
    finally:
        os._exit(70)  # _child_main leaves with os._exit; reaching here is an internal error


def _unbuffered(fd: int, errors: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), errors=errors, write_through=True)


# ------------------------------------------------------------------------------- client side
class _Server:
    """This pytest worker's fork server, started on first use; ``None`` if it could not start."""

    def __init__(self, env: dict, cwd: str) -> None:
        tests = os.path.dirname(os.path.abspath(__file__))
        self.env = env
        self.cwd = cwd
        self.exited: dict[int, int] = {}
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"import sys; sys.path.insert(0, {tests!r}); import rank_forkserver; rank_forkserver.serve()",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self._buffer = b""
        if self._line(60) != "ready":
            raise RuntimeError("the rank fork server did not start")

    def alive(self) -> bool:
        return self._proc.poll() is None

    def fork(self, job: str, env: dict, stdout: str, stderr: str) -> ForkedRank:
        request = {"job": job, "env": env, "cwd": self.cwd, "stdout": stdout, "stderr": stderr}
        self._proc.stdin.write(json.dumps(request).encode() + b"\n")
        self._proc.stdin.flush()
        line = self._line(30)
        if not line.startswith("started "):
            raise RuntimeError(f"the rank fork server answered {line!r} to a fork request")
        pid = int(line.split()[1])
        self.exited.pop(pid, None)  # an earlier rank's report, had the system reused its pid
        return ForkedRank(self, pid)

    def pump(self, timeout: float) -> None:
        """Read the exits reported within ``timeout`` seconds."""
        self._line(timeout, until_exit=True)

    def _line(self, timeout: float, until_exit: bool = False) -> str:
        """The next line that is not an exit report (recording those), or "" at the timeout."""
        deadline = time.monotonic() + timeout
        fd = self._proc.stdout.fileno()
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                text = line.decode()
                if text.startswith("exited "):
                    _, pid, code = text.split()
                    self.exited[int(pid)] = int(code)
                    if until_exit:
                        return text
                else:
                    return text
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return ""
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError("the rank fork server ended")
            self._buffer += chunk

    def close(self) -> None:
        """End the server (its ranks, if any are left, run on)."""
        self._proc.stdin.close()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc.stdout.close()


class ForkedRank:
    """A rank the fork server started: the part of :class:`subprocess.Popen` the helpers use."""

    def __init__(self, server: _Server, pid: int) -> None:
        self._server = server
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._server.pump(0)
            self.returncode = self._server.exited.pop(self.pid, None)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = 1.0 if deadline is None else deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(f"rank {self.pid}", timeout)
            self._server.pump(min(left, 1.0))
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:  # (an exit already reported: its pid may be another's by now)
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


_server: _Server | None = None
_broken = False


@atexit.register
def _close_server() -> None:
    if _server is not None:
        _server.close()


def server_for(env: dict, cwd: str) -> _Server | None:
    """This worker's fork server for ranks with environment ``env`` in ``cwd`` (one started
    anew when the environment changed), or ``None`` if none can start."""
    global _server, _broken
    if _broken or os.environ.get("DISTTORCH_TESTS_FRESH_RANKS") == "1":
        return None
    base = _base_env(env)
    if _server is not None and not (_server.alive() and _server.env == base and _server.cwd == cwd):
        _server.close()
        _server = None
    if _server is None:
        try:
            _server = _Server(base, cwd)
        except (OSError, RuntimeError):
            _broken = True
    return _server


def _base_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if k not in PER_RUN_VARIABLES}
