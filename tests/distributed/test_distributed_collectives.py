"""Tensor collectives on real processes: every collective x reduce op x dtype x world size.

One launch per world size runs every case (starting processes is the slow part) and returns
the list of failures; sizes include 0, 1, sizes not divisible by the world size and sizes
large enough for the ring algorithm; inputs include non-contiguous tensors and NumPy arrays.
Every rank also returns a digest of its all-reduce results: they must be bitwise identical.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np
import pytest

from dist_helpers import run_ranks

DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"]
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]
SIZES = [0, 1, 7, 1001]
RING_SIZE = 150_001  # float32: 600 KB, above the tree/ring threshold


def value(rank: int, n: int, dtype: str, salt: int = 0) -> np.ndarray:
    """Rank ``rank``'s deterministic input of ``n`` elements."""
    i = np.arange(n)
    if dtype == "bool":
        return (i + rank + salt) % 3 != 0
    return ((i * 7 + rank * 3 + salt) % 5 + 1).astype(dtype)


def expected_reduction(ws: int, n: int, dtype: str, op: str) -> np.ndarray:
    inputs = [value(r, n, dtype) for r in range(ws)]
    if dtype == "bool":
        fn = {"SUM": np.logical_or, "MAX": np.logical_or, "PRODUCT": np.logical_and, "MIN": np.logical_and}[
            op
        ]
    else:
        fn = {"SUM": np.add, "AVG": np.add, "PRODUCT": np.multiply, "MIN": np.minimum, "MAX": np.maximum}[op]
    out = functools.reduce(lambda a, b: fn(a, b).astype(a.dtype), inputs)
    if op == "AVG":
        out = (out / ws).astype(dtype)
    return out


def close(got: np.ndarray, want: np.ndarray) -> bool:
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if got.dtype.kind == "f":
        return np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-3)
    return np.array_equal(got, want)


def check_everything(rank: int, ws: int) -> dict:
    import disttorch
    import disttorch.distributed as dist

    dist.init_process_group()
    failures: list[str] = []
    digests: list[str] = []

    def expect(ok: bool, what: str) -> None:
        if not ok:
            failures.append(f"rank {rank}/{ws}: {what}")

    def tensor(a: np.ndarray):
        return disttorch.from_numpy(np.array(a))

    # all_reduce: every op x dtype x size, Tensors
    for dtype in DTYPES:
        for op in OPS:
            if op == "AVG" and dtype not in ("float32", "float64", "float16"):
                with pytest.raises(RuntimeError, match="AVG"):
                    dist.all_reduce(tensor(value(rank, 3, dtype)), op=dist.ReduceOp.AVG)
                continue
            for n in SIZES:
                t = tensor(value(rank, n, dtype))
                version = t._version
                dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
                want = expected_reduction(ws, n, dtype, op)
                expect(
                    close(t.numpy(), want),
                    f"all_reduce {op} {dtype}[{n}] gave {t.numpy()[:5]}, want {want[:5]}",
                )
                expect(t._version > version, f"all_reduce {op} {dtype}[{n}] did not bump the version")
                digests.append(hashlib.sha1(t.numpy().tobytes()).hexdigest())
    # all_reduce on a large buffer (ring), a non-contiguous Tensor and a NumPy array
    big = value(rank, RING_SIZE, "float32")
    dist.all_reduce(big)
    expect(close(big, expected_reduction(ws, RING_SIZE, "float32", "SUM")), "ring all_reduce")
    digests.append(hashlib.sha1(big.tobytes()).hexdigest())
    grid = tensor(value(rank, 12, "float64").reshape(3, 4))
    view = grid.t()
    assert not view._data.flags.c_contiguous
    dist.all_reduce(view, op=dist.ReduceOp.MAX)
    expect(
        close(grid.numpy(), expected_reduction(ws, 12, "float64", "MAX").reshape(3, 4)),
        "all_reduce on a transposed view did not write through to its base",
    )
    strided = value(rank, 20, "int64")
    dist.all_reduce(strided[::3])
    want = value(rank, 20, "int64")
    want[::3] = expected_reduction(ws, 20, "int64", "SUM")[::3]
    expect(np.array_equal(strided, want), "all_reduce of a strided NumPy view")

    # broadcast and reduce from / to every rank
    for root in range(ws):
        for dtype, n in (("float32", 7), ("int64", 1001), ("bool", 5), ("float64", 0)):
            t = tensor(value(rank, n, dtype, salt=10 * root))
            dist.broadcast(t, src=root)
            expect(
                np.array_equal(t.numpy(), value(root, n, dtype, salt=10 * root)),
                f"broadcast {dtype}[{n}] from {root}",
            )
        b = value(rank, RING_SIZE, "float32", salt=root)
        dist.broadcast(b, src=root)
        expect(
            np.array_equal(b, value(root, RING_SIZE, "float32", salt=root)), f"large broadcast from {root}"
        )
        for op in ("SUM", "MAX", "PRODUCT"):
            t = tensor(value(rank, 7, "int32"))
            dist.reduce(t, dst=root, op=getattr(dist.ReduceOp, op))
            want = expected_reduction(ws, 7, "int32", op) if rank == root else value(rank, 7, "int32")
            expect(np.array_equal(t.numpy(), want), f"reduce {op} to {root}: {t.numpy()} want {want}")
        t = tensor(value(rank, 9, "float32"))
        dist.reduce(t, dst=root, op=dist.ReduceOp.AVG)
        if rank == root:
            expect(close(t.numpy(), expected_reduction(ws, 9, "float32", "AVG")), "reduce AVG")

    # all_gather, all_gather_into_tensor
    for dtype, n in (("float32", 5), ("int64", 0), ("bool", 3), ("float64", 1001)):
        outs = [tensor(np.zeros(n, dtype)) for _ in range(ws)]
        dist.all_gather(outs, tensor(value(rank, n, dtype)))
        for r in range(ws):
            expect(np.array_equal(outs[r].numpy(), value(r, n, dtype)), f"all_gather {dtype}[{n}] block {r}")
        flat = tensor(np.zeros((ws, n), dtype))
        dist.all_gather_into_tensor(flat, tensor(value(rank, n, dtype)))
        expect(
            np.array_equal(flat.numpy(), np.stack([value(r, n, dtype) for r in range(ws)])),
            f"all_gather_into_tensor {dtype}[{n}]",
        )
    with pytest.raises(RuntimeError, match="ProcessGroupGloo::allgather: .*world_size"):
        dist.all_gather_into_tensor(np.zeros(ws * 3 + 1), np.zeros(3))

    # reduce_scatter, reduce_scatter_tensor (n not divisible by anything in particular)
    for op in ("SUM", "MIN", "AVG"):
        n = 5
        full = [value(rank, ws * n, "float64")]
        inputs = [tensor(full[0][i * n : (i + 1) * n]) for i in range(ws)]
        out = tensor(np.zeros(n))
        dist.reduce_scatter(out, inputs, op=getattr(dist.ReduceOp, op))
        want = expected_reduction(ws, ws * n, "float64", op)[rank * n : (rank + 1) * n]
        expect(close(out.numpy(), want), f"reduce_scatter {op}")
        source = tensor(value(rank, ws * n, "float64"))
        out2 = tensor(np.zeros(n))
        dist.reduce_scatter_tensor(out2, source, op=getattr(dist.ReduceOp, op))
        expect(close(out2.numpy(), want), f"reduce_scatter_tensor {op}")
        expect(
            np.array_equal(source.numpy(), value(rank, ws * n, "float64")),
            "reduce_scatter_tensor changed its input",
        )
    big_out = np.zeros(RING_SIZE // ws, np.float32)
    dist.reduce_scatter_tensor(big_out, value(rank, (RING_SIZE // ws) * ws, "float32"))
    m = RING_SIZE // ws
    expect(
        close(big_out, expected_reduction(ws, m * ws, "float32", "SUM")[rank * m : (rank + 1) * m]),
        "large reduce_scatter_tensor",
    )

    # gather / scatter to and from every rank
    for root in range(ws):
        gl = [tensor(np.zeros(4, np.int32)) for _ in range(ws)] if rank == root else None
        dist.gather(tensor(value(rank, 4, "int32")), gl, dst=root)
        if rank == root:
            for r in range(ws):
                expect(np.array_equal(gl[r].numpy(), value(r, 4, "int32")), f"gather to {root} block {r}")
        out = tensor(np.zeros(6, np.float32))
        sl = [tensor(value(r, 6, "float32", salt=root)) for r in range(ws)] if rank == root else None
        dist.scatter(out, sl, src=root)
        expect(np.array_equal(out.numpy(), value(rank, 6, "float32", salt=root)), f"scatter from {root}")

    # all_to_all with sizes that differ per pair, and all_to_all_single
    send = [tensor(np.full(rank + dst + 1, 100 * rank + dst, np.int64)) for dst in range(ws)]
    recv = [tensor(np.zeros(src + rank + 1, np.int64)) for src in range(ws)]
    dist.all_to_all(recv, send)
    for src in range(ws):
        expect(
            np.array_equal(recv[src].numpy(), np.full(src + rank + 1, 100 * src + rank)),
            f"all_to_all from {src}",
        )
    single_in = np.repeat(np.arange(ws, dtype=np.float32) + 10 * rank, 2).reshape(ws * 2, 1)
    single_out = np.zeros((ws * 2, 1), np.float32)
    dist.all_to_all_single(single_out, single_in)
    expect(
        np.array_equal(single_out[:, 0], np.repeat(10 * np.arange(ws) + rank, 2).astype(np.float32)),
        f"all_to_all_single gave {single_out[:, 0]}",
    )

    # async handles: several queued at once, results in order
    works = []
    tensors = [tensor(value(rank, 33, "float32", salt=k)) for k in range(5)]
    for t in tensors:
        works.append(dist.all_reduce(t, async_op=True))
    for k, (w, t) in enumerate(zip(works, tensors)):
        expect(
            w.wait() is True and w.is_completed() and w.is_success() and w.exception() is None,
            "async Work state",
        )
        want = functools.reduce(np.add, [value(r, 33, "float32", salt=k) for r in range(ws)])
        expect(close(t.numpy(), want), f"async all_reduce #{k}")
        expect(w.result()[0] is t, "Work.result() holds the tensor")
    fut = (
        dist.all_reduce(tensor(np.ones(3)), async_op=True)
        .get_future()
        .then(lambda f: f.value()[0].numpy().sum())
    )
    expect(fut.wait() == 3 * ws, "Future.then chains on the result")
    dist.barrier()
    w = dist.barrier(async_op=True)
    w.wait(timeout=30)
    dist.destroy_process_group()
    expect(not dist.is_initialized(), "destroy_process_group leaves the group initialized")
    return {"failures": failures, "digests": digests}


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "world_size,transport",
    [(1, "ipc"), (2, "ipc"), (3, "ipc"), (8, "ipc"), (2, "tcp"), (3, "sockets")],
)
def test_every_collective(world_size, transport):
    # World sizes: one rank, the smallest group, an odd one and a large power of two (more ranks
    # than cores). 4 would take 3's and 8's paths again (the algorithm chosen changes only above
    # 2 ranks), and every algorithm is checked at 4 on threads (test_algorithms.py,
    # test_shm_algorithms.py).
    # "ipc": same-host defaults (the shm algorithms through the host's shared segment);
    # "sockets": ipc sockets without shared memory (ring, tree, star over the sockets);
    # "tcp": loopback tcp without shared memory (large payloads sent zero-copy over sockets).
    env = {"DISTTORCH_TIMEOUT": "120"}
    if transport == "tcp":
        env.update(DISTTORCH_SAME_HOST_TRANSPORT="tcp", DISTTORCH_SHM="0")
    if transport == "sockets":
        env.update(DISTTORCH_SHM="0")
    results = run_ranks(check_everything, world_size, timeout=280, env=env)
    failures = [f for r in results for f in r["failures"]]
    assert not failures, "\n".join(failures[:30])
    for rank, r in enumerate(results[1:], 1):
        assert r["digests"] == results[0]["digests"], f"rank {rank}'s all_reduce bits differ from rank 0's"


def _async_inline(rank: int, ws: int) -> dict:
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch.distributed.groups import resolve_group

    dist.init_process_group()
    pg = resolve_group(None)
    idle = torch.full((1000,), float(rank + 1))
    with pg.run_async_inline():
        work = dist.all_reduce(idle, async_op=True)
        completed_at_once = work.is_completed()
    # A busy group: operations queued before must still run first.
    queued = [torch.full((50000,), float(rank + 1)) for _ in range(3)]
    works = [dist.all_reduce(t, async_op=True) for t in queued]
    with pg.run_async_inline():
        late = torch.full((10,), float(rank + 1))
        late_work = dist.all_reduce(late, async_op=True)
    late_work.wait()
    for w in works:
        w.wait()
    out = {
        "completed_at_once": completed_at_once,
        "idle": idle.numpy()[:3].tolist(),
        "queued": [t.numpy()[-1] for t in queued],
        "late": late.numpy()[:3].tolist(),
        "flag_after": pg._caller.inline,
    }
    dist.destroy_process_group()
    return out


@pytest.mark.timeout(60)
def test_run_async_inline_completes_at_once_when_idle_and_keeps_the_order_when_busy():
    want = float(sum(range(1, 4)))
    for out in run_ranks(_async_inline, 3, timeout=45):
        assert out["completed_at_once"] is True
        assert out["idle"] == [want] * 3 and out["late"] == [want] * 3
        assert out["queued"] == [want] * 3
        assert out["flag_after"] is False
