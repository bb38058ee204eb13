"""Process-group API, subgroups, point-to-point messages and object collectives on real processes."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from dist_helpers import run_ranks


def api_and_subgroups(rank: int, ws: int) -> None:
    import disttorch
    import disttorch.distributed as dist

    assert dist.is_available() and not dist.is_initialized()
    assert dist.is_gloo_available() and not dist.is_nccl_available() and dist.Backend.GLOO == "gloo"
    with pytest.raises(ValueError, match="not been initialized"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="doesn't have NCCL built in"):
        dist.init_process_group("nccl")
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (rank, ws, "gloo")

    outside = dist.GroupMember.NON_GROUP_MEMBER
    with pytest.raises(ValueError, match="not registered"):
        dist.get_global_rank(outside, 0)
    odd = dist.new_group([3, 1])
    low = dist.new_group([0, 1, 2])
    # PyTorch's answer for NON_GROUP_MEMBER: the latest group this rank is outside of
    if rank == 1:
        with pytest.raises(KeyError):
            dist.get_process_group_ranks(outside)
    else:
        ranks = [0, 1, 2] if rank == 3 else [1, 3]
        assert dist.get_process_group_ranks(outside) == ranks
        assert (dist.get_global_rank(outside, 1), dist.get_group_rank(outside, ranks[0])) == (ranks[1], 0)
    if rank in (1, 3):
        assert dist.get_rank(odd) == [1, 3].index(rank) and dist.get_world_size(odd) == 2
        assert dist.get_process_group_ranks(odd) == [1, 3]
    else:
        assert odd is dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(odd) == -1
        with pytest.warns(
            UserWarning, match=f"Running all_reduce on global rank {rank} which does not belong"
        ):
            assert dist.all_reduce(np.ones(1), group=odd) is None  # PyTorch's warning, nothing done
        with pytest.warns(UserWarning, match="Running all_gather_object on global rank"):
            dist.all_gather_object([None, None], rank, group=odd)
    # Interleave subgroup and world collectives, some asynchronous.
    works = []
    for k in range(3):
        t = disttorch.tensor([float(rank + k)])
        if rank in (1, 3):
            works.append((dist.all_reduce(t, group=odd, async_op=True), t, 1 + 3 + 2 * k))
        w = disttorch.tensor([float(rank)])
        dist.all_reduce(w, group=dist.group.WORLD)
        assert w.item() == sum(range(ws))
        if low is not dist.GroupMember.NON_GROUP_MEMBER:
            b = disttorch.tensor([float(rank * 10 + k)])
            dist.broadcast(b, src=2, group=low)  # src is a global rank
            assert b.item() == 20 + k, b.item()
    for work, t, want in works:
        work.wait()
        assert t.item() == want, (t.item(), want)
    if rank in (1, 3):  # roots and peers named by their rank in the group (PyTorch 2.13's keywords)
        b = disttorch.tensor([float(rank)])
        dist.broadcast(b, group=odd, group_src=1)  # odd's rank 1 is global rank 3
        assert b.item() == 3.0
        objects = [rank]
        dist.broadcast_object_list(objects, group=odd, group_src=0)
        assert objects == [1]
        if rank == 1:
            dist.send(disttorch.tensor([7.0]), group=odd, group_dst=1)
        else:
            got = disttorch.zeros(1)
            assert dist.recv(got, group=odd, group_src=0) == 1 and got.item() == 7.0
        with pytest.raises(ValueError, match="Can't specify both group_rank and global_rank"):
            dist.broadcast(b, src=3, group=odd, group_src=1)
        with pytest.raises(ValueError, match="Must specify global_rank or group_rank"):
            dist.reduce(b, group=odd)
    if low is not dist.GroupMember.NON_GROUP_MEMBER:
        with pytest.raises(ValueError, match="not part of group"):
            dist.broadcast(np.zeros(1), src=3, group=low)
    with pytest.raises(ValueError, match="distinct"):
        dist.new_group([0, 0])
    if rank in (1, 3):
        dist.destroy_process_group(odd)
    dist.barrier(timeout=timedelta(seconds=30))
    dist.destroy_process_group()


@pytest.mark.timeout(60)
def test_api_and_subgroups():
    run_ranks(api_and_subgroups, 4, timeout=50)


def point_to_point(rank: int, ws: int) -> None:
    import disttorch
    import disttorch.distributed as dist

    dist.init_process_group()
    if rank == 0:
        dist.send(disttorch.tensor([2.0, 2.0]), dst=1, tag=2)
        dist.send(disttorch.tensor([1.0, 1.0]), dst=1, tag=1)
        works = [dist.isend(np.full(3, k, np.int64), dst=2, tag=7) for k in range(4)]
        for w in works:
            w.wait()
        got = np.zeros(1, np.int32)
        senders = sorted(dist.recv(got, tag=9) for _ in range(ws - 1) if got is not None)
        assert senders == list(range(1, ws)), senders
        dist.send(np.zeros(4, np.float32), dst=1, tag=3)
    elif rank == 1:
        first, second = disttorch.zeros(2), disttorch.zeros(2)
        assert dist.recv(first, src=0, tag=1) == 0  # tag 1 does not wait behind tag 2
        assert dist.recv(second, src=0, tag=2) == 0
        assert first.tolist() == [1.0, 1.0] and second.tolist() == [2.0, 2.0]
        dist.send(np.array([rank], np.int32), dst=0, tag=9)
        with pytest.raises(dist.DistBackendError, match=r"sent float32\[4\] with tag 3 .*int64\[4\]"):
            dist.recv(np.zeros(4, np.int64), src=0, tag=3)
        return
    else:
        bufs = [np.zeros(3, np.int64) for _ in range(4)]
        works = [dist.irecv(b, src=0, tag=7) for b in bufs]
        for k, (w, b) in enumerate(zip(works, bufs)):
            w.wait()
            assert b.tolist() == [k] * 3 and w.source_rank == 0
        dist.send(np.array([rank], np.int32), dst=0, tag=9)
    with pytest.raises(ValueError, match="should not be the same"):
        dist.send(np.zeros(1), dst=rank)
    if rank in (0, 2):  # a batched exchange between ranks 0 and 2, both posting send first
        other = 2 - rank
        got = np.zeros(300_000, np.float32)  # large enough for a zero-copy send
        works = dist.batch_isend_irecv(
            [
                dist.P2POp(dist.isend, np.full(300_000, rank, np.float32), other),
                dist.P2POp(dist.irecv, got, other),
            ]
        )
        for w in works:
            w.wait()
        assert (got == other).all()
    dist.destroy_process_group()


@pytest.mark.timeout(40)
def test_point_to_point_with_tags():
    results = run_ranks(point_to_point, 3, timeout=30, check=False)
    bad = [r.describe() for r in results if not r.ok]
    assert not bad, "\n".join(bad)


class Payload:
    def __init__(self, rank):
        self.rank = rank
        self.square = lambda: rank * rank  # needs cloudpickle


def objects(rank: int, ws: int) -> None:
    import disttorch.distributed as dist

    dist.init_process_group()
    items = [Payload(rank), {"rank": rank, "text": "x" * (100 * rank)}, None]
    dist.broadcast_object_list(items, src=1)
    assert items[0].rank == 1 and items[0].square() == 1 and items[1]["rank"] == 1
    gathered = [None] * ws
    dist.all_gather_object(gathered, {"r": rank, "blob": list(range(rank * 50))})
    assert [g["r"] for g in gathered] == list(range(ws)) and len(gathered[2]["blob"]) == 100
    dest = [None] * ws if rank == 2 else None
    dist.gather_object(("from", rank, "y" * rank * 1000), dest, dst=2)
    if rank == 2:
        assert [d[1] for d in dest] == list(range(ws)) and len(dest[1][2]) == 1000
    out = [None]
    dist.scatter_object_list(out, [f"for {r}" * (r + 1) for r in range(ws)] if rank == 0 else None, src=0)
    assert out[0] == f"for {rank}" * (rank + 1)
    dist.destroy_process_group()


@pytest.mark.timeout(40)
def test_object_collectives():
    run_ranks(objects, 3, timeout=30)


def receives_of_waiting_messages(rank: int, ws: int) -> list[int]:
    """Rank 1 sends 20 messages; rank 0 receives each inside ``run_async_inline``, where an
    asynchronous receive runs to its end before ``irecv`` returns its Work."""
    import disttorch.distributed as dist
    from disttorch.distributed.groups import resolve_group

    dist.init_process_group("gloo")
    senders = []
    if rank == 1:
        for k in range(20):
            dist.send(np.array([k], np.int64), dst=0)
    else:
        buf = np.zeros(1, np.int64)
        with resolve_group(None).run_async_inline():
            for k in range(20):
                work = dist.irecv(buf)  # any source: the sender's rank is on the Work
                assert work.is_completed() and buf[0] == k
                senders.append(work.source_rank)
    dist.barrier()
    dist.destroy_process_group()
    return senders


@pytest.mark.timeout(60)
def test_a_receive_that_completes_at_once_still_reports_its_sender():
    senders, _ = run_ranks(receives_of_waiting_messages, 2, timeout=50)
    assert senders == [1] * 20


@pytest.mark.parametrize("launched", [False, True])
def test_uncaught_errors_are_reported_with_the_rank_prefix(monkeypatch, capsys, launched):
    # as PyTorch once a default group exists; disttorch's launcher prefixes every line itself
    import sys

    import disttorch.distributed as dist
    from disttorch.distributed.store import HashStore

    if launched:
        monkeypatch.setenv("DISTTORCH_AGENT_PID", "1")
    else:
        monkeypatch.delenv("DISTTORCH_AGENT_PID", raising=False)
    monkeypatch.setattr(sys, "excepthook", sys.__excepthook__)
    dist.init_process_group(store=HashStore(), rank=0, world_size=1)
    try:
        error = ValueError("boom")
        sys.excepthook(ValueError, error, None)
    finally:
        dist.destroy_process_group()
    prefix = "" if launched else "[rank0]: "
    assert capsys.readouterr().err == prefix + "ValueError: boom\n"
