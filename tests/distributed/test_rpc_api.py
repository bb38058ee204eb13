"""torch.distributed.rpc on real processes: init_rpc, rpc_sync, rpc_async, get_worker_info,
async_execution, remote exceptions, timeouts, graceful shutdown."""

from __future__ import annotations

from dist_helpers import run_ranks


def _calls(rank: int, world: int) -> dict:
    import rpc_helpers as h

    import disttorch as dt
    from disttorch.distributed import rpc

    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
    out: dict = {}
    if rank == 0:
        out["sync"] = rpc.rpc_sync("worker1", h.add, args=(dt.ones(2), 3)).tolist()
        fut = rpc.rpc_async("worker1", h.add, args=(2, 3))
        out["future"] = isinstance(fut, dt.futures.Future)
        out["async"] = fut.wait()
        out["kwargs"] = rpc.rpc_sync(rpc.get_worker_info("worker1"), h.add, kwargs={"a": 1, "b": 2})
        out["self"] = rpc.rpc_sync("worker0", h.add, args=(1, 1))
        out["builtin"] = rpc.rpc_sync("worker1", dt.add, args=(dt.ones(2), dt.ones(2))).tolist()
        out["info"] = (
            rpc.get_worker_info("worker1").id,
            rpc.get_worker_info().name,
            repr(rpc.get_worker_info()),
        )
        out["async_execution"] = rpc.rpc_sync("worker1", h.add_later, args=(4, 5, 0.1))
        try:
            rpc.rpc_sync("worker1", h.raise_value_error, args=("the remote message",))
        except ValueError as e:
            out["remote_error"] = str(e)
        try:
            rpc.get_worker_info("nobody")
        except RuntimeError as e:
            out["unknown"] = str(e)
        try:
            rpc.rpc_sync("worker1", h.sleep_then, args=(3, None), timeout=0.3)
        except RuntimeError as e:
            out["timeout"] = str(e)
        big = dt.arange(3_000_000, dtype=dt.float64)  # 24 MB: travels as several frames
        out["big"] = float(rpc.rpc_sync("worker1", h.add, args=(big, 1)).sum())
    rpc.shutdown()
    return out


def test_calls_results_and_errors():
    out = run_ranks(_calls, 2, timeout=90)[0]
    assert out["sync"] == [4.0, 4.0] and out["future"] and out["async"] == 5
    assert out["kwargs"] == 3 and out["self"] == 2 and out["builtin"] == [2.0, 2.0]
    assert out["info"] == (1, "worker0", "WorkerInfo(id=0, name=worker0)")
    assert out["async_execution"] == 9
    # PyTorch's form: the worker, the exception's repr, then the remote traceback
    assert out["remote_error"].startswith(
        "On WorkerInfo(id=1, name=worker1):\nValueError('the remote message')"
    )
    assert "in raise_value_error" in out["remote_error"]
    assert out["unknown"] == "name:worker0,rank:0 could not find destination name nobody"  # PyTorch's words
    assert out["timeout"] == "RPC ran for more than set timeout (300 ms) and will now be marked with an error"
    assert out["big"] == float(sum(range(3_000_000))) + 3_000_000


def _default_timeout(rank: int, world: int) -> str:
    import rpc_helpers as h

    from disttorch.distributed import rpc

    options = rpc.TensorPipeRpcBackendOptions(rpc_timeout=0.4, num_worker_threads=2)
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world, rpc_backend_options=options)
    text = ""
    if rank == 0:
        try:
            rpc.rpc_sync("worker1", h.sleep_then, args=(3, None))
        except RuntimeError as e:
            text = str(e)
        assert rpc.rpc_sync("worker1", h.sleep_then, args=(0.6, 7), timeout=0) == 7  # 0: no deadline
    rpc.shutdown()
    return text


def test_the_options_give_the_default_timeout():
    assert run_ranks(_default_timeout, 2, timeout=60)[0] == (
        "RPC ran for more than set timeout (400 ms) and will now be marked with an error"
    )


def _graceful(rank: int, world: int) -> list:
    import rpc_helpers as h

    from disttorch.distributed import rpc

    rpc.init_rpc(
        f"worker{rank}",
        rank=rank,
        world_size=world,
        rpc_backend_options=rpc.TensorPipeRpcBackendOptions(init_method="env://"),
    )
    if rank == 1:  # fire and forget: shutdown must still wait for these on every worker
        for i in range(3):
            rpc.rpc_async("worker0", h.sleep_then, args=(0.3, None))
            rpc.rpc_async("worker2", h.record, args=(i,))
    rpc.shutdown()
    return h.recorded()


def test_shutdown_waits_for_every_workers_outstanding_work():
    results = run_ranks(_graceful, 3, timeout=60)
    assert results[2] == [0, 1, 2]


def _bad_name(rank: int, world: int) -> str:
    from disttorch.distributed import rpc

    try:
        rpc.init_rpc("same", rank=rank, world_size=world)
    except RuntimeError as e:
        return str(e)
    rpc.shutdown()
    return ""


def test_a_name_used_twice_is_refused():
    for text in run_ranks(_bad_name, 2, timeout=60):
        assert "RPC worker name same is not unique" in text


def test_calls_before_init_rpc_say_so():
    import pytest

    from disttorch.distributed import rpc

    with pytest.raises(
        RuntimeError, match="RPC has not been initialized. Call torch.distributed.rpc.init_rpc first."
    ):
        rpc.rpc_sync("worker1", print)
    with pytest.raises(RuntimeError, match="Worker name must match"):
        rpc.init_rpc("bad name!", rank=0, world_size=1)


def _beside_process_group(rank: int, world: int) -> list:
    import rpc_helpers as h

    import disttorch as dt
    import disttorch.distributed as dist
    from disttorch.distributed import rpc

    dist.init_process_group("gloo")  # the same MASTER_ADDR/MASTER_PORT as init_rpc below
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
    total = dt.tensor([float(rank)])
    dist.all_reduce(total)
    value = rpc.rpc_sync(f"worker{(rank + 1) % world}", h.add, args=(rank, 10))
    rpc.shutdown()
    dist.barrier()  # the process group outlives RPC's shutdown
    dist.destroy_process_group()
    return [total.item(), value]


def test_rpc_meets_at_the_address_of_the_process_group():
    assert run_ranks(_beside_process_group, 2, timeout=60) == [[1.0, 10], [1.0, 11]]


def _raising_callback(rank: int, world: int) -> int:
    import rpc_helpers as h

    from disttorch.distributed import rpc

    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
    value = 0
    if rank == 0:
        fut = rpc.rpc_async("worker1", h.add, args=(1, 2))
        fut.add_done_callback(lambda _f: 1 / 0)  # runs on the I/O thread, and raises
        value = rpc.rpc_sync("worker1", h.add, args=(3, 4), timeout=10)  # still answered
    rpc.shutdown()
    return value


def test_a_callback_that_raises_does_not_stop_the_agent():
    assert run_ranks(_raising_callback, 2, timeout=60)[0] == 7


def _gather(rank: int, world: int) -> dict:
    import disttorch as dt
    from disttorch.distributed import rpc
    from disttorch.distributed.rpc import api

    @api._require_initialized
    def helper() -> str:
        return "ran"

    out: dict = {}
    try:
        helper()
    except RuntimeError as e:
        out["before"] = str(e)
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
    out["helper"] = helper()
    first = api._all_gather({"rank": rank, "t": dt.full((2,), float(rank))})
    out["first"] = {name: (v["rank"], v["t"].tolist()) for name, v in first.items()}
    out["second"] = api._all_gather(rank * 10, timeout=20)  # a second round: its own keys
    if rank < 2:
        out["pair"] = api._all_gather(rank, worker_names=["worker0", "worker1"])
    rpc.shutdown()
    return out


def test_all_gather_and_require_initialized_as_libraries_call_them():
    outs = run_ranks(_gather, 3, timeout=90)
    for rank, out in enumerate(outs):
        assert out["before"] == "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first."
        assert out["helper"] == "ran"
        assert out["first"] == {f"worker{r}": (r, [float(r)] * 2) for r in range(3)}
        assert out["second"] == {f"worker{r}": 10 * r for r in range(3)}
        assert rank == 2 or out["pair"] == {"worker0": 0, "worker1": 1}
