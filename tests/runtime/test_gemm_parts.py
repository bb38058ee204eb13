"""Matrix products run from compiled code (kernels/gemm_parts.py, kernels/cblas_gemm.py, the
op pool's ``run_products``): a product that qualifies gives NumPy's bits, its parts cover
it exactly, anything NumPy would not hand to ``gemm`` unchanged is refused, and the pool's
workers run the parts whether they spin or sleep."""

from __future__ import annotations

import numpy as np
import pytest

from disttorch.kernels import threads
from disttorch.kernels.gemm_parts import BATCH, FIELDS
from disttorch.kernels.thread_pool import MAX_PRODUCTS, OpPool

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def gemm():
    if threads._budget.gemm is None:
        pytest.skip("no 64-bit-index CBLAS found in NumPy's BLAS (or no threadpoolctl)")
    return threads._budget.gemm


@pytest.fixture(scope="module")
def run_parts():
    pytest.importorskip("numba")
    from disttorch.kernels.cblas_gemm import run_parts

    return run_parts


def _random(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _layouts(dtype):
    """(a, b) pairs of every layout BLAS reads in place."""
    a, b = _random((37, 29), dtype, 1), _random((29, 23), dtype, 2)
    return {
        "contiguous": (a, b),
        "a transposed": (np.ascontiguousarray(a.T).T, b),
        "b transposed": (a, np.ascontiguousarray(b.T).T),
        "row slices": (_random((50, 40), dtype)[5:42, 3:32], b),
        "stack": (_random((6, 37, 29), dtype), _random((6, 29, 23), dtype)),
        "broadcast stack": (_random((2, 3, 37, 29), dtype), b),
        "broadcast both dims": (_random((1, 1, 37, 29), dtype), _random((2, 3, 29, 23), dtype)),
        # batch dims that do not flatten into one stride: a row per outer index
        "heads of a transposed view": (
            _random((4, 37, 3, 29), dtype).transpose(0, 2, 1, 3),
            _random((4, 3, 29, 23), dtype),
        ),
        "broadcast in one dim only": (_random((2, 1, 37, 29), dtype), _random((1, 3, 29, 23), dtype)),
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", list(_layouts(np.float32)), ids=lambda name: name.replace(" ", "-"))
def test_a_whole_product_run_compiled_has_numpys_bits(gemm, run_parts, dtype, layout):
    a, b = _layouts(dtype)[layout]
    expected = np.matmul(a, b)
    out = np.full(expected.shape, np.nan, dtype)
    rows = gemm.rows(a, b, out)
    assert rows is not None
    run_parts(rows, len(rows))
    assert np.array_equal(out, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((6, 37, 29), (6, 29, 23)), ((40, 29), (29, 23)), ((9, 29), (29, 40))])
@pytest.mark.parametrize("k", [2, 3, 4, 100])
def test_the_parts_of_a_split_cover_the_product(gemm, run_parts, dtype, shapes, k):
    """Each part is a smaller ``gemm``: the result equals NumPy's products of the same slices
    (a stack's by batch, else by the longer side of the result), except that NumPy makes a
    slice of one row or column a matrix-vector product: there, close."""
    a, b = _random(shapes[0], dtype, 3), _random(shapes[1], dtype, 4)
    out = np.full(np.matmul(a, b).shape, np.nan, dtype)
    parts, bounds = gemm.split(a, b, out, k)
    run_parts(parts, len(parts))
    axis = 0 if a.ndim == 3 else (-2 if out.shape[-2] >= out.shape[-1] else -1)
    total = out.shape[axis]
    assert len(parts) == min(k, total) and bounds == list(range(len(parts) + 1))
    pieces = []
    for t in range(len(parts)):
        i, j = total * t // len(parts), total * (t + 1) // len(parts)
        if axis == 0:
            pieces.append(np.matmul(a[i:j], b[i:j]))
        elif axis == -2:
            pieces.append(np.matmul(a[i:j], b))
        else:
            pieces.append(np.matmul(a, b[:, i:j]))
    if min(p.shape[axis] for p in pieces) > 1 or axis == 0:
        assert np.array_equal(out, np.concatenate(pieces, axis=axis))
    else:
        np.testing.assert_allclose(out, np.concatenate(pieces, axis=axis), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((6, 37, 29), (6, 29, 23)), ((40, 29), (29, 23)), ((9, 29), (29, 40))])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_each_part_adds_the_bias_to_its_own_rows_with_numpys_bits(gemm, run_parts, dtype, shapes, k):
    """A bias in the rows: every part (of a stack, of the rows or of the columns) adds its
    slice of the bias to what it computed, the bits of ``out += bias`` after the whole."""
    a, b = _random(shapes[0], dtype, 3), _random(shapes[1], dtype, 4)
    bias = _random(shapes[1][-1:], dtype, 5)
    plain = np.full(np.matmul(a, b).shape, np.nan, dtype)
    parts, _ = gemm.split(a, b, plain, k)
    run_parts(parts, len(parts))
    plain += bias
    out = np.full(plain.shape, np.nan, dtype)
    parts, _ = gemm.split(a, b, out, k, bias)
    run_parts(parts, len(parts))
    assert np.array_equal(out, plain)


def test_a_bias_blas_cannot_read_as_one_vector_of_the_results_type_is_refused(gemm):
    a, b = _random((40, 29), np.float32), _random((29, 23), np.float32)
    out = np.empty((40, 23), np.float32)
    for bias in (
        _random(23, np.float64),  # another dtype
        _random(46, np.float32)[::2],  # a step
        _random((1, 23), np.float32),  # not a vector
        out[0],  # inside the result
    ):
        assert gemm.split(a, b, out, 2, bias) is None
    assert gemm.split(a, b, out, 2, _random(23, np.float32)) is not None


def test_a_stack_whose_batch_dims_do_not_flatten_splits_by_its_outer_index(gemm, run_parts):
    """Attention's ``(batch, heads)`` products on a transposed view: a row per batch index,
    each running its heads, the rows shared out among the threads."""
    a = _random((5, 16, 3, 8), np.float32).transpose(0, 2, 1, 3)  # (5, 3, 16, 8), heads strided
    b = _random((5, 3, 8, 16), np.float32)
    out = np.full((5, 3, 16, 16), np.nan, np.float32)
    rows, bounds = gemm.split(a, b, out, 2)
    assert len(rows) == 5 and bounds == [0, 2, 5]
    run_parts(rows, len(rows))
    assert np.array_equal(out, np.matmul(a, b))


def test_products_numpy_would_not_hand_to_gemm_unchanged_are_refused(gemm):
    a, b = _random((8, 6), np.float32), _random((6, 5), np.float32)
    out = np.empty((8, 5), np.float32)
    big = _random((8, 8), np.float32)
    refused = {
        "a with steps": (_random((8, 12), np.float32)[:, ::2], b, out),
        "b with steps": (a, _random((6, 10), np.float32)[:, ::2], out),
        "out with steps": (a, b, np.empty((8, 10), np.float32)[:, ::2]),
        "out overlaps a": (big[:, :6], _random((6, 6), np.float32), big[:, 2:]),
        "integers": (a.astype(np.int64), b.astype(np.int64), out.astype(np.int64)),
        "float16": (a.astype(np.float16), b.astype(np.float16), out.astype(np.float16)),
        "complex": (a.astype(np.complex64), b.astype(np.complex64), out.astype(np.complex64)),
        "mixed dtypes": (a.astype(np.float64), b, out),
        "byte-swapped": (a.astype(">f4"), b.astype(">f4"), out.astype(">f4")),
        "a row vector (gemv)": (a[:1], b, out[:1]),
        "a column result (gemv)": (a, b[:, :1], out[:, :1]),
        "x @ x.T (syrk)": (a, a.T, np.empty((8, 8), np.float32)),
        "empty": (a[:, :0], b[:0], out),
        "empty batch": (_random((0, 8, 6), np.float32), b, np.empty((0, 8, 5), np.float32)),
        "too many outer batch indices": (
            _random((4097, 2, 2, 3), np.float32).transpose(0, 2, 1, 3),
            _random((3, 5), np.float32),
            np.empty((4097, 2, 2, 5), np.float32),
        ),
    }
    for name, (x, y, z) in refused.items():
        assert gemm.rows(x, y, z) is None, name
        assert gemm.split(x, y, z, 2) is None, name


@pytest.fixture(params=["spin", "sleep at once"])
def pool(request):
    made = OpPool(3)
    if not made.runs_products:
        made.close()
        pytest.skip("numba is not installed: no compiled products")
    if request.param == "sleep at once":
        made.turns = 1
    yield made
    made.close()


def test_the_pool_runs_products_on_its_workers_whether_they_spin_or_sleep(gemm, pool):
    a, b = _random((8, 64, 48), np.float32), _random((8, 48, 32), np.float32)
    expected = np.matmul(a, b)
    for _ in range(3):  # again, after the workers went back to waiting (or to sleep)
        out = np.full(expected.shape, np.nan, np.float32)
        parts, _ = gemm.split(a, b, out, 8)  # 8 one-product parts: 2 for the caller, 2 each
        before = pool.counters[3:6].copy()
        pool.run_products(parts, [0, 2, 4, 6, 8], (a, b, out))
        assert (pool.counters[3:6] - before).tolist() == [1, 1, 1]  # one part each, reported
        assert np.array_equal(out, expected)


def test_the_pool_keeps_the_operands_of_products_until_they_finished(gemm, pool, monkeypatch):
    """The rows hold bare addresses: after an interrupted wait the arrays stay referenced by
    the pool until the next split has drained the parts."""
    a, b = _random((8, 64, 48), np.float32), _random((8, 48, 32), np.float32)
    out = np.empty((8, 64, 32), np.float32)
    waits = pool._spin

    def interrupted(index: int, value: int) -> bool:
        monkeypatch.setattr(pool, "_spin", waits)
        raise KeyboardInterrupt

    monkeypatch.setattr(pool, "_spin", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pool.run_products(*gemm.split(a, b, out, 4), (a, b, out))
    assert any(x is out for x in pool.operands)
    pool.run([(lambda i, j: None, t, t + 1) for t in range(4)])
    assert pool.operands == () and np.array_equal(out, np.matmul(a, b))


def test_python_parts_and_products_alternate_on_the_same_workers(gemm, pool):
    a, b = _random((4, 16, 8), np.float64), _random((4, 8, 16), np.float64)
    out = np.empty((4, 16, 16))
    log: list = []
    for _ in range(3):
        pool.run_products(*gemm.split(a, b, out, 4), (a, b, out))
        pool.run([(lambda i, j: log.append(i), t, t + 1) for t in range(4)])
    assert sorted(log) == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert np.array_equal(out, np.matmul(a, b))


def test_many_hand_offs_of_products_and_python_parts_lose_none(gemm, pool):
    rng = np.random.default_rng(0)
    log: list = []
    for trial in range(100):
        n = int(rng.choice([8, 48, 128]))
        a, b = _random((4, n, n), np.float32, trial), _random((4, n, n), np.float32, trial + 1)
        out = np.full((4, n, n), np.nan, np.float32)
        pool.run_products(*gemm.split(a, b, out, 4), (a, b, out))
        assert np.array_equal(out, np.matmul(a, b))
        if trial % 7 == 0:
            pool.run([(lambda i, j: log.append(i), t, t + 1) for t in range(4)])
    assert sorted(log) == sorted(list(range(4)) * len(range(0, 100, 7)))


class _AnsweringPool(OpPool):
    """The op pool, recording what its worker's compiled loop answered each time it returned."""

    def __init__(self, workers: int) -> None:
        self.answers: list = []
        super().__init__(workers)

    def _serve(self, w: int) -> None:
        serve = self.serve
        if serve is not None:
            self.serve = lambda *args: self.answers.append(serve(*args)) or self.answers[-1]
        super()._serve(w)


def test_a_worker_that_finishes_products_while_the_caller_sleeps_wakes_it(gemm):
    """The caller's part is tiny and the worker's long: the caller falls asleep waiting, and
    the worker, reporting from its compiled loop, returns to Python to wake it."""
    made = _AnsweringPool(1)
    if not made.runs_products:
        made.close()
        pytest.skip("numba is not installed: no compiled products")
    try:
        small = [np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), np.empty((2, 2), np.float32)]
        large = [_random((800, 800), np.float32, 5), _random((800, 800), np.float32, 6)]
        large.append(np.empty((800, 800), np.float32))
        rows = np.concatenate([gemm.rows(*small), gemm.rows(*large)])
        tiny = np.concatenate([gemm.rows(*small)] * 2)
        spin = made._spin
        for _ in range(5):
            made.run_products(tiny, [0, 1, 2], small)  # the worker now waits in its compiled loop
            made._spin = lambda index, value: False  # the caller sleeps at once
            made.run_products(rows, [0, 1, 2], small + large)
            made._spin = spin
            if any(status == 2 for _, status in made.answers):  # spin_wait.WAKE_CALLER
                break
        assert np.array_equal(large[2], np.matmul(large[0], large[1]))
        assert any(status == 2 for _, status in made.answers)
    finally:
        made.close()


def test_split_matmul_runs_compiled_with_the_python_splits_numbers(gemm, monkeypatch):
    """``threads.matmuls`` on three threads: the compiled parts give the bits of the same
    parts as ``np.matmul`` calls (the path without numba), for split and whole products."""
    monkeypatch.setattr(threads, "MIN_PART_ELEMENTS", 1)
    before = threads.get_num_threads()
    threads.set_num_threads(3)
    try:
        if not threads._budget.workers().runs_products:
            pytest.skip("numba is not installed: no compiled products")
        products = [
            [(_random((96, 40), np.float32), _random((40, 72), np.float32))],  # split by rows
            [(_random((5, 30, 20), np.float32), _random((20, 30), np.float32))],  # by batch
            [(_random((24, 16), np.float32), _random((16, 8), np.float32))] * 4,  # whole, 4 on 3
        ]
        for group in products:
            compiled = threads.matmuls(group)
            threads._budget.gemm = None
            plain = threads.matmuls(group)
            threads._budget.gemm = gemm
            assert all(np.array_equal(x, y) for x, y in zip(compiled, plain))
    finally:
        threads._budget.gemm = gemm
        threads.set_num_threads(before)


def test_a_worker_takes_at_most_max_products(gemm):
    """A share of more rows than a worker's part holds runs as Python instead."""
    rows = np.zeros((2 * MAX_PRODUCTS + 1, FIELDS), np.int64)
    assert FIELDS > BATCH
    assert not threads._run_compiled((rows, [0, 1, len(rows)]), [])
