"""Point-to-point beside collectives: one thread doing collectives and another doing
``send``/``recv`` on the same group progress independently (as with gloo, where p2p has its
own tags and pairs). A receive that waits must not hold up the group's collectives, nor a
collective a receive, whatever order each rank issues them in."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from dist_helpers import run_ranks


def collectives_and_p2p(rank: int, world: int) -> dict:
    import disttorch.distributed as dist

    dist.init_process_group()
    out: dict = {}

    def p2p() -> None:
        # rank 0 waits in recv before rank 1's send is issued (rank 1 first does collectives)
        if rank == 0:
            buf = np.zeros(4, np.float32)
            dist.recv(buf, src=1)
            out["recv"] = buf.tolist()
            dist.send(np.full(4, 5.0, np.float32), dst=1, tag=3)
        else:
            time.sleep(0.2)  # after this rank's collective thread is inside its first all_reduce
            dist.send(np.arange(4, dtype=np.float32), dst=0)
            buf = np.zeros(4, np.float32)
            dist.recv(buf, src=0, tag=3)
            out["recv"] = buf.tolist()

    def collectives() -> None:
        if rank == 0:
            time.sleep(0.4)  # rank 0 issues its all_reduce after its recv is waiting
        sums = []
        for i in range(3):
            x = np.full(3, float(rank + i), np.float32)
            dist.all_reduce(x)
            sums.append(float(x[0]))
        out["sums"] = sums

    threads = [threading.Thread(target=f, name=f.__name__) for f in (p2p, collectives)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    out["alive"] = [t.name for t in threads if t.is_alive()]
    out["elapsed"] = time.monotonic() - start
    # irecv posted before a collective, completed by the traffic the collective pumps
    work = dist.irecv(buf := np.zeros(2, np.float64), src=1 - rank, tag=9)
    dist.send(np.full(2, float(rank), np.float64), dst=1 - rank, tag=9)
    dist.barrier()
    work.wait()
    out["irecv"] = buf.tolist()
    dist.destroy_process_group()
    return out


@pytest.mark.timeout(60)
def test_p2p_in_one_thread_and_collectives_in_another_progress_independently():
    results = run_ranks(collectives_and_p2p, 2, timeout=45, env={"DISTTORCH_TIMEOUT": "15"})
    for rank, out in enumerate(results):
        assert not out["alive"], f"rank {rank}: threads still running {out['alive']}"
        assert out["sums"] == [1.0, 3.0, 5.0], out
        assert out["elapsed"] < 5, f"rank {rank}: took {out['elapsed']:.1f} s"
        assert out["irecv"] == [float(1 - rank)] * 2
    assert results[0]["recv"] == [0.0, 1.0, 2.0, 3.0]
    assert results[1]["recv"] == [5.0] * 4


def barrier_beside_a_leaving_peer(rank: int, world: int) -> str:
    import disttorch.distributed as dist
    from disttorch.distributed.engine.peer_channel import Link

    dist.init_process_group()
    if rank == 0:
        time.sleep(0.2)  # rank 1 waits at the board's sync meanwhile
        dist.barrier()
        dist.destroy_process_group()  # its goodbye follows its arrival on the board
        return "left"
    pump, slow = Link._pump, [True]

    def slow_pump(self, timeout, want=None):  # its first check while waiting takes long,
        if slow[0] and timeout == 0:  # as when thousands of stashed messages are read:
            slow[0] = False  # rank 0 arrives and says goodbye meanwhile
            time.sleep(0.5)
        return pump(self, timeout, want)

    Link._pump = slow_pump
    dist.barrier()
    dist.destroy_process_group()
    return "passed the barrier"


def test_a_peer_that_arrived_at_a_shared_memory_sync_and_left_is_no_failure():
    """A rank at a sync of the board checked the peers' health after a pump that took in
    the goodbye of a peer that had meanwhile arrived: PeerDiedError ('rank 0 left the
    group') in a barrier rank 0 had completed (seen after 1000 unreceived sends)."""
    results = run_ranks(barrier_beside_a_leaving_peer, 2, timeout=30)
    assert results == ["left", "passed the barrier"]
