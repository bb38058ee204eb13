"""Two hosts of two ranks each (two network namespaces joined by a veth pair): the ranks of
each host share memory, the hosts' leaders talk over tcp, and every collective gives the
right answer with identical bits on every rank (needs root and ``ip netns``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from disttorch.distributed.wire import shm

from dist_helpers import free_port, rank_env

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "scripts", "hierarchical_check.py")


@pytest.fixture
def two_hosts(request):
    """The conftest's ``two_namespaces``, where this platform has the memfd segment."""
    if not shm.enabled():
        pytest.skip("needs memfd on x86-64 Linux")
    return request.getfixturevalue("two_namespaces")


@pytest.mark.timeout(300)
def test_two_hosts_of_two_ranks_reduce_inside_each_host_and_between_leaders(two_hosts):
    ns = two_hosts
    port, secret = free_port(), os.urandom(16).hex()
    procs = []
    for rank in range(4):
        name, addr = (ns.a, ns.addr_a) if rank < 2 else (ns.b, ns.addr_b)
        env = rank_env(rank, 4, port, secret, {"DISTTORCH_HOST_ADDR": addr, "DISTTORCH_TIMEOUT": "120"})
        env.update(MASTER_ADDR=ns.addr_a, LOCAL_RANK=str(rank % 2), LOCAL_WORLD_SIZE="2")
        procs.append(
            subprocess.Popen(
                ns.run_in(name, [sys.executable, SCRIPT, "[[0, 1], [2, 3]]"]),
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
