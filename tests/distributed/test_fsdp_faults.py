"""FSDP when things go wrong, on real processes: a rank killed (SIGKILL) in the middle of the
parameter all-gathers is reported by the survivor, naming it, instead of a hang; and hybrid
sharding across two hosts (network namespaces, 2 hosts x 2 ranks) trains like one process."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from fsdp_models import build, data, full_params, train

from disttorch.distributed import DistError

from dist_helpers import run_ranks

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def _killed_worker(rank: int, world: int) -> None:
    import datetime
    import signal

    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch.distributed.fsdp import fully_shard

    dist.init_process_group(timeout=datetime.timedelta(seconds=60))
    model = build("mlp")
    for m in (model[0], model[2], model[4]):
        fully_shard(m)
    fully_shard(model)
    if rank == 1:  # dies between the first unit's all-gather and the second's
        model[2].register_forward_pre_hook(lambda *_: os.kill(os.getpid(), signal.SIGKILL), prepend=True)
    model(torch.zeros(2, 12, dtype=torch.float64)).sum().backward()


def test_a_rank_killed_mid_gather_is_reported():
    results = run_ranks(_killed_worker, 2, timeout=60, check=False)
    assert results[1].returncode == -9
    error = results[0].error
    assert error is not None and not results[0].killed, results[0].describe()
    assert isinstance(error, DistError), repr(error)
    assert "rank 1" in str(error), str(error)


@pytest.mark.timeout(240)
def test_hybrid_sharding_across_two_hosts(two_namespaces, tmp_path):
    ns = two_namespaces
    secret = os.urandom(32).hex()
    procs = []
    for node, (name, addr) in enumerate(((ns.a, ns.addr_a), (ns.b, ns.addr_b))):
        env = dict(os.environ, PYTHONPATH=REPO, DISTTORCH_TIMEOUT="120", DISTTORCH_JOB_SECRET=secret)
        env.update(DISTTORCH_SAME_HOST_TRANSPORT="tcp", DISTTORCH_HOST_ADDR=addr)
        cmd = ns.run_in(name, [sys.executable, "-m", "launcher", "--nnodes", "2", "--node-rank", str(node)])
        cmd += ["--nproc", "2", "--master-addr", ns.addr_a, "--master-port", "29461"]
        cmd += [os.path.join(HERE, "scripts", "fsdp_hybrid.py"), str(tmp_path)]
        procs.append(
            subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        )
    try:
        outputs = [p.communicate(timeout=200)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs), "\n".join(outputs)
    model = build("mlp")
    x, y = data("mlp", 4)
    train(model, "mlp", x, y)
    expected = full_params(model)
    for rank in range(4):
        saved = np.load(tmp_path / f"rank{rank}.npz")
        host = rank // 2
        assert saved["groups"].tolist() == [[rank % 2, rank % 2 + 2], [2 * host, 2 * host + 1]]
        for name in expected:
            np.testing.assert_allclose(saved[name], expected[name], rtol=1e-9, atol=1e-11, err_msg=name)
