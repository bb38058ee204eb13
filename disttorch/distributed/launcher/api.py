"""``torch.distributed.launcher.api``: run a function (or a program) on a node's worth of
worker processes from Python, as ``torchrun`` runs a script (accelerate's
``notebook_launcher`` calls it this way).

``elastic_launch(config, entrypoint)(*args)`` starts ``config.nproc_per_node`` workers with
``config.start_method``, each with the environment ``torchrun`` gives its workers (``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``/``MASTER_PORT`` from ``rdzv_endpoint``, or a free
local port, ``TORCHELASTIC_*``, ``TORCHELASTIC_ERROR_FILE`` a fresh path per rank and attempt
under a temporary folder, removed after a success) and the job's secret (``DISTTORCH_JOB_SECRET``: the caller's,
else a fresh one that only this node's workers know), so that ``init_process_group()`` in
the workers needs no arguments. It waits for all of them and returns their return values by
local rank. When one fails, the others are stopped and, up to ``max_restarts`` times, all are
started again (``TORCHELASTIC_RESTART_COUNT`` counts); then ``ChildFailedError`` names the
first failure with its traceback. Several nodes (``min_nodes == max_nodes > 1``) need the
``static`` rendezvous: ``rdzv_configs={"rank": node_rank}``, the same ``rdzv_endpoint``
and ``DISTTORCH_JOB_SECRET`` on every node; node counts that may change are refused.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable
from typing import Any

from ..base.auth import ENV_SECRET, generate_secret
from ..elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

__all__ = ["LaunchConfig", "elastic_launch", "launch_agent"]


@dataclasses.dataclass
class LaunchConfig:
    """PyTorch's launch settings (its field names and defaults). disttorch reads
    ``min_nodes``/``max_nodes``, ``nproc_per_node``, ``run_id``, ``role``, ``rdzv_endpoint``,
    ``rdzv_configs["rank"]``, ``max_restarts``, ``monitor_interval`` and ``start_method``; the
    others are kept for PyTorch's signature (``numa_options``, a ``torch.numa.binding.NumaOptions``,
    binds nothing: each worker keeps the cores it was given)."""

    min_nodes: int
    max_nodes: int
    nproc_per_node: int
    logs_specs: Any = None
    run_id: str = ""
    role: str = "default_role"
    rdzv_endpoint: str = ""
    rdzv_backend: str = "etcd"
    rdzv_configs: dict = dataclasses.field(default_factory=dict)
    rdzv_timeout: int = -1
    max_restarts: int = 3
    monitor_interval: float = 0.1
    start_method: str = "spawn"
    log_line_prefix_template: str | None = None
    metrics_cfg: dict = dataclasses.field(default_factory=dict)
    local_addr: str | None = None
    event_log_handler: str = "null"
    numa_options: Any = None
    signals_to_handle: str = "SIGTERM,SIGINT,SIGHUP,SIGQUIT"
    duplicate_stdout_filters: list | None = None
    duplicate_stderr_filters: list | None = None
    virtual_local_rank: bool = False
    shutdown_timeout: int | None = None

    def __post_init__(self) -> None:
        if self.min_nodes != self.max_nodes:
            raise ValueError(
                f"disttorch launches a fixed number of nodes: min_nodes ({self.min_nodes}) must equal "
                f"max_nodes ({self.max_nodes})"
            )
        if self.nproc_per_node < 1:
            raise ValueError(f"nproc_per_node must be at least 1, got {self.nproc_per_node}")
        if self.rdzv_timeout != -1:
            self.rdzv_configs["timeout"] = self.rdzv_timeout


class elastic_launch:  # noqa: N801 - PyTorch's name
    """``elastic_launch(config, entrypoint)(*args)``: run ``entrypoint`` (a function, or a
    program's path) on ``config.nproc_per_node`` workers; returns ``{local_rank: result}``
    (a program's result is None)."""

    def __init__(
        self, config: LaunchConfig, entrypoint: Callable | str | None, health_check_server: Any = None
    ):
        self._config, self._entrypoint = config, entrypoint

    def __call__(self, *args: Any) -> dict[int, Any]:
        return launch_agent(self._config, self._entrypoint, list(args))


def launch_agent(
    config: LaunchConfig, entrypoint: Callable | str | None, args: list, health_check_server: Any = None
) -> dict[int, Any]:
    """Run the workers (see the module docstring) and return their results by local rank."""
    if entrypoint is None:
        raise ValueError("entrypoint must be a function or a program's path, got None")
    run_id = config.run_id or str(uuid.uuid4())
    node_rank = int(config.rdzv_configs.get("rank", 0)) if config.max_nodes > 1 else 0
    if config.max_nodes > 1 and (not config.rdzv_endpoint or "rank" not in config.rdzv_configs):
        raise ValueError(
            "a launch over several nodes needs rdzv_endpoint (the first node's host:port) and "
            'rdzv_configs={"rank": node_rank} (the static rendezvous)'
        )
    host, port = _endpoint(config.rdzv_endpoint)
    secret = os.environ.get(ENV_SECRET) or generate_secret()
    name = (
        entrypoint if isinstance(entrypoint, str) else getattr(entrypoint, "__qualname__", repr(entrypoint))
    )
    log_dir = tempfile.mkdtemp(prefix="torchelastic_")  # the workers' error files, as PyTorch's
    for restart in range(config.max_restarts + 1):
        files = [_error_file(log_dir, restart, local) for local in range(config.nproc_per_node)]
        envs = [
            _worker_env(config, run_id, node_rank, local, host, port, secret, restart, files[local])
            for local in range(config.nproc_per_node)
        ]
        results, failures = _run_workers(config, entrypoint, args, envs)
        if not failures:
            shutil.rmtree(log_dir, ignore_errors=True)
            return results
    raise ChildFailedError(
        name, {node_rank * config.nproc_per_node + local: f for local, f in failures.items()}
    )


def _endpoint(endpoint: str) -> tuple[str, int]:
    """``host:port`` of the rendezvous, or this host and a free port when none is given."""
    if not endpoint:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return "127.0.0.1", s.getsockname()[1]
    host, _, port = endpoint.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"rdzv_endpoint must be host:port, got {endpoint!r}")
    return host.strip("[]"), int(port)


def _error_file(log_dir: str, restart: int, local: int) -> str:
    """Where local rank ``local`` may record its error (``TORCHELASTIC_ERROR_FILE``, which
    ``@record`` writes): ``attempt_<restart>/<local>/error.json``, its directory made."""
    folder = os.path.join(log_dir, f"attempt_{restart}", str(local))
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, "error.json")


def _worker_env(
    config: LaunchConfig,
    run_id: str,
    node: int,
    local: int,
    host: str,
    port: int,
    secret: str,
    restart: int,
    error_file: str,
) -> dict[str, str]:
    per_node, nodes = config.nproc_per_node, config.max_nodes
    rank = node * per_node + local
    return {
        "RANK": str(rank),
        "LOCAL_RANK": str(local),
        "WORLD_SIZE": str(nodes * per_node),
        "LOCAL_WORLD_SIZE": str(per_node),
        "GROUP_RANK": str(node),
        "GROUP_WORLD_SIZE": str(nodes),
        "ROLE_RANK": str(rank),
        "ROLE_WORLD_SIZE": str(nodes * per_node),
        "ROLE_NAME": config.role,
        "MASTER_ADDR": host,
        "MASTER_PORT": str(port),
        "TORCHELASTIC_RUN_ID": run_id,
        "TORCHELASTIC_RESTART_COUNT": str(restart),
        "TORCHELASTIC_MAX_RESTARTS": str(config.max_restarts),
        "TORCHELASTIC_USE_AGENT_STORE": "False",
        "TORCHELASTIC_ERROR_FILE": error_file,
        "DISTTORCH_RUN_ID": run_id,  # (no agent store here: rank 0 hosts the job's store on MASTER_PORT)
        ENV_SECRET: secret,
    }


def _call(entrypoint: Callable, args: list, env: dict, conn: Any) -> None:
    """A worker: its environment, the entry point, and its result (or traceback) sent back."""
    os.environ.update(env)
    try:
        conn.send(("ok", entrypoint(*args)))
    except BaseException:  # noqa: BLE001 - reported to the agent, which raises ChildFailedError
        conn.send(("error", traceback.format_exc()))
        conn.close()
        sys.exit(1)
    conn.close()


def _run_workers(
    config: LaunchConfig, entrypoint: Callable | str, args: list, envs: list
) -> tuple[dict, dict]:
    """Start one worker per environment, wait for all; ``(results, failures)`` by local rank.
    The first failure stops the others."""
    if isinstance(entrypoint, str):
        return _run_programs(config, entrypoint, args, envs)
    ctx = multiprocessing.get_context(config.start_method)
    workers = []
    for env in envs:
        receive, send = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_call, args=(entrypoint, args, env, send))
        p.start()
        send.close()
        workers.append((p, receive))
    results: dict[int, Any] = {}
    failures: dict[int, ProcessFailure] = {}
    pending = dict(enumerate(workers))
    while pending and not failures:
        for local, (p, receive) in list(pending.items()):
            if receive.poll():
                try:
                    status, value = receive.recv()
                except EOFError:
                    status, value = "error", None
                if status == "ok":
                    results[local] = value
                else:
                    p.join()
                    failures[local] = _failure(local, p.pid, p.exitcode, value, envs[local])
                    break
            elif not p.is_alive():
                failures[local] = _failure(local, p.pid, p.exitcode, None, envs[local])
                break
            else:
                continue
            p.join()
            del pending[local]
        else:
            time.sleep(config.monitor_interval)
    for p, _ in workers:  # after a failure: stop the others
        if p.is_alive():
            p.terminate()
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join()
    return results, failures


def _run_programs(config: LaunchConfig, program: str, args: list, envs: list) -> tuple[dict, dict]:
    """``_run_workers`` for a program's path: each worker runs it with ``args``."""
    procs = [subprocess.Popen([program, *map(str, args)], env={**os.environ, **env}) for env in envs]
    failures: dict[int, ProcessFailure] = {}
    pending = set(range(len(procs)))
    while pending and not failures:
        for local in sorted(pending):
            code = procs[local].poll()
            if code is not None:
                pending.discard(local)
                if code != 0:
                    failures[local] = _failure(local, procs[local].pid, code, None, envs[local])
        time.sleep(config.monitor_interval)
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    return ({} if failures else dict.fromkeys(range(len(procs)))), failures


def _failure(local: int, pid: int, exitcode: int | None, trace: str | None, env: dict) -> ProcessFailure:
    """The failure of local rank ``local``: its traceback sent back, else the one ``@record``
    wrote to its error file (a program's), else its exit code."""
    path = env["TORCHELASTIC_ERROR_FILE"]
    recorded = _recorded(path)
    return ProcessFailure(
        local_rank=local,
        pid=pid,
        exitcode=1 if exitcode is None else exitcode,
        error_file=path if recorded is not None else "<N/A>",
        message=trace or recorded or f"the worker exited with code {exitcode}",
    )


def _recorded(path: str) -> str | None:
    """The traceback (or message) of PyTorch's error record at ``path``, if there is one."""
    try:
        with open(path) as f:
            message = json.load(f)["message"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if isinstance(message, dict):
        return message.get("extraInfo", {}).get("py_callstack") or message.get("message")
    return str(message)
