"""Two hosts of two ranks each (two network namespaces joined by a veth pair): the ranks of
each host share memory, the hosts' leaders talk over tcp, and every collective gives the
right answer with identical bits on every rank (needs root and ``ip netns``)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from test_shm_failures import SURVIVOR_BOUND, _end, _ready

from disttorch.distributed.wire import shm

from dist_helpers import free_port, rank_env

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "scripts", "hierarchical_check.py")
LOOP = os.path.join(HERE, "scripts", "shm_loop.py")


@pytest.fixture
def two_hosts(request):
    """The conftest's ``two_namespaces``, where this platform has the memfd segment."""
    if not shm.enabled():
        pytest.skip("needs memfd on x86-64 Linux")
    return request.getfixturevalue("two_namespaces")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("hosts", [[[0, 1], [2, 3]], [[0, 1], [2]]], ids=["2x2", "2+1"])
def test_every_collective_runs_inside_each_host_and_between_leaders(two_hosts, hosts):
    ns = two_hosts
    port, secret = free_port(), os.urandom(16).hex()
    procs, world = [], sum(len(h) for h in hosts)
    for rank in range(world):
        host = next(h for h in hosts if rank in h)
        name, addr = (ns.a, ns.addr_a) if host is hosts[0] else (ns.b, ns.addr_b)
        env = rank_env(rank, world, port, secret, {"DISTTORCH_HOST_ADDR": addr, "DISTTORCH_TIMEOUT": "120"})
        env.update(MASTER_ADDR=ns.addr_a, LOCAL_RANK=str(host.index(rank)), LOCAL_WORLD_SIZE=str(len(host)))
        procs.append(
            subprocess.Popen(
                ns.run_in(name, [sys.executable, SCRIPT, str(hosts)]),
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    try:
        outputs = [p.communicate(timeout=280)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    digests = []
    for rank, (p, text) in enumerate(zip(procs, outputs)):
        m = re.search(rf"OK {rank} (\w+)", text)
        assert p.returncode == 0 and m, f"rank {rank}:\n{text}"
        digests.append(m.group(1))
    assert len(set(digests)) == 1, "every rank holds the same bits"


@pytest.mark.timeout(240)
@pytest.mark.parametrize("collective, killed", [("all_gather", 3), ("all_to_all", 2)])
def test_a_rank_killed_mid_collective_across_hosts_is_named_and_leaves_nothing(
    two_hosts, tmp_path, collective, killed
):
    """Rank 3 (inside host B) or rank 2 (host B's leader) is killed while the four ranks
    loop over a hierarchical collective: every survivor names the rank and the collective,
    and nothing is left in /dev/shm or the ranks' temporary directory."""
    ns, tmp = two_hosts, str(tmp_path)
    port, secret = free_port(), os.urandom(16).hex()
    procs = {}
    for rank in range(4):
        name, addr = (ns.a, ns.addr_a) if rank < 2 else (ns.b, ns.addr_b)
        env = rank_env(rank, 4, port, secret, {"DISTTORCH_HOST_ADDR": addr, "DISTTORCH_TIMEOUT": "120"})
        env.update(MASTER_ADDR=ns.addr_a, LOCAL_RANK=str(rank % 2), LOCAL_WORLD_SIZE="2", TMPDIR=tmp)
        procs[rank] = subprocess.Popen(
            ns.run_in(name, [sys.executable, LOOP, collective]),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    survivors = [r for r in procs if r != killed]
    try:
        pids = _ready(procs, 150)
        time.sleep(1.0)
        hit_at = time.time()
        os.kill(pids[killed], signal.SIGKILL)
        outputs = {r: procs[r].communicate(timeout=60)[0] for r in survivors}
    finally:
        _end(procs)
    for rank, text in outputs.items():
        m = re.search(r"FAILED (\S+) (\w+): (.*)", text)
        assert m, f"rank {rank} did not report\n{text}"
        assert float(m.group(1)) - hit_at < SURVIVOR_BOUND, text
        assert f"rank {killed}" in m.group(3) and f"{collective}" in m.group(3), m.group(0)
    marks = [f"-{pid}-" for pid in pids.values()]
    assert not [e for e in os.listdir("/dev/shm") if any(m in e for m in marks)]
    assert os.listdir(tmp) == []
