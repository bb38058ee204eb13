"""What the multi-process benchmarks (``ddp.py``, ``fsdp.py``, ``whole_machine.py``) share:
starting rank processes on this machine and reading their ``RESULT`` lines, and inside a
rank, opening the library, making its batch and timing its training step.

A rank prints one line ``RESULT {json}``; everything else it prints is ignored.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Optional, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH = {"mlp": 128, "cnn": 128, "gpt": 32}  # samples per step of each model of models.py

__all__ = [
    "BATCH",
    "libraries",
    "launch",
    "results_of",
    "open_library",
    "init_group",
    "build_model",
    "training_step",
    "median_step",
]


def libraries() -> list[str]:
    """The libraries to compare: disttorch, and PyTorch when it is installed."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return ["disttorch"]
    return ["disttorch", "torch"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(
    args: Sequence[str],
    world: int,
    *,
    env: Optional[dict] = None,
    cores: Optional[list[list[int]]] = None,
    timeout: float = 900,
) -> list[tuple[str, str]]:
    """Run ``python *args`` as ranks 0..world-1 of one job on this machine (rank ``r`` pinned
    to ``cores[r]`` when given, ``env`` added to each one's environment) and return each
    rank's (stdout, stderr) once all have exited."""
    port = _free_port()
    procs = []
    for r in range(world):
        rank_env = dict(
            os.environ,
            RANK=str(r),
            WORLD_SIZE=str(world),
            LOCAL_RANK=str(r),
            LOCAL_WORLD_SIZE=str(world),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            DISTTORCH_JOB_SECRET="ab" * 32,
            PYTHONPATH=REPO,
            **(env or {}),
        )
        pin = None if cores is None else (lambda mine=cores[r]: os.sched_setaffinity(0, mine))
        procs.append(
            subprocess.Popen(
                [sys.executable, *args],
                env=rank_env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                preexec_fn=pin,
            )
        )
    return [p.communicate(timeout=timeout) for p in procs]


def results_of(out: str) -> list[dict]:
    """The ``RESULT`` lines of one rank's output, decoded."""
    return [json.loads(line[len("RESULT ") :]) for line in out.splitlines() if line.startswith("RESULT ")]


def open_library(lib_name: str, threads: int = 1) -> Any:
    """``torch`` or ``disttorch`` (by ``lib_name``), set to ``threads`` threads."""
    if lib_name == "torch":
        import torch as lib
    else:
        import disttorch as lib
    lib.set_num_threads(threads)
    return lib


def init_group(lib_name: str, lib: Any) -> None:
    """Join the job's process group: PyTorch's gloo, or disttorch's own."""
    if lib_name == "torch":
        lib.distributed.init_process_group("gloo")
    else:
        lib.distributed.init_process_group()


def build_model(lib: Any, model: str) -> Any:
    """The model ``model`` (mlp, cnn or gpt) of ``models.py`` in ``lib``, from seed 0: the
    same weights on every rank."""
    from models import build_cnn, build_gpt, build_mlp

    lib.manual_seed(0)
    return {"mlp": build_mlp, "cnn": build_cnn, "gpt": build_gpt}[model](lib)


def training_step(
    lib: Any, net: Any, opt: Any, model: str, batch: int, seed: int, *, set_to_none: bool = True
) -> Callable[[], None]:
    """One training step of ``net`` on a fixed random batch of ``batch`` samples for
    ``model`` (images for mlp/cnn, tokens for gpt), drawn from ``seed``: forward,
    cross-entropy, backward, ``opt.step()``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    if model == "mlp":
        x, y = rng.standard_normal((batch, 784)).astype(np.float32), rng.integers(0, 10, batch)
    elif model == "cnn":
        x, y = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, batch)
    else:
        tok = rng.integers(0, 65, (batch, 65))
        x, y = tok[:, :-1], tok[:, 1:]
    x, y = lib.from_numpy(np.ascontiguousarray(x)), lib.from_numpy(np.ascontiguousarray(y))

    def step() -> None:
        out = net(x)
        loss = lib.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        opt.zero_grad(set_to_none=set_to_none)
        loss.backward()
        opt.step()

    return step


def median_step(step: Callable[[], None], steps: int, barrier: Optional[Callable[[], None]] = None) -> float:
    """The median wall time of ``steps`` calls of ``step``, each after ``barrier()`` (when
    given) so that every rank starts it together."""
    times = []
    for _ in range(steps):
        if barrier is not None:
            barrier()
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
