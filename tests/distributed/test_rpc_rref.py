"""RRef on real processes: remote(), to_here, local_value, owner, proxies, RRefs passed in
arguments (to the owner, to a third worker), counted references freed when users let go."""

from __future__ import annotations

import gc
import time

from dist_helpers import run_ranks


def _rrefs(rank: int, world: int) -> dict:
    import rpc_helpers as h

    import disttorch as dt
    from disttorch.distributed import rpc

    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
    out: dict = {}
    if rank == 0:
        counter = rpc.remote("worker1", h.Counter, args=(10,))
        out["user"] = (counter.is_owner(), counter.owner(), counter.owner_name())
        out["sync_proxy"] = counter.rpc_sync().increment(1)
        out["async_proxy"] = counter.rpc_async().increment(2).wait()
        out["remote_proxy"] = counter.remote().increment(3).to_here()
        out["async_method"] = counter.rpc_sync().increment_later(4)
        out["to_here"] = counter.to_here().n
        out["confirmed"] = counter.confirmed_by_owner()
        try:
            counter.local_value()
        except RuntimeError as e:
            out["local_value_error"] = str(e)
        failing = rpc.remote("worker1", h.raise_value_error, args=("no value",))
        try:
            failing.to_here()
        except ValueError as e:
            out["remote_error"] = "no value" in str(e)
        mine = rpc.RRef(dt.arange(4.0))
        out["owner"] = (mine.is_owner(), mine.local_value().tolist(), mine.to_here().tolist())
        # an RRef in the arguments: the callee fetches from the owner (here, this worker)
        out["fetched_by_callee"] = rpc.rpc_sync("worker1", h.sum_of_rref, args=(mine,))
        # a user RRef forwarded to a third worker, which fetches from the owner (worker 1)
        tensor_on_1 = rpc.remote("worker1", dt.ones, args=(5,))
        out["forwarded"] = rpc.rpc_sync("worker2", h.sum_of_rref, args=(tensor_on_1,))
        # a user RRef sent back to its owner arrives as the owner's RRef
        out["back_home"] = rpc.rpc_sync("worker1", h.sum_of_rref, args=(tensor_on_1,))
        out["kept"] = rpc.rpc_sync("worker1", h.owned_count)
        del counter, failing, tensor_on_1
        gc.collect()  # the error failing.to_here() raised holds its frame (and the RRef) in a cycle
        time.sleep(1)
        out["freed"] = rpc.rpc_sync("worker1", h.owned_count)
        # remote() to itself: an owner's RRef whose value stays here
        local = rpc.remote("worker0", h.Counter, args=(1,))
        out["self_remote"] = (local.is_owner(), local.to_here().increment(1), local.local_value().n)
    rpc.shutdown()
    return out


def test_rrefs_to_values_on_other_workers():
    out = run_ranks(_rrefs, 3, timeout=90)[0]
    assert out["user"][0] is False and out["user"][1].id == 1 and out["user"][2] == "worker1"
    assert (out["sync_proxy"], out["async_proxy"], out["remote_proxy"], out["async_method"]) == (
        11,
        13,
        16,
        20,
    )
    assert out["to_here"] == 20 and out["confirmed"]
    assert out["local_value_error"].startswith("Can't call RRef.local_value() on a non-owner RRef.")
    assert out["remote_error"]
    assert out["owner"] == (True, [0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0])
    assert out["fetched_by_callee"] == 6.0 and out["forwarded"] == 5.0 and out["back_home"] == 5.0
    assert out["kept"] >= 2 and out["freed"] == 0  # counted while held, freed when let go
    assert out["self_remote"] == (True, 2, 2)


def test_rref_needs_init_rpc():
    import pytest

    from disttorch.distributed import rpc

    with pytest.raises(RuntimeError, match="RPC has not been initialized"):
        rpc.RRef(1)


def _rref_in_a_late_answer(rank: int, world: int) -> float:
    import rpc_helpers as h

    from disttorch.distributed import rpc

    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
    total = 0.0
    if rank == 2:
        rpc.rpc_sync("worker0", h.keep_remote_rref, args=("worker1",))
        rref = rpc.rpc_sync("worker0", h.kept_rref_after_call, args=("worker1",), timeout=10)
        total = float(rref.to_here().sum())
    rpc.shutdown()
    return total


def test_an_async_answer_forwards_an_rref_to_a_third_worker():
    assert run_ranks(_rref_in_a_late_answer, 3, timeout=60)[2] == 3.0
