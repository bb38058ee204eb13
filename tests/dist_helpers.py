"""Run a function or a script on N real processes, as the ranks of one job, and collect results.

    from dist_helpers import run_ranks, run_script

    def work(rank, world_size, n):          # module-level function of a test file
        import disttorch.distributed as dist
        dist.init_process_group()
        ...
        return something_picklable

    results = run_ranks(work, 4, args=(10,), timeout=30)   # -> [value of rank 0, ...]

Each rank is a new process (never a fork of the test process) with the environment
``disttorch-launch`` would give it: ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
``LOCAL_WORLD_SIZE``, ``MASTER_ADDR=127.0.0.1``, a free ``MASTER_PORT`` and a fresh
``DISTTORCH_JOB_SECRET``, plus ``env``. The ranks of a :func:`run_ranks` call without
``env`` or ``rank_envs`` are forked from a warm process that has imported disttorch already
(:mod:`rank_forkserver`; ``DISTTORCH_TESTS_FRESH_RANKS=1`` turns that off); the others, and
every :func:`run_script` rank, are fresh ``python`` processes. The function is found again
in the child by its module file and name; arguments and results travel with cloudpickle
through files.

Every call has a ``timeout``: ranks still running then are killed and reported, so a bug
fails the test instead of hanging it. If a rank raises, :func:`run_ranks` raises
:class:`RanksFailed` listing every rank's exception and traceback (or, with
``check=False``, returns :class:`RankResult` objects so a test can assert on the errors).
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import cloudpickle
import rank_forkserver

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class RankResult:
    """What one rank did: its return value or its exception, output and exit code."""

    rank: int
    value: Any = None
    error: BaseException | None = None
    traceback: str = ""
    stdout: str = ""
    stderr: str = ""
    returncode: int | None = None
    elapsed: float = 0.0
    killed: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0 and not self.killed

    def describe(self) -> str:
        if self.killed:
            state = "killed at the timeout"
        elif self.error is not None:
            state = f"raised {type(self.error).__name__}: {self.error}\n{self.traceback}"
        else:
            state = f"exited with code {self.returncode}"
        tail = "\n".join(self.stderr.strip().splitlines()[-15:])
        return f"rank {self.rank} {state}" + (f"\n  stderr (tail):\n{tail}" if tail else "")


class RanksFailed(AssertionError):
    """Some ranks raised, crashed or timed out; ``results`` holds every rank's outcome."""

    def __init__(self, results: list[RankResult]) -> None:
        self.results = results
        bad = [r.describe() for r in results if not r.ok]
        super().__init__(f"{len(bad)} of {len(results)} ranks failed:\n" + "\n".join(bad))


def free_port() -> int:
    """A TCP port that was free a moment ago on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_env(rank: int, world_size: int, port: int, secret: str, env: dict | None) -> dict:
    """The environment of one rank (what the launcher sets), merged with ``env``."""
    out = dict(os.environ)
    out.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_WORLD_SIZE=str(world_size),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        DISTTORCH_JOB_SECRET=secret,
        PYTHONUNBUFFERED="1",
    )
    out["PYTHONPATH"] = os.pathsep.join(p for p in (REPO, out.get("PYTHONPATH", "")) if p)
    out.update({k: str(v) for k, v in (env or {}).items()})
    return out


def _wait_all(procs: list[subprocess.Popen], timeout: float) -> tuple[list[bool], list[float]]:
    """Wait for every process until ``timeout``; kill the rest. Returns (killed, elapsed).
    Interrupted (the test's own timeout, Ctrl-C), it kills them all: no rank outlives its test."""
    start = time.monotonic()
    deadline = start + timeout
    killed, elapsed = [False] * len(procs), [0.0] * len(procs)
    try:
        for i, p in enumerate(procs):
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                killed[i] = True
            elapsed[i] = time.monotonic() - start
    except BaseException:
        for p in procs:
            p.kill()
            p.wait()
        raise
    return killed, elapsed


def _collect(procs: list[subprocess.Popen], outs: list, errs: list) -> tuple[list[str], list[str]]:
    stdout, stderr = [], []
    for o, e in zip(outs, errs):
        o.seek(0)
        e.seek(0)
        stdout.append(o.read().decode("utf-8", "replace"))
        stderr.append(e.read().decode("utf-8", "replace"))
        o.close()
        e.close()
    return stdout, stderr


def _start(
    cmd: list[str],
    world_size: int,
    env: dict | None,
    rank_envs: Sequence[dict] | None,
    cwd: str | None,
    job: str | None = None,
) -> list[tuple[subprocess.Popen | rank_forkserver.ForkedRank, Any, Any]]:
    """Start the ranks: forked from the warm server when ``job`` (a :func:`run_ranks` job
    file) is given and the ranks need no variables of their own, else as ``cmd``."""
    port, secret = free_port(), secrets.token_hex(32)
    forked = job is not None and not (env or rank_envs)
    started = []
    for rank in range(world_size):
        e = rank_env(rank, world_size, port, secret, env)
        if rank_envs:
            e.update({k: str(v) for k, v in rank_envs[rank].items()})
        out, err = tempfile.NamedTemporaryFile(), tempfile.NamedTemporaryFile()
        server = rank_forkserver.server_for(e, cwd or REPO) if forked else None
        if server is not None:
            proc = server.fork(job, e, out.name, err.name)
        else:
            proc = subprocess.Popen(cmd, env=e, stdout=out, stderr=err, cwd=cwd or REPO)
        started.append((proc, out, err))
    return started


def run_ranks(
    fn: Callable[..., Any],
    world_size: int,
    args: tuple = (),
    *,
    timeout: float = 60,
    env: dict | None = None,
    rank_envs: Sequence[dict] | None = None,
    check: bool = True,
) -> list:
    """Run ``fn(rank, world_size, *args)`` on ``world_size`` fresh processes.

    Args:
        fn: a module-level function (found again in the child by module file and name).
        world_size: number of ranks.
        args: extra arguments (cloudpickled).
        timeout: seconds for the whole run; ranks still running are killed.
        env: extra environment for every rank; ``rank_envs[r]``: extra for rank ``r``.
        check: raise :class:`RanksFailed` if any rank failed; return the values.

    Returns:
        The ranks' return values (``check=True``) or their :class:`RankResult` list.
    """
    with tempfile.TemporaryDirectory(prefix="disttorch-test-") as tmp:
        job = os.path.join(tmp, "job.pkl")
        module = sys.modules[fn.__module__]
        with open(job, "wb") as f:
            cloudpickle.dump(
                {"file": os.path.abspath(module.__file__), "name": fn.__qualname__, "args": args, "out": tmp},
                f,
            )
        cmd = [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
            f"import dist_helpers; dist_helpers._child_main({job!r})",
        ]
        started = _start(cmd, world_size, env, rank_envs, None, job)
        procs = [p for p, _, _ in started]
        killed, elapsed = _wait_all(procs, timeout)
        stdout, stderr = _collect(procs, [o for _, o, _ in started], [e for _, _, e in started])
        results = []
        for rank, p in enumerate(procs):
            r = RankResult(
                rank,
                stdout=stdout[rank],
                stderr=stderr[rank],
                returncode=p.returncode,
                elapsed=elapsed[rank],
                killed=killed[rank],
            )
            path = os.path.join(tmp, f"rank{rank}.pkl")
            if os.path.exists(path):
                with open(path, "rb") as f:
                    try:
                        outcome = pickle.load(f)
                    except Exception as e:  # noqa: BLE001 - e.g. an exception that cannot be rebuilt
                        outcome = {
                            "value": None,
                            "traceback": "",
                            "error": RuntimeError(f"rank {rank}'s outcome could not be unpickled: {e!r}"),
                        }
                r.value, r.error, r.traceback = outcome["value"], outcome["error"], outcome["traceback"]
            elif not killed[rank] and p.returncode != 0:
                r.error = RuntimeError(f"rank {rank} died with exit code {p.returncode}")
            results.append(r)
    if check:
        if not all(r.ok for r in results):
            raise RanksFailed(results)
        return [r.value for r in results]
    return results


def run_script(
    path: str,
    world_size: int,
    script_args: Sequence[str] = (),
    *,
    timeout: float = 60,
    env: dict | None = None,
    rank_envs: Sequence[dict] | None = None,
    cwd: str | None = None,
) -> list[RankResult]:
    """Run ``python path *script_args`` as ``world_size`` ranks; return each rank's outcome
    (exit code, stdout, stderr; ``killed`` if it outlived ``timeout``)."""
    started = _start([sys.executable, path, *script_args], world_size, env, rank_envs, cwd)
    procs = [p for p, _, _ in started]
    killed, elapsed = _wait_all(procs, timeout)
    stdout, stderr = _collect(procs, [o for _, o, _ in started], [e for _, _, e in started])
    return [
        RankResult(
            rank,
            stdout=stdout[rank],
            stderr=stderr[rank],
            returncode=p.returncode,
            elapsed=elapsed[rank],
            killed=killed[rank],
        )
        for rank, p in enumerate(procs)
    ]


def _child_main(job_path: str) -> None:
    """Entry point of a rank started by :func:`run_ranks`."""
    with open(job_path, "rb") as f:
        job = pickle.load(f)
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    outcome: dict = {"value": None, "error": None, "traceback": ""}
    sys.path.insert(0, os.path.dirname(job["file"]))  # the test's own folder, as pytest puts it first
    try:
        spec = importlib.util.spec_from_file_location(f"_dist_test_{rank}", job["file"])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = module
        for part in job["name"].split("."):
            fn = getattr(fn, part)
        outcome["value"] = fn(rank, world_size, *job["args"])
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        outcome["error"], outcome["traceback"] = e, traceback.format_exc()
    path = os.path.join(job["out"], f"rank{rank}.pkl")
    try:
        data = cloudpickle.dumps(outcome)
    except Exception as e:  # noqa: BLE001 - an unpicklable value or exception
        data = cloudpickle.dumps(
            {
                "value": None,
                "error": RuntimeError(repr(outcome["error"] or e)),
                "traceback": outcome["traceback"],
            }
        )
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    dist = sys.modules.get("disttorch.distributed")
    if dist is not None and dist.is_initialized():
        try:  # say goodbye to the peers, as a script ending normally does at exit
            dist.destroy_process_group()
        except Exception:  # noqa: BLE001 - the outcome is already recorded
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if outcome["error"] is None else 1)
