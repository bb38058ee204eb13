"""Tests for disttorch.distributed.algorithms: every algorithm on in-memory thread ranks.

Each collective runs on ThreadChannel ranks (threads of this process) and is checked
against a NumPy reference computed sequentially in rank order, for world sizes 1-5 and 8,
sizes including 0 and sizes not divisible by the world size, and every dtype / op pair.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from disttorch.distributed import algorithms
from disttorch.distributed.algorithms import (
    deterministic,
    pairwise,
    ring,
    run_threads,
    select,
    star,
    tree,
)
from disttorch.distributed.algorithms.channel import ThreadWorld

pytestmark = pytest.mark.timeout(60)

WORLDS = [1, 2, 3, 4, 5, 8]
SIZES = [0, 1, 7, 1000]
OPS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}
DTYPE_OPS = [
    (dtype, op) for dtype in (np.float32, np.float64, np.int64, np.int32, np.uint8) for op in OPS
] + [(np.bool_, "min"), (np.bool_, "max")]
TIMEOUT = 5.0

SMALL_SEGMENT = 256  # bytes: forces many pieces per block in the ring tests


def make_data(rank: int, size: int, dtype, op: str, seed: int = 0) -> np.ndarray:
    """Rank ``rank``'s input: distinct per rank, in a range where ``op`` stays finite."""
    rng = np.random.default_rng([seed, rank, size])
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(size) < 0.5
    if dtype.kind == "f":
        if op == "prod":
            return rng.uniform(0.5, 1.5, size).astype(dtype)
        return rng.uniform(-10, 10, size).astype(dtype)
    if op == "prod":
        low = 0 if dtype.kind == "u" else -3
        return rng.integers(low, 4, size).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), size, endpoint=True).astype(dtype)


def rank_order_fold(inputs: list[np.ndarray], ufunc) -> np.ndarray:
    """``((x0 op x1) op x2) ...``: what a sequential loop over the ranks computes."""
    acc = inputs[0].copy()
    for x in inputs[1:]:
        ufunc(acc, x, out=acc)
    return acc


def assert_matches(result: np.ndarray, expected: np.ndarray, what: str) -> None:
    assert result.dtype == expected.dtype, what
    assert result.shape == expected.shape, what
    if result.dtype.kind == "f":
        rtol = 1e-5 if result.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol, err_msg=what)
    else:
        np.testing.assert_array_equal(result, expected, err_msg=what)


def assert_bitwise_equal(results: list[np.ndarray], what: str) -> None:
    for rank, r in enumerate(results[1:], start=1):
        assert r.tobytes() == results[0].tobytes(), f"{what}: rank {rank} differs from rank 0"


def run_collective(world: int, body) -> list:
    return run_threads(world, body, timeout=TIMEOUT)


def run_cases(world: int, cases: list) -> list[list]:
    """Run every ``case(ch)`` in turn on the same ranks; return each case's per-rank results.

    Starting threads costs more than a small collective, so a sweep shares one set.
    """
    per_rank = run_collective(world, lambda ch: [case(ch) for case in cases])
    return [[per_rank[r][i] for r in range(world)] for i in range(len(cases))]


# --------------------------------------------------------------------------- all_reduce

ALL_REDUCE = {
    "ring": ring.all_reduce,
    "ring-segmented": lambda ch, buf, op: ring.all_reduce(ch, buf, op, segment_bytes=SMALL_SEGMENT),
    "tree": tree.all_reduce,
    "star": star.all_reduce,
    "deterministic": deterministic.all_reduce,
    "deterministic-segmented": lambda ch, buf, op: deterministic.all_reduce(
        ch, buf, op, segment_bytes=SMALL_SEGMENT
    ),
    "select": algorithms.all_reduce,
}


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("name", list(ALL_REDUCE))
def test_all_reduce_matches_numpy_and_is_identical_on_every_rank(name, world):
    fn = ALL_REDUCE[name]
    cases, checks = [], []
    for size in SIZES:
        for dtype, op in DTYPE_OPS:
            inputs = [make_data(r, size, dtype, op) for r in range(world)]

            def case(ch, inputs=inputs, op=op):
                buf = inputs[ch.rank].copy()
                fn(ch, buf, OPS[op])
                return buf

            cases.append(case)
            checks.append(
                (
                    f"{name} all_reduce world={world} size={size} {np.dtype(dtype)} {op}",
                    rank_order_fold(inputs, OPS[op]),
                )
            )
    for (what, expected), results in zip(checks, run_cases(world, cases)):
        for r in results:
            assert_matches(r, expected, what)
        assert_bitwise_equal(results, what)


@pytest.mark.parametrize("world", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("name", ["ring", "tree", "star", "deterministic", "select"])
def test_all_reduce_large_buffer(name, world):
    size = 100003  # prime: blocks of unequal size on every world size
    fn = ALL_REDUCE[name]
    pairs = DTYPE_OPS if world == 3 else [(np.float32, "sum"), (np.int64, "prod")]
    cases, checks = [], []
    for dtype, op in pairs:
        inputs = [make_data(r, size, dtype, op, seed=1) for r in range(world)]

        def case(ch, inputs=inputs, op=op):
            buf = inputs[ch.rank].copy()
            fn(ch, buf, OPS[op])
            return buf

        cases.append(case)
        checks.append(
            (
                f"{name} all_reduce world={world} size={size} {np.dtype(dtype)} {op}",
                rank_order_fold(inputs, OPS[op]),
            )
        )
    for (what, expected), results in zip(checks, run_cases(world, cases)):
        assert_matches(results[0], expected, what)
        assert_bitwise_equal(results, what)


@pytest.mark.parametrize("name", ["ring", "tree", "star", "deterministic"])
@pytest.mark.parametrize("world", [2, 3, 5, 6])
def test_min_max_with_signed_zeros_and_nans_are_bitwise_identical(name, world):
    # minimum(0., -0.) and NaN payloads depend on operand order: every rank must still agree.
    special = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, np.inf], dtype=np.float64)
    inputs = [np.random.default_rng(r).permutation(np.tile(special, 5)) for r in range(world)]
    fn = ALL_REDUCE[name]
    for op in (np.minimum, np.maximum, np.add):

        def body(ch):
            buf = inputs[ch.rank].copy()
            fn(ch, buf, op)
            return buf

        assert_bitwise_equal(run_collective(world, body), f"{name} {op.__name__} w={world}")


# ---------------------------------------------------------------- deterministic mode


@pytest.mark.parametrize("world", [2, 3, 4, 5, 7, 8])
def test_deterministic_is_bitwise_rank_order_fold_whatever_the_algorithm(world):
    size = 5003
    rng = np.random.default_rng(world)
    # Wide dynamic range so that different association orders round differently.
    inputs = [
        (rng.standard_normal(size) * 10.0 ** rng.integers(-6, 7, size)).astype(np.float32)
        for _ in range(world)
    ]
    expected = rank_order_fold(inputs, np.add).tobytes()

    variants = {
        "deterministic": lambda ch, b: deterministic.all_reduce(ch, b, np.add),
        "deterministic-segmented": lambda ch, b: deterministic.all_reduce(ch, b, np.add, segment_bytes=100),
        "select ring": lambda ch, b: algorithms.all_reduce(
            ch, b, np.add, algorithm="ring", deterministic=True
        ),
        "select tree": lambda ch, b: algorithms.all_reduce(
            ch, b, np.add, algorithm="tree", deterministic=True
        ),
        "star": lambda ch, b: star.all_reduce(ch, b, np.add),
    }
    for name, fn in variants.items():

        def body(ch):
            buf = inputs[ch.rank].copy()
            fn(ch, buf)
            return buf

        for rank, result in enumerate(run_collective(world, body)):
            assert result.tobytes() == expected, f"{name}: rank {rank} of {world}"

    def ring_body(ch):
        buf = inputs[ch.rank].copy()
        ring.all_reduce(ch, buf, np.add)
        return buf

    # The test data must be able to tell orders apart: the plain ring differs somewhere.
    if world >= 3:
        assert run_collective(world, ring_body)[0].tobytes() != expected


def test_deterministic_env_variable_selects_rank_order(monkeypatch):
    monkeypatch.setenv(select.DETERMINISTIC_ENV, "1")
    assert select.choose("all_reduce", 1 << 30, 4) == "deterministic"
    assert select.choose("reduce", 10, 4) == "deterministic"
    assert select.choose("broadcast", 10, 4) == "tree"
    monkeypatch.setenv(select.DETERMINISTIC_ENV, "0")
    assert select.choose("all_reduce", 1 << 30, 4) == "ring"
    monkeypatch.setenv(select.DETERMINISTIC_ENV, "maybe")
    with pytest.raises(ValueError, match="DISTTORCH_DETERMINISTIC must be 0 or 1"):
        select.choose("all_reduce", 10, 4)


# ---------------------------------------------------------------------- reduce_scatter


def uneven_counts(world: int, seed: int) -> list[int]:
    """Block sizes with zeros and unequal lengths (at least one non-empty block)."""
    rng = np.random.default_rng(seed)
    counts = [int(c) for c in rng.integers(0, 9, world)]
    counts[world // 2] = 0
    counts[-1] += 1
    return counts


REDUCE_SCATTER = {
    "ring": ring.reduce_scatter,
    "ring-segmented": lambda ch, buf, op, counts: ring.reduce_scatter(ch, buf, op, counts, segment_bytes=8),
    "tree": tree.reduce_scatter,
    "star": star.reduce_scatter,
    "deterministic": deterministic.reduce_scatter,
    "deterministic-segmented": lambda ch, buf, op, counts: deterministic.reduce_scatter(
        ch, buf, op, counts, segment_bytes=8
    ),
    "select": algorithms.reduce_scatter,
}


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("name", list(REDUCE_SCATTER))
def test_reduce_scatter_with_uneven_and_empty_blocks(name, world):
    fn = REDUCE_SCATTER[name]
    cases, checks = [], []
    for counts in (uneven_counts(world, 1), uneven_counts(world, 4), [6] * world, [0] * world):
        offsets = np.concatenate([[0], np.cumsum(counts)])
        for dtype, op in [(np.float64, "sum"), (np.int32, "prod"), (np.uint8, "max"), (np.float32, "min")]:
            inputs = [make_data(r, sum(counts), dtype, op) for r in range(world)]

            def case(ch, inputs=inputs, op=op, counts=counts, offsets=offsets):
                buf = inputs[ch.rank].copy()
                fn(ch, buf, OPS[op], counts)
                return buf[offsets[ch.rank] : offsets[ch.rank + 1]]

            cases.append(case)
            checks.append(
                (f"{name} reduce_scatter counts={counts} {op}", offsets, rank_order_fold(inputs, OPS[op]))
            )
    for (what, offsets, expected), blocks in zip(checks, run_cases(world, cases)):
        for rank, block in enumerate(blocks):
            assert_matches(block, expected[offsets[rank] : offsets[rank + 1]], f"{what} rank={rank}")


# -------------------------------------------------------------------------- all_gather

ALL_GATHER = {
    "ring": ring.all_gather,
    "ring-segmented": lambda ch, buf, counts: ring.all_gather(ch, buf, counts, segment_bytes=8),
    "tree": tree.all_gather,
    "star": star.all_gather,
    "select": algorithms.all_gather,
}


@pytest.mark.parametrize("world", WORLDS + [6, 7])
@pytest.mark.parametrize("name", list(ALL_GATHER))
def test_all_gather_with_uneven_and_empty_blocks(name, world):
    fn = ALL_GATHER[name]
    cases, checks = [], []
    for counts in (
        uneven_counts(world, 3),
        uneven_counts(world, 5),
        [5] * world,
        [0] * world,
        [0] * (world - 1) + [3],
    ):
        offsets = np.concatenate([[0], np.cumsum(counts)])
        full = np.arange(sum(counts), dtype=np.int64) * 3 + 1

        def case(ch, counts=counts, offsets=offsets, full=full):
            buf = np.full(full.size, -1, dtype=np.int64)
            mine = slice(offsets[ch.rank], offsets[ch.rank + 1])
            buf[mine] = full[mine]
            fn(ch, buf, counts)
            return buf

        cases.append(case)
        checks.append((f"{name} all_gather counts={counts}", full))
    for (what, full), results in zip(checks, run_cases(world, cases)):
        for rank, result in enumerate(results):
            np.testing.assert_array_equal(result, full, err_msg=f"{what} rank={rank}")


# --------------------------------------------------------------- broadcast and reduce

BROADCAST = {
    "ring": ring.broadcast,
    "tree": tree.broadcast,
    "star": star.broadcast,
    "select": algorithms.broadcast,
}


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("name", list(BROADCAST))
def test_broadcast_from_every_root(name, world):
    fn = BROADCAST[name]
    cases, expected = [], []
    for size in (0, 1, 7, 1001):
        for root in range(world):
            data = make_data(root, size, np.float32, "sum", seed=7)

            def case(ch, data=data, root=root):
                buf = data.copy() if ch.rank == root else np.zeros(data.size, np.float32)
                fn(ch, buf, root)
                return buf

            cases.append(case)
            expected.append((f"{name} broadcast size={size} root={root}", data))
    for (what, data), results in zip(expected, run_cases(world, cases)):
        for rank, result in enumerate(results):
            assert result.tobytes() == data.tobytes(), f"{what} rank={rank}"


REDUCE = {
    "ring": ring.reduce,
    "tree": tree.reduce,
    "star": star.reduce,
    "deterministic": deterministic.reduce,
    "select": algorithms.reduce,
}


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("name", list(REDUCE))
def test_reduce_to_every_root(name, world):
    fn = REDUCE[name]
    cases, checks = [], []
    for size in (0, 1, 7, 1001):
        for dtype, op in [(np.float64, "sum"), (np.int64, "prod"), (np.int32, "min"), (np.bool_, "max")]:
            inputs = [make_data(r, size, dtype, op, seed=2) for r in range(world)]
            for root in range(world):

                def case(ch, inputs=inputs, op=op, root=root):
                    buf = inputs[ch.rank].copy()
                    fn(ch, buf, OPS[op], root)
                    return buf

                cases.append(case)
                checks.append(
                    (f"{name} reduce size={size} {op} root={root}", root, rank_order_fold(inputs, OPS[op]))
                )
    for (what, root, expected), results in zip(checks, run_cases(world, cases)):
        assert_matches(results[root], expected, what)
        if name in ("star", "deterministic"):  # both fold in rank order
            assert results[root].tobytes() == expected.tobytes(), what


# ------------------------------------------------------------- gather, scatter, all_to_all


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("via_select", [False, True])
def test_gather_and_scatter(world, via_select):
    gather = algorithms.gather if via_select else star.gather
    scatter = algorithms.scatter if via_select else star.scatter
    for root in range(world):
        for size in (0, 3):

            def body(ch):
                send = np.arange(size, dtype=np.float64) + 10 * ch.rank
                recv = [np.empty(size) for _ in range(world)] if ch.rank == root else None
                gather(ch, send, recv, root)
                out = np.empty(size)
                parts = [np.full(size, 100.0 + r) for r in range(world)]
                scatter(ch, parts if ch.rank == root else None, out, root)
                return recv, out

            results = run_collective(world, body)
            gathered = results[root][0]
            for r in range(world):
                np.testing.assert_array_equal(gathered[r], np.arange(size) + 10 * r)
                np.testing.assert_array_equal(results[r][1], np.full(size, 100.0 + r))


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("fn", [pairwise.all_to_all, algorithms.all_to_all])
def test_all_to_all_with_unequal_blocks(world, fn):
    def length(src: int, dst: int) -> int:  # what src sends to dst; zero for some pairs
        return (src * 3 + dst * 5) % 4

    def body(ch):
        send = [np.full(length(ch.rank, d), ch.rank * 100 + d, np.int32) for d in range(world)]
        recv = [np.empty(length(s, ch.rank), np.int32) for s in range(world)]
        fn(ch, send, recv)
        return recv

    for rank, recv in enumerate(run_collective(world, body)):
        for src, block in enumerate(recv):
            np.testing.assert_array_equal(block, np.full(length(src, rank), src * 100 + rank))


# ------------------------------------------------------------------ cost of the ring


@pytest.mark.parametrize("world", [2, 3, 4, 5, 8])
def test_ring_all_reduce_sends_2_n_minus_1_over_n_times_n_bytes(world):
    numel = 1000 * world
    nbytes = numel * 8
    segment = 2000  # bytes: 1000 elements per block -> 4 pieces of 250 elements

    def body(ch):
        buf = np.ones(numel)
        ring.all_reduce(ch, buf, np.add, segment_bytes=segment)
        return ch.bytes_sent, ch.messages_sent

    for sent, messages in run_collective(world, body):
        assert sent == 2 * (world - 1) * nbytes // world
        assert messages == 2 * (world - 1) * 4


def test_tree_all_reduce_step_count():
    def body(ch):
        buf = np.ones(10)
        tree.all_reduce(ch, buf, np.add)
        return ch.messages_sent

    assert run_collective(8, body) == [3] * 8  # log2(8) exchanges
    # 5 ranks: rank 0 folds into 1; rank 1 does 2 exchanges, then returns the result to 0
    assert run_collective(5, body) == [1, 3, 2, 2, 2]


def test_tree_schedule_pairs_every_participant_once_per_step():
    assert tree.describe_all_reduce(6).splitlines() == [
        "tree all_reduce on 6 ranks: 2 exchange steps among 4; ranks 0, 2 sit out",
        "fold in   0 -> 1   2 -> 3",
        "step 0    1 <-> 3   4 <-> 5",
        "step 1    1 <-> 4   3 <-> 5",
        "fold out  1 -> 0   3 -> 2",
    ]
    for size in range(2, 17):
        p = 1 << (size.bit_length() - 1)
        for step in range(p.bit_length() - 1):
            partners = [tree.doubling_partner(r, step, size) for r in range(size)]
            assert partners.count(None) == size - p
            for rank, partner in enumerate(partners):
                if partner is not None:
                    assert partners[partner] == rank, (size, step, rank)


# ------------------------------------------------------------- watching the ring


def test_on_step_callback_follows_describe_all_reduce():
    world = 4
    steps = {r: [] for r in range(world)}

    def body(ch):
        buf = np.full(8, float(ch.rank + 1))

        def on_step(phase, step, send_peer, send_chunk, recv_peer, recv_chunk, b):
            steps[ch.rank].append((phase, step, send_peer, send_chunk, recv_peer, recv_chunk, b.copy()))

        ring.all_reduce(ch, buf, np.add, on_step=on_step)
        return buf

    results = run_collective(world, body)
    np.testing.assert_array_equal(results[0], np.full(8, 10.0))
    table = ring.describe_all_reduce(world).splitlines()[2:]
    for rank in range(world):
        records = steps[rank]
        assert [(p, s) for p, s, *_ in records] == [
            ("reduce_scatter", 0),
            ("reduce_scatter", 1),
            ("reduce_scatter", 2),
            ("all_gather", 0),
            ("all_gather", 1),
            ("all_gather", 2),
        ]
        for (phase, _step, send_peer, send_chunk, recv_peer, recv_chunk, _), line in zip(records, table):
            assert send_peer == (rank + 1) % world and recv_peer == (rank - 1) % world
            verb = "add" if phase == "reduce_scatter" else "copy"
            cell = line[22 + 15 * rank : 22 + 15 * (rank + 1)].strip()
            assert cell == f"send {send_chunk}/{verb} {recv_chunk}"
        # after reduce-scatter the rank's own block (2 elements) is complete: 1+2+3+4
        own = records[2][6][2 * rank : 2 * rank + 2]
        np.testing.assert_array_equal(own, [10.0, 10.0])


def test_describe_all_reduce_table():
    assert ring.describe_all_reduce(3).splitlines() == [
        "ring all_reduce on 3 ranks: every step, rank r sends to r+1 and receives from r-1",
        "phase           step  rank 0         rank 1         rank 2",
        "reduce_scatter  0     send 2/add 1   send 0/add 2   send 1/add 0",
        "reduce_scatter  1     send 1/add 0   send 2/add 1   send 0/add 2",
        "all_gather      0     send 0/copy 2  send 1/copy 0  send 2/copy 1",
        "all_gather      1     send 2/copy 1  send 0/copy 2  send 1/copy 0",
    ]


def test_debug_logging_reports_every_ring_step(caplog):
    def body(ch):
        ring.all_reduce(ch, np.ones(12), np.add)

    with caplog.at_level(logging.DEBUG, logger="disttorch.distributed.algorithms"):
        run_collective(3, body)
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3 * 2 * 2  # ranks x phases x (n - 1) steps
    assert (
        "ring reduce_scatter rank 0 step 0/2: sent block 2 to rank 1, reduced block 1 from rank 2" in messages
    )


# ------------------------------------------------------------------------ select


def test_automatic_choice_by_size_and_world(monkeypatch):
    monkeypatch.delenv(select.ALGORITHM_ENV, raising=False)
    monkeypatch.delenv(select.DETERMINISTIC_ENV, raising=False)
    small, large = 4096, 64 << 20
    assert select.choose("all_reduce", small, 4) == "tree"
    assert select.choose("all_reduce", large, 4) == "ring"
    assert select.choose("all_reduce", select.SMALL_MESSAGE_BYTES, 4) == "tree"
    assert select.choose("all_reduce", select.SMALL_MESSAGE_BYTES + 1, 4) == "ring"
    assert select.choose("reduce_scatter", large, 4) == "ring"
    assert select.choose("broadcast", large, 2) == "tree"
    assert select.choose("broadcast", large, 4) == "ring"
    assert select.choose("all_gather", small, 4) == "tree"
    assert select.choose("all_gather", large, 4) == "ring"
    assert select.choose("gather", large, 4) == "star"
    assert select.choose("all_to_all", large, 4) == "pairwise"
    assert select.resolve("all_reduce", large, 4) is ring.all_reduce


def test_algorithm_argument_and_environment_override(monkeypatch):
    monkeypatch.delenv(select.DETERMINISTIC_ENV, raising=False)
    monkeypatch.setenv(select.ALGORITHM_ENV, "star")
    assert select.choose("all_reduce", 64 << 20, 4) == "star"
    assert select.choose("all_to_all", 10, 4) == "pairwise"  # star has none: automatic
    assert select.choose("all_reduce", 10, 4, algorithm="ring") == "ring"  # argument wins
    assert select.choose("all_reduce", 10, 4, algorithm="auto") == "tree"
    monkeypatch.setenv(select.ALGORITHM_ENV, "Ring")
    assert select.choose("all_reduce", 10, 4) == "ring"
    monkeypatch.setenv(select.ALGORITHM_ENV, "butterfly")
    with pytest.raises(ValueError, match="DISTTORCH_ALGORITHM='butterfly' is not an algorithm"):
        select.choose("all_reduce", 10, 4)
    with pytest.raises(ValueError, match="algorithm 'tree' does not implement gather"):
        select.choose("gather", 10, 4, algorithm="tree")
    with pytest.raises(ValueError, match="unknown collective 'allreduce'"):
        select.choose("allreduce", 10, 4)


def test_entry_point_honours_algorithm_argument():
    def body(ch):
        buf = np.ones(4 * 1000)
        algorithms.all_reduce(ch, buf, np.add, algorithm="ring")
        return ch.messages_sent, buf[0]

    assert run_collective(4, body) == [(6, 4.0)] * 4  # 2 (n - 1) ring steps


# ------------------------------------------------------------ errors and the channel


def test_counts_that_do_not_match_the_buffer_are_rejected():
    def body(ch):
        ring.reduce_scatter(ch, np.zeros(10), np.add, [3, 3])

    with pytest.raises(ValueError, match=r"add up to 6 elements but the buffer holds 10"):
        run_collective(2, body)

    def body2(ch):
        ring.all_gather(ch, np.zeros(10), [10])

    with pytest.raises(ValueError, match=r"one count per rank \(2 counts\), got 1"):
        run_collective(2, body2)


@pytest.mark.parametrize("fn", [tree.broadcast, star.broadcast, ring.broadcast])
def test_root_outside_the_group_is_rejected(fn):
    def body(ch):
        fn(ch, np.zeros(4), 5)

    with pytest.raises(ValueError, match=r"root must be a rank in \[0, 2\), got 5"):
        run_collective(2, body)


def test_non_contiguous_buffer_is_rejected():
    def body(ch):
        ring.all_reduce(ch, np.zeros(10)[::2], np.add)

    with pytest.raises(ValueError, match="1-D contiguous"):
        run_collective(2, body)


def test_recv_times_out_instead_of_hanging():
    world = ThreadWorld(2, timeout=0.2)
    with pytest.raises(TimeoutError, match="rank 0: no message from rank 1 within 0.2 s"):
        world.channel(0).recv(1, np.empty(3))


def test_message_size_mismatch_names_both_sizes():
    world = ThreadWorld(2, timeout=1.0)
    world.channel(1).send(0, np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"has 12 bytes but the receive buffer holds 16 bytes"):
        world.channel(0).recv(1, np.empty(2, np.float64))


def test_failing_rank_wakes_the_others_and_is_reported():
    def body(ch):
        if ch.rank == 2:
            raise KeyError("boom")
        buf = np.ones(10)
        ring.all_reduce(ch, buf, np.add)  # would wait for rank 2 forever

    with pytest.raises(KeyError, match="boom") as info:
        run_threads(4, body, timeout=30.0)
    assert "(raised on rank 2 of 4)" in info.value.__notes__


def test_thread_channel_copies_on_send():
    world = ThreadWorld(2)
    data = np.arange(4.0)
    world.channel(0).send(1, data)
    data[:] = -1  # the sender may reuse its buffer at once
    out = np.empty(4)
    world.channel(1).recv(0, out)
    np.testing.assert_array_equal(out, np.arange(4.0))
    assert isinstance(world.channel(0), algorithms.Channel)
