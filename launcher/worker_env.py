"""The environment each worker receives: torchrun's variables plus disttorch's.

torchrun's: ``RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE,
ROLE_NAME, ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RESTART_COUNT,
TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID``; ``TORCHELASTIC_USE_AGENT_STORE=False`` (rank
0 hosts the job's store, not the launcher); ``TORCHELASTIC_SIGNALS_TO_HANDLE``, the signals
the launcher stops its ranks on; ``TORCHELASTIC_ERROR_FILE``, this rank's own path (in an
existing directory) for PyTorch's JSON error record, which ``@record`` writes.

disttorch's:

- ``DISTTORCH_RESTART_COUNT``, ``DISTTORCH_MAX_RESTARTS``, ``DISTTORCH_RUN_ID``: as above.
- ``DISTTORCH_JOB_SECRET``: the per-job secret the process group authenticates peers with.
- ``DISTTORCH_ERROR_FILE``: where this rank records an uncaught exception (disttorch._error_file).
- ``DISTTORCH_TRACE_DIR``: where ranks write Chrome traces ``rank<k>.json`` (with --trace-dir).
- ``DISTTORCH_FAULT``: faults to inject (disttorch._faults), when any.
- ``DISTTORCH_CPU_AFFINITY``: the cores this rank is pinned to, e.g. ``"2,3"`` (when pinned).
- ``DISTTORCH_AGENT_PID``: the launcher's pid (workers die with it).
- ``DISTTORCH_GUARDIAN_PID``: the pid of the launcher's guardian, when it has one (workers
  stop with the launcher, and the guardian ends them with every process they started).
- ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``: threads per rank (the
  user's ``OMP_NUM_THREADS``, else cores per rank), each unless set.
- ``DISTTORCH_AS_TORCH=1`` and disttorch's alias ``sitecustomize`` directory first on
  ``PYTHONPATH`` (with ``--as-torch``): ``import torch`` gives disttorch in every process.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional

import disttorch

# The directory holding the ``disttorch`` package: workers need it on their path to run
# ``python -m disttorch.launcher.bootstrap`` when disttorch is used from a source checkout.
# (Installed packages are found anyway; site-packages must not move ahead of the standard library.)
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(disttorch.__file__)))
_INSTALLED = os.path.basename(_PACKAGE_PARENT) in ("site-packages", "dist-packages")


@dataclass(frozen=True)
class WorldInfo:
    """What every node agrees on for one attempt (from the rendezvous)."""

    world_size: int
    rank_offset: int  # global rank of this node's local rank 0
    nnodes: int
    node_rank: int
    master_addr: str
    master_port: int
    run_id: str
    restart_count: int


#: The signals the launcher stops its ranks on, as torchrun's variable names them.
SIGNALS_TO_HANDLE = "SIGTERM,SIGINT,SIGHUP"


def worker_env(
    base: Mapping[str, str],
    world: WorldInfo,
    local_rank: int,
    local_world_size: int,
    *,
    role: str,
    max_restarts: int,
    secret: str,
    error_file: str,
    trace_dir: Optional[str],
    faults: str,
    cores: Optional[List[int]],
    threads: Mapping[str, str],
    as_torch: bool = False,
    guardian_pid: Optional[int] = None,
    elastic_error_file: Optional[str] = None,
) -> Dict[str, str]:
    """Return the full environment for local rank ``local_rank``: ``base`` plus the variables above."""
    rank = world.rank_offset + local_rank
    env = dict(base)
    env.update(threads)
    env.update(
        {
            "RANK": str(rank),
            "LOCAL_RANK": str(local_rank),
            "WORLD_SIZE": str(world.world_size),
            "LOCAL_WORLD_SIZE": str(local_world_size),
            "GROUP_RANK": str(world.node_rank),
            "GROUP_WORLD_SIZE": str(world.nnodes),
            "ROLE_NAME": role,
            "ROLE_RANK": str(rank),
            "ROLE_WORLD_SIZE": str(world.world_size),
            "MASTER_ADDR": world.master_addr,
            "MASTER_PORT": str(world.master_port),
            "TORCHELASTIC_RESTART_COUNT": str(world.restart_count),
            "TORCHELASTIC_MAX_RESTARTS": str(max_restarts),
            "TORCHELASTIC_RUN_ID": world.run_id,
            "TORCHELASTIC_USE_AGENT_STORE": "False",
            "TORCHELASTIC_SIGNALS_TO_HANDLE": SIGNALS_TO_HANDLE,
            "DISTTORCH_RESTART_COUNT": str(world.restart_count),
            "DISTTORCH_MAX_RESTARTS": str(max_restarts),
            "DISTTORCH_RUN_ID": world.run_id,
            "DISTTORCH_JOB_SECRET": secret,
            "DISTTORCH_ERROR_FILE": error_file,
            "DISTTORCH_AGENT_PID": str(os.getpid()),
            "PYTHONUNBUFFERED": "1",
        }
    )
    for name, value in (
        ("TORCHELASTIC_ERROR_FILE", elastic_error_file),
        ("DISTTORCH_TRACE_DIR", trace_dir),
        ("DISTTORCH_FAULT", faults or None),
        ("DISTTORCH_CPU_AFFINITY", ",".join(map(str, cores)) if cores else None),
        ("DISTTORCH_GUARDIAN_PID", str(guardian_pid) if guardian_pid is not None else None),
    ):
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if not _INSTALLED and _PACKAGE_PARENT not in paths:
        paths.append(_PACKAGE_PARENT)
    if as_torch:
        site = _as_torch_site()
        env["DISTTORCH_AS_TORCH"] = "1"
        paths = [site, *(p for p in paths if p != site)]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def _as_torch_site() -> str:
    """disttorch's ``as_torch/_site`` directory (found without importing disttorch)."""
    spec = importlib.util.find_spec("disttorch")
    root = (
        spec.submodule_search_locations[0]
        if spec and spec.submodule_search_locations
        else os.path.join(_PACKAGE_PARENT, "disttorch")
    )
    return os.path.join(root, "as_torch", "_site")
