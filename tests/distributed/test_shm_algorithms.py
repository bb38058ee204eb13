"""The shared-memory and hierarchical algorithms on threads (``ThreadWorld`` with hosts):
every collective, op and dtype against a NumPy reference at 2, 3, 4 and 8 ranks, with a
small slot so that buffers take many rounds; sizes not divisible by the ranks, zero-size;
identical bits on every rank; the automatic choice."""

from __future__ import annotations

import functools
import logging

import numpy as np
import pytest

from disttorch.distributed.algorithms import hierarchical, run_threads, select, shm
from disttorch.distributed.wire import shm as wire_shm

pytestmark = pytest.mark.skipif(not wire_shm.enabled(), reason="needs memfd on x86-64 Linux")

DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "bool", "complex64"]
OPS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}
SIZES = [0, 1, 7, 301]
SLOT = 256  # bytes: 301 float64 take 10 rounds


def value(rank: int, n: int, dtype: str) -> np.ndarray:
    i = np.arange(n)
    if dtype == "bool":
        return (i + rank) % 3 != 0
    return ((i * 7 + rank * 3) % 5 + 1).astype(dtype)


def ufunc(op: str, dtype: str):
    if dtype == "bool":
        return {"sum": np.logical_or, "max": np.logical_or, "prod": np.logical_and, "min": np.logical_and}[op]
    return OPS[op]


def reference(n_ranks: int, n: int, dtype: str, op: str) -> np.ndarray:
    fn = ufunc(op, dtype)
    return functools.reduce(
        lambda a, b: fn(a, b).astype(a.dtype), [value(r, n, dtype) for r in range(n_ranks)]
    )


def cases(dtypes=DTYPES):
    for dtype in dtypes:
        for op in OPS:
            if dtype == "complex64" and op in ("min", "max"):
                continue  # complex numbers are unordered
            yield dtype, op


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n_ranks", [2, 3, 4, 8])
def test_shm_all_reduce_reduce_and_reduce_scatter_every_op_and_dtype(n_ranks):
    def work(ch):
        out = []
        for dtype, op in cases():
            for n in SIZES:
                buf = value(ch.rank, n, dtype)
                shm.all_reduce(ch, buf, ufunc(op, dtype))
                out.append(("all_reduce", dtype, op, n, buf))
                root = n % n_ranks
                buf = value(ch.rank, n, dtype)
                shm.reduce(ch, buf, ufunc(op, dtype), root)
                if ch.rank == root:
                    out.append(("reduce", dtype, op, n, buf))
                counts = [n // n_ranks + (r < n % n_ranks) for r in range(n_ranks)]
                buf = value(ch.rank, n, dtype)
                shm.reduce_scatter(ch, buf, ufunc(op, dtype), counts)
                start = sum(counts[: ch.rank])
                out.append(("reduce_scatter", dtype, op, n, (start, buf[start : start + counts[ch.rank]])))
        return out

    results = run_threads(n_ranks, work, timeout=30, hosts=[list(range(n_ranks))], slot_bytes=SLOT)
    for rank, out in enumerate(results):
        for what, dtype, op, n, got in out:
            want = reference(n_ranks, n, dtype, op)
            if what == "reduce_scatter":
                start, got = got
                want = want[start : start + got.size]
            assert got.dtype == want.dtype and np.array_equal(got, want), (rank, what, dtype, op, n)
    bits = [[item[-1].tobytes() for item in out if item[0] == "all_reduce"] for out in results]
    assert all(b == bits[0] for b in bits), "every rank holds the same bits"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n_ranks", [2, 3, 4, 8])
def test_shm_broadcast_all_gather_and_barrier(n_ranks):
    def work(ch):
        out = []
        for dtype in DTYPES:
            for n in SIZES:
                root = (n + 1) % n_ranks
                buf = value(ch.rank, n, dtype)
                shm.broadcast(ch, buf, root)
                out.append(np.array_equal(buf, value(root, n, dtype)))
                counts = [(n + r) % 5 for r in range(n_ranks)]  # unequal, some empty
                offsets = np.cumsum([0, *counts])
                buf = np.zeros(offsets[-1], dtype)
                buf[offsets[ch.rank] : offsets[ch.rank + 1]] = value(ch.rank, counts[ch.rank], dtype)
                shm.all_gather(ch, buf, counts)
                want = np.concatenate([value(r, c, dtype) for r, c in enumerate(counts)])
                out.append(np.array_equal(buf, want))
                shm.barrier(ch)
        return out

    for out in run_threads(n_ranks, work, timeout=30, hosts=[list(range(n_ranks))], slot_bytes=SLOT):
        assert all(out)


@pytest.mark.timeout(60)
def test_large_buffers_take_rounds_and_every_rank_holds_the_same_bits():
    n_ranks = 3
    size = 3 * wire_shm.SLOT_BYTES // 4 + 12345  # three rounds of float32, plus a ragged one

    def work(ch):
        buf = np.random.default_rng(ch.rank).standard_normal(size).astype(np.float32)
        mine = buf.copy()
        shm.all_reduce(ch, buf, np.add)
        return mine, buf

    results = run_threads(n_ranks, work, hosts=[[0, 1, 2]])
    want = sum(r[0].astype(np.float64) for r in results)
    for _, got in results:
        assert got.tobytes() == results[0][1].tobytes()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "hosts", [[[0, 1], [2, 3]], [[0, 1, 2], [3]], [[0], [1, 2], [3, 4, 5]], [[0, 2], [1, 3, 4]]]
)
def test_hierarchical_all_reduce_broadcast_reduce_and_barrier(hosts):
    n_ranks = sum(len(h) for h in hosts)

    def work(ch):
        out = []
        for dtype, op in cases(["float64", "int64", "bool", "float16"]):
            for n in (0, 1, 7, 301):
                buf = value(ch.rank, n, dtype)
                select.all_reduce(ch, buf, ufunc(op, dtype))
                out.append(("all_reduce", dtype, op, n, buf))
                for root in range(n_ranks):
                    buf = value(ch.rank, n, dtype)
                    select.reduce(ch, buf, ufunc(op, dtype), root)
                    if ch.rank == root:
                        out.append(("reduce", dtype, op, n, buf))
        for root in range(n_ranks):
            buf = value(ch.rank, 999, "float32")
            select.broadcast(ch, buf, root)
            out.append(("broadcast", root, buf))
        select.barrier(ch)
        return out

    assert select.choose("all_reduce", 8, n_ranks, hosts=hosts) == "hierarchical"
    results = run_threads(n_ranks, work, timeout=30, hosts=hosts, slot_bytes=SLOT)
    for out in results:
        for item in out:
            if item[0] == "broadcast":
                assert np.array_equal(item[2], value(item[1], 999, "float32"))
            else:
                _, dtype, op, n, got = item
                assert np.array_equal(got, reference(n_ranks, n, dtype, op)), item[:4]
    bits = [[item[-1].tobytes() for item in out if item[0] == "all_reduce"] for out in results]
    assert all(b == bits[0] for b in bits), "every rank holds the same bits"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n_ranks", [2, 3, 4, 8])
def test_a_buffer_in_the_arena_is_reduced_in_place_to_the_copying_paths_bits(n_ranks):
    """Buffers every rank keeps at one offset of its arena are all-reduced where they are:
    no slot is ever written (the copy in is saved), and the bits equal the copying path's."""
    n = 5001  # float64: 40 KiB, above the one-step size; 157 slot pieces of 256 bytes
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n) for _ in range(n_ranks)]
    ops = ["sum", "prod", "min", "max"]

    def work(ch, in_arena):
        board = ch.world.boards[ch.rank]
        out = []
        for op in ops:
            buf = board.lease(n * 8).view(np.float64) if in_arena else np.empty(n)
            buf[:] = inputs[ch.rank]
            shm.all_reduce(ch, buf, OPS[op])
            out.append(buf.copy())
            board.release(buf)
        return out, bool(board.halves.any())

    hosts = [list(range(n_ranks))]
    in_place = run_threads(n_ranks, lambda ch: work(ch, True), 30, hosts, SLOT, arena=1 << 20)
    copied = run_threads(n_ranks, lambda ch: work(ch, False), 30, hosts, SLOT, arena=1 << 20)
    for (got, slots_used), (want, _) in zip(in_place, copied):
        assert not slots_used, "nothing was copied into the slots"
        assert [g.tobytes() for g in got] == [w.tobytes() for w in copied[0][0]]
        assert [g.tobytes() for g in got] == [w.tobytes() for w in want]


def test_ranks_that_disagree_about_a_buffer_in_the_arena_fail_naming_the_rank():
    def work(ch):
        board = ch.world.boards[ch.rank]
        buf = board.lease(80_000).view(np.float64) if ch.rank != 1 else np.zeros(10_000)
        shm.all_reduce(ch, buf, np.add)

    with pytest.raises(wire_shm.TagMismatch, match="board rank 1 came to this sync with no tag"):
        run_threads(3, work, timeout=5, hosts=[[0, 1, 2]], arena=1 << 20)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n_ranks", [2, 3, 4])
def test_a_buffer_in_the_arena_is_broadcast_from_where_it_lies(n_ranks):
    """Buffers every rank keeps at one offset of its arena are broadcast without a slot:
    the others copy the root's arena; every dtype, odd sizes above the one-step size."""
    steps = []

    def work(ch):
        board = ch.world.boards[ch.rank]
        out = []
        for dtype in DTYPES:
            item = np.dtype(dtype).itemsize
            for n in (shm.ONE_STEP_BYTES // item + 1, 70_001 // item):
                root = n % n_ranks
                buf = board.lease(n * item).view(dtype)
                buf[:] = value(ch.rank, n, dtype)
                shm.broadcast(ch, buf, root, on_step=lambda *step: steps.append((ch.rank, *step[:2])))
                out.append(buf.tobytes() == value(root, n, dtype).tobytes())
                board.release(buf)
        return out, bool(board.halves.any())

    for out, slots_used in run_threads(n_ranks, work, 30, [list(range(n_ranks))], SLOT, arena=1 << 20):
        assert all(out), "every rank holds the root's bits"
        assert not slots_used, "nothing was copied into the slots"
    assert sorted(steps) == sorted((r, "read", 0) for r in range(n_ranks) for _ in range(2 * len(DTYPES)))


@pytest.mark.parametrize("pad", [None, 64], ids=["private", "another-offset"])
def test_ranks_that_disagree_about_a_broadcast_buffer_in_the_arena_fail_naming_the_rank(pad):
    def work(ch):
        board = ch.world.boards[ch.rank]
        if ch.rank == 1 and pad is None:
            buf = np.zeros(10_000)
        else:
            board.lease(pad if ch.rank == 1 else 0)  # rank 1's buffer lies further on
            buf = board.lease(80_000).view(np.float64)
        shm.broadcast(ch, buf, 0)

    # ranks 0 and 2 name rank 1; with a tag of its own, rank 1 checks too and may be the one
    # whose report comes first, naming rank 0 or 2
    said = "board rank 1 came to this sync with " + ("no tag" if pad is None else "tag 64")
    if pad is not None:
        said += "|board rank [02] came to this sync with tag 0, this rank with tag 64"
    with pytest.raises(wire_shm.TagMismatch, match=said):
        run_threads(3, work, timeout=5, hosts=[[0, 1, 2]], arena=1 << 20)


HOST_LAYOUTS = [[[0, 1], [2, 3]], [[0, 1, 2], [3]], [[0], [1, 2], [3, 4, 5]], [[0, 2], [1, 3, 4]]]


def block_collectives(ch, family: str, n_ranks: int) -> list:
    """all_gather, reduce_scatter, gather, scatter and all_to_all through ``family`` over
    uneven blocks (some empty) of several dtypes; what this rank ends with."""
    run = functools.partial(select.resolve, algorithm=family, hosts=ch.hosts)
    out = []
    for dtype in ("float64", "float16", "int64", "bool", "complex64"):
        for scale in (0, 1, 5):  # zero-size, a few elements, several slot rounds
            counts = [scale * ((r * 3 + 1) % 4) for r in range(n_ranks)]
            buf = np.zeros(sum(counts), dtype)
            at = sum(counts[: ch.rank])
            buf[at : at + counts[ch.rank]] = value(ch.rank, counts[ch.rank], dtype)
            run("all_gather", buf.nbytes, n_ranks)(ch, buf, counts)
            out.append(buf)
            if dtype != "bool":
                buf = value(ch.rank, sum(counts), dtype)
                run("reduce_scatter", buf.nbytes, n_ranks)(ch, buf, np.add, counts)
                out.append(buf[at : at + counts[ch.rank]])
            sends = [value(ch.rank + d, scale * ((ch.rank + d) % 3), dtype) for d in range(n_ranks)]
            recvs = [np.zeros(scale * ((s + ch.rank) % 3), dtype) for s in range(n_ranks)]
            run("all_to_all", 0, n_ranks)(ch, sends, recvs)
            out.extend(recvs)
            for root in range(n_ranks):
                mine = value(ch.rank, 3 * scale, dtype)
                got = [np.zeros(3 * scale, dtype) for _ in range(n_ranks)] if ch.rank == root else None
                run("gather", mine.nbytes, n_ranks)(ch, mine, got, root)
                out.extend(got or [])
                parts = [value(root + r, 2 * scale, dtype) for r in range(n_ranks)]
                got = np.zeros(2 * scale, dtype)
                run("scatter", got.nbytes, n_ranks)(ch, parts if ch.rank == root else None, got, root)
                out.append(got)
    return out


@pytest.mark.timeout(120)
@pytest.mark.parametrize("hosts", HOST_LAYOUTS)
def test_hierarchical_block_collectives_give_the_flat_algorithms_bits(hosts):
    """Every block collective through the hosts' leaders ends with exactly what the flat
    algorithms (ring, pairwise, star) give, on every rank, with interleaved and uneven hosts."""
    n_ranks = sum(len(h) for h in hosts)
    for collective in ("all_gather", "reduce_scatter", "gather", "scatter", "all_to_all"):
        assert select.choose(collective, 8, n_ranks, hosts=hosts) == "hierarchical"
    layered = run_threads(n_ranks, lambda ch: block_collectives(ch, "hierarchical", n_ranks), 30, hosts, SLOT)
    flat = run_threads(n_ranks, lambda ch: block_collectives(ch, "auto", n_ranks), 30)
    for rank, (got, want) in enumerate(zip(layered, flat)):
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.dtype and g.tobytes() == w.tobytes(), (rank, i)


def test_hierarchical_all_to_all_names_blocks_of_the_wrong_size():
    def work(ch):
        sends = [np.zeros(2) for _ in range(4)]
        recvs = [np.zeros(3 if ch.rank == 1 else 2) for _ in range(4)]
        select.all_to_all(ch, sends, recvs)

    with pytest.raises(ValueError, match="rank 0 sends 16 bytes to rank 1, whose receive block 0 holds 24"):
        run_threads(4, work, timeout=5, hosts=[[0, 1], [2, 3]])


def test_the_automatic_choice_knows_the_hosts():
    one, two = [[0, 1, 2, 3]], [[0, 1], [2, 3]]
    for collective in ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "barrier"):
        assert select.choose(collective, 1 << 24, 4, hosts=one) == "shm"
    for collective in select.COLLECTIVES:
        assert select.choose(collective, 1 << 24, 4, hosts=two) == "hierarchical"
    assert select.choose("all_reduce", 1 << 24, 4, hosts=[[0], [1], [2], [3]]) == "ring"
    assert select.choose("all_reduce", 1 << 24, 4) == "ring", "no hosts known: sockets"
    assert select.choose("all_reduce", 64, 4, hosts=one, deterministic=True) == "deterministic"
    assert select.choose("gather", 64, 4, hosts=one) == "star"
    with pytest.raises(ValueError, match="cannot run all_reduce on this group"):
        select.choose("all_reduce", 64, 4, algorithm="shm", hosts=two)


def test_the_automatic_choice_follows_the_environment(monkeypatch):
    monkeypatch.setenv("DISTTORCH_ALGORITHM", "ring")
    assert select.choose("all_reduce", 64, 4, hosts=[[0, 1, 2, 3]]) == "ring"
    monkeypatch.setenv("DISTTORCH_ALGORITHM", "shm")
    assert select.choose("all_reduce", 64, 4, hosts=[[0, 1], [2, 3]]) == "hierarchical", "falls back"
    monkeypatch.setenv("DISTTORCH_ALGORITHM", "hierarchical")
    assert select.choose("all_reduce", 64, 4, hosts=[[0, 1], [2, 3]]) == "hierarchical"
    assert select.choose("all_to_all", 64, 4, hosts=[[0, 1], [2, 3]]) == "hierarchical"
    assert select.choose("gather", 64, 4, hosts=[[0, 1, 2, 3]]) == "star", "one host: falls back"
    monkeypatch.setenv("DISTTORCH_ALGORITHM", "ring")
    assert select.choose("all_gather", 64, 4, hosts=[[0, 1], [2, 3]]) == "ring"
    assert select.choose("scatter", 64, 4, hosts=[[0, 1], [2, 3]]) == "hierarchical", "ring has none"


def test_shm_needs_the_whole_group_on_one_board():
    def work(ch):
        with pytest.raises(ValueError, match="every rank of the group on one host"):
            shm.all_reduce(ch, np.ones(3), np.add)
        with pytest.raises(ValueError, match="which ranks share a host"):
            hierarchical.barrier(ch, across=None)

    run_threads(2, work)


@pytest.mark.timeout(60)
def test_steps_are_reported_to_the_callback_and_the_debug_log(caplog):
    steps = []

    def work(ch):
        buf = np.ones(100_000, np.float32)  # two-step rounds
        shm.all_reduce(ch, buf, np.add, on_step=lambda phase, rnd, b: steps.append((ch.rank, phase, rnd)))

    with caplog.at_level(logging.DEBUG, logger="disttorch.distributed.algorithms"):
        run_threads(3, work, hosts=[[0, 1, 2]], slot_bytes=1 << 16)
    rounds = -(-400_000 // (1 << 16))
    for rank in (0, 1, 2):
        assert [s[1:] for s in steps if s[0] == rank] == [
            (phase, rnd) for rnd in range(rounds) for phase in ("write", "reduce", "read")
        ]
    assert "shm all_reduce board rank 1/3 round 6: read" in caplog.text
