"""Ranks started by hand (env://, tcp://, rank=/world_size=) without a job secret on one host,
over ipc and tcp; a wrong or missing secret on one rank fails every rank fast, naming it."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time

import pytest

from dist_helpers import REPO, free_port

SCRIPT = """
import os, sys
import disttorch as torch, disttorch.distributed as dist
how = sys.argv[1]
rank, world = int(sys.argv[2]), int(sys.argv[3])
if how in ("env", "slurm"):
    dist.init_process_group("gloo")
else:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{os.environ['PORT']}", rank=rank,
                            world_size=world)
t = torch.ones(4) * (dist.get_rank() + 1)
dist.all_reduce(t)
print("RESULT", dist.get_rank(), dist.get_world_size(), t.tolist(), flush=True)
dist.destroy_process_group()
"""


_LAUNCHER_VARIABLES = (
    "DISTTORCH_",
    "RANK",
    "WORLD_SIZE",
    "MASTER_",
    "LOCAL_",
    "SLURM_",
    "OMPI_",
    "TORCHELASTIC_",
)


def _start(world: int, how: str, transport: str, secrets_by_rank: list[str | None]) -> list[subprocess.Popen]:
    port = free_port()
    procs = []
    for rank in range(world):
        env = {k: v for k, v in os.environ.items() if not k.startswith(_LAUNCHER_VARIABLES)}
        env.update(PYTHONPATH=REPO, DISTTORCH_SAME_HOST_TRANSPORT=transport, PORT=str(port))
        if how == "env":
            env.update(RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        elif how == "slurm":  # srun's variables; a one-node job needs no MASTER_ADDR
            env.update(
                SLURM_PROCID=str(rank),
                SLURM_NTASKS=str(world),
                SLURM_LOCALID=str(rank),
                SLURM_JOB_NUM_NODES="1",
                MASTER_PORT=str(port),
            )
        if secrets_by_rank[rank] is not None:
            env["DISTTORCH_JOB_SECRET"] = secrets_by_rank[rank]
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", SCRIPT, how, str(rank), str(world)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    return procs


def _finish(procs: list[subprocess.Popen], timeout: float) -> list[tuple[int, str, str, float]]:
    start, out = time.monotonic(), []
    for p in procs:
        try:
            stdout, stderr = p.communicate(timeout=max(1.0, timeout - (time.monotonic() - start)))
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
        out.append((p.returncode, stdout, stderr, time.monotonic() - start))
    return out


@pytest.mark.timeout(150)
@pytest.mark.parametrize("transport", ["ipc", "tcp"])
@pytest.mark.parametrize("world", [2, 3])  # one joiner, and several joiners racing
def test_env_rendezvous_without_a_secret(world, transport):
    results = _finish(_start(world, "env", transport, [None] * world), timeout=120)
    expected = [float(world * (world + 1) // 2)] * 4
    for rank, (code, stdout, stderr, _) in enumerate(results):
        assert code == 0, f"rank {rank} failed:\n{stderr[-3000:]}"
        assert f"RESULT {rank} {world} {expected}" in stdout
        assert "refused" not in stderr


@pytest.mark.timeout(120)
def test_slurm_variables_without_a_secret():
    results = _finish(_start(3, "slurm", "ipc", [None] * 3), timeout=100)
    for rank, (code, stdout, stderr, _) in enumerate(results):
        assert code == 0, f"rank {rank} failed:\n{stderr[-3000:]}"
        assert f"RESULT {rank} 3 [6.0, 6.0, 6.0, 6.0]" in stdout


@pytest.mark.timeout(120)
@pytest.mark.parametrize("transport", ["ipc", "tcp"])
def test_tcp_init_method_with_rank_and_world_size_without_a_secret(transport):
    results = _finish(_start(3, "tcp", transport, [None] * 3), timeout=100)
    for rank, (code, stdout, stderr, _) in enumerate(results):
        assert code == 0, f"rank {rank} failed:\n{stderr[-3000:]}"
        assert f"RESULT {rank} 3 [6.0, 6.0, 6.0, 6.0]" in stdout


@pytest.mark.timeout(120)
@pytest.mark.parametrize("bad_rank", [0, 2])
@pytest.mark.parametrize("bad_secret", ["wrong", "missing"])
def test_a_wrong_or_missing_secret_on_one_rank_fails_every_rank_fast_naming_it(bad_rank, bad_secret):
    good = secrets.token_hex(32)
    by_rank: list[str | None] = [good] * 3
    by_rank[bad_rank] = secrets.token_hex(32) if bad_secret == "wrong" else None
    results = _finish(_start(3, "env", "ipc", by_rank), timeout=100)
    for rank, (code, _, stderr, elapsed) in enumerate(results):
        assert code != 0, f"rank {rank} should have failed"
        assert "AuthenticationError" in stderr, stderr[-2000:]
        assert elapsed < 30, f"rank {rank} took {elapsed:.1f} s to fail"  # the product bound is ~3 s
        if rank != bad_rank and bad_rank != 0:
            assert f"rank {bad_rank} cannot join the job" in stderr, stderr[-2000:]
        if rank == bad_rank and bad_secret == "missing":
            hint = "this one has none" if rank == 0 else "has no DISTTORCH_JOB_SECRET"
            assert hint in stderr, stderr[-2000:]


@pytest.mark.timeout(60)
def test_short_secrets_are_refused_by_init_process_group():
    code = (
        "import disttorch.distributed as dist\n"
        "dist.init_process_group('gloo', init_method='tcp://127.0.0.1:1', rank=0, world_size=1)\n"
    )
    env = dict(os.environ, PYTHONPATH=REPO, DISTTORCH_JOB_SECRET="ab")
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=50, check=False
    )
    assert proc.returncode != 0
    assert "at least 128 bits" in proc.stderr


@pytest.mark.timeout(60)
def test_short_secrets_are_refused_by_the_launcher():
    env = dict(os.environ, PYTHONPATH=REPO, DISTTORCH_JOB_SECRET="ab" * 8)  # 64 bits
    proc = subprocess.run(
        [sys.executable, "-m", "disttorch.launcher", "--nproc", "1", "--no-python", "true"],
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert proc.returncode == 2
    assert "at least 128 bits" in proc.stderr


def _mp_rank(rank: int, world: int, port: int, queue) -> None:
    import numpy as np

    import disttorch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    x = np.full(3, float(rank + 1), np.float32)
    dist.all_reduce(x)
    queue.put((rank, x.tolist()))  # then the process ends without destroy_process_group


@pytest.mark.timeout(120)
@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_multiprocessing_ranks_without_a_secret(method, monkeypatch):
    import multiprocessing

    monkeypatch.delenv("DISTTORCH_JOB_SECRET", raising=False)
    monkeypatch.setenv("PYTHONPATH", REPO)
    ctx = multiprocessing.get_context(method)
    queue, port = ctx.Queue(), free_port()
    procs = [ctx.Process(target=_mp_rank, args=(r, 3, port, queue)) for r in range(3)]
    for p in procs:
        p.start()
    got = sorted(queue.get(timeout=90) for _ in procs)
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert got == [(r, [6.0, 6.0, 6.0]) for r in range(3)]
