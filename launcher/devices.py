"""CPU cores for each local rank: how many, which ones, and the thread-count variables.

Every local rank gets ``cores_per_rank`` cores. When the node has enough usable cores for
all of them (``nproc * cores_per_rank <= usable``), rank ``i`` is pinned to its own slice of
the usable cores (``DISTTORCH_CPU_AFFINITY``, applied by ``disttorch.launcher.bootstrap``), so ranks do
not fight over cores.

Each rank runs as many threads as it has cores (disttorch's ops and NumPy's BLAS share
that budget, see ``disttorch/kernels/threads.py``), unless the user's ``OMP_NUM_THREADS``
says otherwise: :func:`plan_threads` decides, and sets ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` and ``MKL_NUM_THREADS`` to that count where the user did not set
them. The start table gives every rank's cores and threads and says why (:func:`format_plan`).

NumPy's OpenBLAS picks its kernels for the CPU it runs on unless ``OPENBLAS_CORETYPE``
names them. When that variable pins kernels without AVX-512 on a CPU that has it, the start
table says so (:func:`blas_note`): matrix products, most of a training step, then run about
1.5x slower. The launcher passes the variable on unchanged; the user decides.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Set

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# OpenBLAS's x86-64 kernel sets that use AVX-512 (names as OPENBLAS_CORETYPE takes them).
AVX512_KERNELS = ("skylakex", "cooperlake", "sapphirerapids")


def usable_cores() -> List[int]:
    """The cores this process may run on (its affinity mask), sorted."""
    return sorted(os.sched_getaffinity(0))


@dataclass(frozen=True)
class CorePlan:
    """Which cores each local rank gets, and whether ranks are pinned to them."""

    cores_per_rank: int
    usable: List[int]
    cores: List[Optional[List[int]]]  # per local rank; None = not pinned
    note: str  # why ranks are or are not pinned
    why: str  # where cores_per_rank came from

    @property
    def pinned(self) -> bool:
        return any(c is not None for c in self.cores)


def plan_cores(
    nproc: int, cores_per_rank: Optional[int], bind: Optional[bool], usable: Optional[List[int]] = None
) -> CorePlan:
    """Assign cores to ``nproc`` local ranks.

    Args:
        nproc: local ranks on this node.
        cores_per_rank: cores for each rank; ``None`` = usable cores // nproc (at least 1).
        bind: pin ranks to their cores; ``None`` = pin when there are enough cores.
        usable: the usable cores (default: this process's affinity mask).

    Raises:
        ValueError: if ``bind`` is True but the ranks need more cores than there are.
    """
    usable = usable_cores() if usable is None else list(usable)
    per_rank = cores_per_rank if cores_per_rank is not None else max(1, len(usable) // nproc)
    why = (
        f"--cores-per-rank {cores_per_rank}"
        if cores_per_rank is not None
        else f"{len(usable)} usable cores / {nproc} rank{'s' if nproc > 1 else ''}"
    )
    ranks = f"{nproc} rank{'s' if nproc > 1 else ''}"
    needed = nproc * per_rank
    enough = needed <= len(usable)
    if bind is True and not enough:
        raise ValueError(
            f"--bind-cores needs {ranks} x {per_rank} cores = {needed} cores, "
            f"but only {len(usable)} are usable ({format_ranges(usable)}); "
            f"lower --cores-per-rank or --nproc-per-node, or pass --no-bind-cores"
        )
    if bind is False:
        note = "not pinned (--no-bind-cores)"
    elif not enough and cores_per_rank is None:  # more ranks than cores
        note = (
            f"not pinned: {nproc} ranks share {len(usable)} usable cores and take turns on them "
            "(--nproc auto runs one rank per core)"
        )
    elif not enough:
        note = f"not pinned: {ranks} x {per_rank} cores > {len(usable)} usable cores"
    else:
        note = "pinned"
    if bind is False or not enough:
        return CorePlan(per_rank, usable, [None] * nproc, note, why)
    slices = [usable[i * per_rank : (i + 1) * per_rank] for i in range(nproc)]
    return CorePlan(per_rank, usable, slices, note, why)


@dataclass(frozen=True)
class ThreadPlan:
    """How many threads each local rank runs, why, and the variables that tell it so."""

    count: int
    why: str
    env: Dict[str, str]  # the thread-count variables to set (those the user did not set)


def plan_threads(plan: CorePlan, user_env: Mapping[str, str]) -> ThreadPlan:
    """Threads per rank: the user's ``OMP_NUM_THREADS`` when it is a positive integer,
    else the rank's cores (``plan.cores_per_rank``)."""
    user = user_env.get("OMP_NUM_THREADS", "").strip()
    if user.isdigit() and int(user) > 0:
        count, why = int(user), f"OMP_NUM_THREADS={user} from your environment"
    else:
        count, why = plan.cores_per_rank, f"one per core: {plan.why}"
    return ThreadPlan(count, why, {name: str(count) for name in THREAD_VARS if name not in user_env})


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> Set[str]:
    """The instruction-set flags of the first CPU in ``cpuinfo`` (empty if unreadable)."""
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def blas_note(env: Mapping[str, str], flags: Optional[Set[str]] = None) -> Optional[str]:
    """A start-table line when ``OPENBLAS_CORETYPE`` in ``env`` pins OpenBLAS kernels without
    AVX-512 on a CPU with AVX-512 (``flags``, default: this machine's); otherwise None."""
    pinned = env.get("OPENBLAS_CORETYPE", "").strip()
    if not pinned or pinned.lower() in AVX512_KERNELS:
        return None
    if "avx512f" not in (cpu_flags() if flags is None else flags):
        return None
    return (
        f"blas: OPENBLAS_CORETYPE={pinned} pins NumPy's OpenBLAS to kernels without AVX-512 "
        f"on this AVX-512 CPU; matrix products run about 1.5x faster if you unset it"
    )


def format_ranges(numbers: List[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"`` (sorted numbers; ``"none"`` if empty)."""
    parts, start = [], None
    for i, number in enumerate(numbers):
        if start is None:
            start = number
        if i + 1 == len(numbers) or numbers[i + 1] != number + 1:
            parts.append(str(start) if start == number else f"{start}-{number}")
            start = None
    return ",".join(parts) or "none"


def format_plan(plan: CorePlan, global_ranks: List[int], threads: ThreadPlan) -> List[str]:
    """The assignment table printed once at start, one string per line."""
    variables = " ".join(f"{k}={v}" for k, v in threads.env.items()) or "the thread variables as you set them"
    lines = [
        f"cores: {len(plan.usable)} usable ({format_ranges(plan.usable)}), "
        f"{plan.cores_per_rank} per rank ({plan.why}), {plan.note}",
        f"threads: {threads.count} per rank ({threads.why}); {variables}",
        f"{'rank':>6} {'local':>6} {'threads':>8}  cores",
    ]
    for local, (rank, cores) in enumerate(zip(global_ranks, plan.cores)):
        where = format_ranges(cores) if cores is not None else "any"
        lines.append(f"{rank:>6} {local:>6} {threads.count:>8}  {where}")
    return lines
