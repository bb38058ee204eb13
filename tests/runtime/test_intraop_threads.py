"""Intra-op threads (kernels/threads.py): the budget is honoured, results do not depend on
it, BLAS and op threads never oversubscribe, and forked children make their own pool.

Tests lower ``MIN_PART_ELEMENTS`` so that small tensors take the split path."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import disttorch
import disttorch.nn.functional as F
from disttorch.kernels import threads
from disttorch.kernels.thread_pool import OpPool

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def split(monkeypatch):
    """Every op with two or more rows splits; the budget is restored afterwards."""
    from disttorch.optim import optimizer

    monkeypatch.setattr(threads, "MIN_PART_ELEMENTS", 1)
    monkeypatch.setattr(optimizer, "PYTHON_UNITS_PER_PARAMETER", 0)
    before = disttorch.get_num_threads()
    yield
    disttorch.set_num_threads(before)


class _RecordingPool(OpPool):
    """The op pool, recording the name of the thread that runs each part handed to a worker
    (for matrix products run in compiled code: of each worker that reported one finished)."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.ran: list = []

    def run(self, parts, meanwhile=None):
        def recorded(body):
            def part(start, stop):
                self.ran.append(threading.current_thread().name)
                return body(start, stop)

            return part

        super().run(parts[:1] + [(recorded(body), start, stop) for body, start, stop in parts[1:]], meanwhile)

    def run_products(self, products, bounds, operands, meanwhile=None):
        workers = len(self.threads)
        before = self.counters[workers:].copy()
        super().run_products(products, bounds, operands, meanwhile)
        finished = self.counters[workers:] - before
        self.ran.extend(f"disttorch-intraop_{w}" for w in range(workers) for _ in range(finished[w]))


def _run_recorded(n: int, op) -> list:
    disttorch.set_num_threads(n)
    pool = _RecordingPool(max(1, n - 1))
    threads._budget.pool = pool
    try:
        op()
    finally:
        threads._budget.pool = None
        pool.close()
    return pool.ran


# ---------------------------------------------------------------------- the budget
@pytest.mark.parametrize(
    "op",
    [
        lambda x: x * 2 + x,
        lambda x: x.exp(),
        lambda x: F.relu(x),
        lambda x: F.softmax(x, dim=-1),
        lambda x: F.conv2d(x[:, None], disttorch.ones(4, 1, 3, 3)),
        lambda x: F.max_pool2d(x[:, None], 2),
        lambda x: x @ x,
        lambda x: F.batch_norm(x, None, None, training=True),
        lambda x: F.adaptive_avg_pool2d(x, (5, 3)),
        lambda x: F.adaptive_max_pool2d(x, (5, 3)),
        lambda x: x.amax(),
        lambda x: x.amin(-1),
        lambda x: x.max(1),
        lambda x: x.prod(),
        lambda x: x.var((0, 2)),
        lambda x: x.std((1, 2)),
        lambda x: x.norm(p=3),
        lambda x: x.logsumexp(1),
        lambda x: x.cumsum(-1),
        lambda x: x.cumprod(1),
        lambda x: x.cummax(-1),
        lambda x: x.logcumsumexp(0),
        lambda x: x.sort(-1, descending=True),
        lambda x: x.topk(3, 1),
        lambda x: x.kthvalue(2, -1),
        lambda x: x.median(1),
        lambda x: x.nanmedian(-1),
        lambda x: F.dropout(x, 0.3),
        lambda x: F.dropout2d(x[None], 0.3),
        lambda x: F.alpha_dropout(x, 0.3, training=True),
        lambda x: F.scaled_dot_product_attention(x, x, x, dropout_p=0.3),
        lambda x: x / 3.0,
        lambda x: -x,
        lambda x: x.abs(),
        lambda x: x.sign(),
        lambda x: x.square(),
        lambda x: x.clamp(-1, 1),
        lambda x: disttorch.where(x > 0, x, 1.0),
        lambda x: x.isnan(),
        lambda x: disttorch.maximum(x, x.flip(0)),
        lambda x: F.leaky_relu(x),
        lambda x: F.elu(x),
        lambda x: F.selu(x),
        lambda x: F.silu(x),
        lambda x: F.softplus(x),
        lambda x: x.floor(),
        lambda x: x.round(decimals=1),
        lambda x: F.glu(x),
        lambda x: F.normalize(x, dim=-1),
        lambda x: x.argmax(1),
        lambda x: x.argmin(-1),
        lambda x: x.any(),
        lambda x: x.all(-1),
        lambda x: x.transpose(0, 2).contiguous(),
        lambda x: x.clone(),
        lambda x: x.transpose(1, 2).reshape(-1),
        lambda x: disttorch.cat([x, x.double()], 1),
        lambda x: disttorch.cat([x, x[:3]]),
        lambda x: x.to(disttorch.bfloat16),
        lambda x: F.pad(x, (1, 2, -1, 3), value=0.5),
        lambda x: F.pad(x, (2, 3), mode="reflect"),
        lambda x: F.interpolate(x, scale_factor=2, mode="linear"),
        lambda x: F.interpolate(x[None], size=(5, 20), mode="bicubic"),
    ],
    ids=[
        "binary",
        "unary",
        "relu",
        "softmax",
        "conv",
        "pool",
        "batched matmul",
        "batch_norm",
        "adaptive avg pool",
        "adaptive max pool",
        "amax",
        "amin",
        "max dim",
        "prod",
        "var",
        "std",
        "norm",
        "logsumexp",
        "cumsum",
        "cumprod",
        "cummax",
        "logcumsumexp",
        "sort",
        "topk",
        "kthvalue",
        "median dim",
        "nanmedian dim",
        "dropout",
        "dropout2d",
        "alpha_dropout",
        "attention dropout",
        "divide",
        "negative",
        "abs",
        "sign",
        "square",
        "clamp",
        "where",
        "comparison",
        "maximum",
        "leaky_relu",
        "elu",
        "selu",
        "silu",
        "softplus",
        "floor",
        "round",
        "glu (halves are views)",
        "normalize",
        "argmax",
        "argmin",
        "any",
        "all dim",
        "contiguous",
        "clone",
        "reshape copy",
        "cat",
        "cat dim 0",
        "cast",
        "pad",
        "reflect pad",
        "linear interpolation",
        "bicubic interpolation",
    ],
)
def test_an_op_runs_on_several_threads_only_when_allowed(split, op):
    x = disttorch.randn(8, 16, 16)
    several = _run_recorded(4, lambda: op(x))
    assert several and len(several) % 3 == 0  # three parts besides the caller's, per split op
    assert all(name.startswith("disttorch-intraop") for name in several)
    assert _run_recorded(1, lambda: op(x)) == []


@pytest.mark.parametrize(
    "backward",
    [
        lambda x: F.batch_norm(x, None, None, training=True),
        lambda x: F.adaptive_avg_pool2d(x, (5, 3)),
        lambda x: F.adaptive_max_pool2d(x, (5, 3)),
        lambda x: F.embedding(disttorch.arange(64) % 16, x.reshape(128, 2)),
        lambda x: x.cumsum(1),
        lambda x: x.cumprod(0),
        lambda x: F.dropout(x, 0.3),
        lambda x: F.scaled_dot_product_attention(x, x, x, dropout_p=0.3),
        lambda x: F.silu(x),
        lambda x: F.softplus(x),
        lambda x: F.elu(x),
        lambda x: F.leaky_relu(x),
        lambda x: x.clamp(-1, 1),
        lambda x: F.pad(x, (1, 1, 2, 0), mode="circular"),
        lambda x: F.interpolate(x, size=11, mode="nearest"),
    ],
    ids=[
        "batch_norm",
        "adaptive avg pool",
        "adaptive max pool",
        "embedding",
        "cumsum",
        "cumprod",
        "dropout",
        "attention dropout",
        "silu",
        "softplus",
        "elu",
        "leaky_relu",
        "clamp",
        "circular pad",
        "nearest interpolation",
    ],
)
def test_a_backward_runs_on_several_threads_only_when_allowed(split, backward):
    x = disttorch.randn(8, 16, 2, requires_grad=True)
    out = backward(x)
    g = disttorch.ones_like(out)
    several = _run_recorded(4, lambda: disttorch.autograd.grad(out, x, g, retain_graph=True))
    assert several and len(several) % 3 == 0
    assert _run_recorded(1, lambda: disttorch.autograd.grad(out, x, g, retain_graph=True)) == []


@pytest.mark.parametrize(
    "loss",
    [
        lambda x, y: F.mse_loss(x, y),
        lambda x, y: F.l1_loss(x, y, reduction="sum"),
        lambda x, y: F.smooth_l1_loss(x, y),
        lambda x, y: F.huber_loss(x, y),
        lambda x, y: F.binary_cross_entropy(x, y, weight=y[0]),
        lambda x, y: F.binary_cross_entropy_with_logits(x, y),
        lambda x, y: F.kl_div(x, y, reduction="batchmean"),
        lambda x, y: F.cross_entropy(x, disttorch.arange(8 * 16).reshape(8, 16) % 16),
        lambda x, y: F.cross_entropy(x, y, label_smoothing=0.1),
        lambda x, y: F.nll_loss(x, (disttorch.arange(8 * 16).reshape(8, 16) % 16), reduction="none"),
    ],
    ids=[
        "mse",
        "l1",
        "smooth_l1",
        "huber",
        "bce",
        "bce_with_logits",
        "kl_div",
        "cross_entropy",
        "soft targets",
        "nll",
    ],
)
def test_a_loss_runs_forward_and_backward_on_several_threads_only_when_allowed(split, loss):
    x = (disttorch.rand(8, 16, 16) * 0.98 + 0.01).requires_grad_()  # probabilities, logits alike
    y = disttorch.rand(8, 16, 16) * 0.98 + 0.01
    assert len(_run_recorded(4, lambda: loss(x, y))) >= 3  # forward: at least one split
    assert _run_recorded(1, lambda: loss(x, y)) == []
    out = loss(x, y)
    g = disttorch.ones_like(out)
    assert len(_run_recorded(4, lambda: disttorch.autograd.grad(out, x, g, retain_graph=True))) >= 3
    assert _run_recorded(1, lambda: disttorch.autograd.grad(out, x, g, retain_graph=True)) == []


def test_bfloat16_casts_run_on_several_threads_with_the_same_bits(split):
    x = disttorch.randn(8, 16, 16)
    assert len(_run_recorded(4, lambda: x.to(disttorch.bfloat16))) == 3  # the cast: one split
    assert _run_recorded(1, lambda: x.to(disttorch.bfloat16)) == []
    low = x.to(disttorch.bfloat16)
    # a bfloat16 op: float32 copy in, exp, rounded back to bfloat16: three splits
    assert len(_run_recorded(4, low.exp)) == 9 and _run_recorded(1, low.exp) == []
    disttorch.set_num_threads(1)
    one = [low.exp().float().numpy(), x.to(disttorch.float16).numpy()]
    disttorch.set_num_threads(3)
    assert low.exp().dtype == disttorch.bfloat16 and np.array_equal(low.exp().float().numpy(), one[0])
    assert np.array_equal(x.to(disttorch.float16).numpy(), one[1])
    with disttorch.autocast("cpu", dtype=disttorch.bfloat16):
        assert np.array_equal(F.linear(x, x[0]).numpy(), F.linear(low, low[0]).numpy())


def _blas_threads() -> set:
    from threadpoolctl import threadpool_info

    return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


def test_set_num_threads_sets_the_op_budget_and_holds_blas_to_one_thread(split):
    disttorch.set_num_threads(3)
    assert disttorch.get_num_threads() == threads.get_num_threads() == 3
    assert _blas_threads() == {1}


def test_views_split_with_a_c_ordered_result_and_channels_last_keeps_its_layout(split):
    disttorch.set_num_threads(3)
    base = np.arange(6 * 8 * 10, dtype=np.float64).reshape(6, 8, 10)
    for view in (base[:, ::2], base[::-1, :, 1:], np.broadcast_to(base[:, :1], base.shape)):
        pool = _RecordingPool(2)
        threads._budget.pool = pool
        try:
            got = threads.elementwise(np.multiply, view, view + 1)
        finally:
            threads._budget.pool = None
            pool.close()
        assert len(pool.ran) == 2 and got.flags.c_contiguous
        assert np.array_equal(got, view * (view + 1))
    x = disttorch.randn(4, 3, 5, 6).contiguous(memory_format=disttorch.channels_last)
    assert (x * 2).is_contiguous(memory_format=disttorch.channels_last)
    assert F.relu(x).is_contiguous(memory_format=disttorch.channels_last)


@pytest.mark.timeout(60)
def test_changing_the_budget_from_another_thread_while_ops_split(split):
    """set_num_threads waits for the op split on another thread, which keeps the parts it
    was given; no part is lost or run twice."""
    x = np.arange(64 * 8, dtype=np.float64).reshape(64, 8)
    expected = np.exp(x / 100)
    stop = threading.Event()
    errors: list = []

    def change() -> None:
        try:
            for n in [3, 1, 4, 2] * 50:
                disttorch.set_num_threads(n)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            stop.set()

    changer = threading.Thread(target=change)
    disttorch.set_num_threads(2)
    changer.start()
    rounds = 0
    while not stop.is_set() or rounds < 20:
        assert np.array_equal(threads.elementwise(np.exp, x / 100), expected)
        rounds += 1
    changer.join()
    assert not errors


def test_map_rows_into_lets_each_thread_write_its_rows_in_place(split):
    x = np.arange(24.0).reshape(6, 4)
    seen = []

    def double(rows, out=None):
        seen.append(out is None)
        if out is None:
            return (rows * 2,)
        np.multiply(rows, 2, out=out[0])
        return out

    disttorch.set_num_threads(2)
    (got,) = threads.map_rows(double, x, into=True)
    np.testing.assert_array_equal(got, x * 2)
    assert seen == [True, False, False]  # the results' shapes (no rows), then each thread's rows
    seen.clear()
    disttorch.set_num_threads(1)
    np.testing.assert_array_equal(threads.map_rows(double, x, into=True)[0], x * 2)
    assert seen == [True]  # one thread: the whole, returned


def test_small_ops_do_not_split():
    before = disttorch.get_num_threads()
    try:
        assert _run_recorded(4, lambda: disttorch.randn(100, 100) * 2) == []
    finally:
        disttorch.set_num_threads(before)


def test_a_transformers_layer_norm_splits_at_the_real_cut_over():
    """The compiled float32 layer norm (PyTorch's steps, some 30 units an element) splits a
    GPT's (32, 64, 128) activations over two threads, forward and backward."""
    from disttorch.kernels import norms
    from disttorch.kernels.jit import compiled

    if compiled(norms._load_moments_loops) is None:
        pytest.skip("no numba: layer norm's NumPy form, cheaper per element")
    x = disttorch.randn(32, 64, 128, requires_grad=True)
    ln = disttorch.nn.LayerNorm(128)
    before = disttorch.get_num_threads()
    try:
        forward = _run_recorded(2, lambda: ln(x))
        y = ln(x)
        backward = _run_recorded(2, lambda: y.backward(disttorch.ones_like(y)))
    finally:
        disttorch.set_num_threads(before)
    assert forward and backward


def test_operands_that_do_not_broadcast_raise_numpys_own_error(split):
    disttorch.set_num_threads(2)
    with pytest.raises(ValueError, match="could not be broadcast together"):
        threads.elementwise(np.add, np.ones((3, 2)), np.ones((4, 2)))
    wide = np.ones((2, 1)), np.ones((1, 3))  # a result larger than either operand splits
    assert np.array_equal(threads.elementwise(np.add, *wide), np.full((2, 3), 2.0))


def test_omp_num_threads_sets_the_budget_at_start():
    code = "import disttorch; print(disttorch.get_num_threads())"
    env = {**os.environ, "OMP_NUM_THREADS": "3", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "3", out.stderr


# ---------------------------------------------------------------------- oversubscription
def test_blas_stays_on_one_thread_inside_and_outside_split_ops(split):
    disttorch.set_num_threads(2)
    seen = []
    threads.parallel_for(4, lambda a, b: seen.append(_blas_threads()), work=10)
    assert seen == [{1}, {1}] and _blas_threads() == {1}


def test_a_large_matrix_product_splits_over_the_op_pool_and_a_small_one_does_not():
    before = disttorch.get_num_threads()
    rng = np.random.default_rng(0)
    wide, tall = rng.standard_normal((64, 512), np.float32), rng.standard_normal((512, 64), np.float32)
    try:
        assert _run_recorded(2, lambda: threads.matmul(np.ones((8, 8)), np.ones((8, 8)))) == []
        for a, b in (
            (tall, wide),
            (wide.T.copy(), wide),
            (np.stack([wide] * 4).astype(np.float64), np.stack([tall] * 4).astype(np.float64)),
        ):  # rows, a transposed operand, a stack (of float64: each product whole)
            got = []
            assert len(_run_recorded(2, lambda a=a, b=b: got.append(threads.matmul(a, b)))) == 1
            assert np.array_equal(got[0], a @ b)
        # one float64 product: its parts would round otherwise (threads.CUT_DTYPES), so it is
        # whole; so is x.T @ x, which NumPy computes with syrk (its parts would be gemm's)
        for single in ((tall.astype(np.float64), wide.astype(np.float64)), (wide.T, wide)):
            got = []
            assert _run_recorded(2, lambda single=single: got.append(threads.matmul(*single))) == []
            assert np.array_equal(got[0], single[0] @ single[1])
    finally:
        disttorch.set_num_threads(before)


# forward and both backward products of the linear layers of benchmarks/train_step.py's MLP
# (batch 128) and GPT (2048 tokens), and shapes whose cuts fall between a kernel's blocks
_LINEAR_SHAPES = [
    (128, 784, 512),
    (128, 512, 256),
    (2048, 128, 384),
    (2048, 512, 128),
    (300, 200, 700),
    (97, 1000, 33),
]


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64])
@pytest.mark.parametrize("shape", _LINEAR_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_a_layers_products_have_one_threads_bits_on_every_thread_count(shape, dtype):
    """``x @ W.T``, ``g.T @ x`` and ``g @ W`` on 1 to 4 threads: the same bits (a float32 or
    complex product cut by rows or columns, a float64 one whole)."""
    before = disttorch.get_num_threads()
    rng = np.random.default_rng(1)
    m, k, n = shape
    x, w, g = (rng.standard_normal(s).astype(dtype) for s in ((m, k), (n, k), (m, n)))
    products = [(x, w.T), (g.T, x), (g, w)]
    try:
        disttorch.set_num_threads(1)
        one = [threads.matmul(a, b) for a, b in products]
        for n_threads in (2, 3, 4):
            disttorch.set_num_threads(n_threads)
            for (a, b), expected in zip(products, one):
                assert np.array_equal(threads.matmul(a, b), expected)
    finally:
        disttorch.set_num_threads(before)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", _LINEAR_SHAPES[2:], ids=lambda s: "x".join(map(str, s)))
def test_a_product_plus_bias_has_one_threads_bits_and_each_thread_adds_its_part(
    shape, dtype, compiled, monkeypatch
):
    """``x @ W.T + b`` (a linear layer's forward) on 1 to 4 threads, its parts run in
    compiled code or as ``np.matmul`` calls: the bits of one thread's ``out += b``; when the
    product is cut, no thread adds the bias after the product (each part has added its own)."""
    before = disttorch.get_num_threads()
    if not compiled:  # (set_num_threads looks for the BLAS's gemm again)
        monkeypatch.setattr(threads, "find_gemm", lambda paths: None)
    rng = np.random.default_rng(2)
    m, k, n = shape
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in ((m, k), (n, k), (n,)))
    added_after = []
    adds = threads._add_bias
    monkeypatch.setattr(
        threads,
        "_add_bias",
        lambda out, bias: (bias is not None and added_after.append(out.shape)) or adds(out, bias),
    )
    try:
        disttorch.set_num_threads(1)
        assert (threads._budget.gemm is None) == (not compiled)
        one = threads.matmul(x, w.T, bias=b)
        assert np.array_equal(one, np.add(x @ w.T, b))
        for n_threads in (2, 3, 4):
            disttorch.set_num_threads(n_threads)
            added_after.clear()
            assert np.array_equal(threads.matmul(x, w.T, bias=b), one)
            whole = (m, n) in added_after
            assert whole == (threads._most_parts(x, w.T) == 1)
    finally:
        disttorch.set_num_threads(before)


@pytest.mark.parametrize("dtype", [disttorch.float32, disttorch.float64], ids=["float32", "float64"])
def test_an_mlps_training_steps_have_one_threads_bits_on_two_and_three_threads(dtype):
    """Linear layers, ReLU, cross-entropy and SGD with momentum, at the batch of
    ``benchmarks/train_step.py``: every product, each cut or whole, every element-wise op
    and update keeps the bits, so the parameters after two steps are one thread's."""
    before = disttorch.get_num_threads()
    rng = np.random.default_rng(5)
    x = disttorch.tensor(rng.standard_normal((128, 784))).to(dtype)
    y = disttorch.tensor(rng.integers(0, 10, 128))
    params = {}
    try:
        for n in (1, 2, 3):
            disttorch.set_num_threads(n)
            disttorch.manual_seed(0)
            model = disttorch.nn.Sequential(
                disttorch.nn.Linear(784, 512), disttorch.nn.ReLU(), disttorch.nn.Linear(512, 10)
            ).to(dtype)
            opt = disttorch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            for _ in range(2):
                opt.zero_grad()
                F.cross_entropy(model(x), y).backward()
                opt.step()
            params[n] = [p.detach().numpy().copy() for p in model.parameters()]
        for n in (2, 3):
            assert all(np.array_equal(a, b) for a, b in zip(params[n], params[1]))
    finally:
        disttorch.set_num_threads(before)


def test_independent_products_run_side_by_side_each_whole_with_one_threads_bits():
    """Two threads, two products: each runs whole on its own thread (one hand-off), so the
    float32 results are the one-thread results to the bit; with more threads than products
    the products split, deterministically."""
    before = disttorch.get_num_threads()
    rng = np.random.default_rng(2)
    g, w, x = (rng.standard_normal(s, np.float32) for s in ((300, 200), (200, 700), (300, 700)))
    products = [(g, w), (g.T, x)]
    try:
        disttorch.set_num_threads(1)
        one = [g @ w, g.T @ x]
        ran: list = []
        for n in (2, 2, 4, 4):
            got = []
            ran.append(_run_recorded(n, lambda: got.extend(threads.matmuls(products))))
            assert [r.shape for r in got] == [(300, 700), (200, 700)]
            if n == 2:
                assert all(np.array_equal(a, b) for a, b in zip(got, one))
            else:
                for a, b in zip(got, one):
                    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
        assert [len(r) for r in ran] == [1, 1, 3, 3]  # parts handed to the workers
        disttorch.set_num_threads(2)  # a product that cannot split runs as called
        assert [r.dtype for r in threads.matmuls([(g, w), (g.astype(np.int64), w.astype(np.int64))])] == [
            np.float32,
            np.int64,
        ]
    finally:
        disttorch.set_num_threads(before)


def test_linear_backward_computes_its_two_products_side_by_side():
    """The input and weight gradients of a linear layer are one hand-off at two threads,
    the same numbers as one thread's."""
    before = disttorch.get_num_threads()
    rng = np.random.default_rng(3)
    x = disttorch.tensor(rng.standard_normal((256, 512), np.float32), requires_grad=True)
    layer = disttorch.nn.Linear(512, 384)
    out = layer(x)
    g = disttorch.tensor(rng.standard_normal(out.shape, np.float32))
    try:
        disttorch.set_num_threads(1)
        one = disttorch.autograd.grad(out, (x, layer.weight), g, retain_graph=True)
        got = []
        ran = _run_recorded(
            2, lambda: got.extend(disttorch.autograd.grad(out, (x, layer.weight), g, retain_graph=True))
        )
        assert len(ran) == 1
        assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(got, one))
    finally:
        disttorch.set_num_threads(before)


def test_nested_and_concurrent_ops_run_on_their_own_thread(split):
    disttorch.set_num_threads(2)
    inner = []

    def part(a, b):
        threads.parallel_for(4, lambda c, d: inner.append((c, d)), work=10)

    threads.parallel_for(2, part, work=10)
    assert sorted(inner) == [(0, 4), (0, 4)]  # each inner loop ran whole, unsplit


def test_an_error_in_any_part_is_raised_after_all_parts_finish(split):
    disttorch.set_num_threads(2)
    done = []

    def part(a, b):
        if a:
            raise ValueError("part two")
        done.append(a)

    with pytest.raises(ValueError, match="part two"):
        threads.parallel_for(2, part, work=10)
    assert done == [0]
    threads.parallel_for(2, lambda a, b: done.append(a), work=10)  # the pool still works
    assert sorted(done) == [0, 0, 1]


def test_errors_a_split_does_not_raise_are_not_raised_by_the_next_one(split):
    """The caller's own part (or its meanwhile work) failing first, or a second worker's part
    failing after the first's, leaves no error behind for the next split to raise."""
    disttorch.set_num_threads(3)

    def part(a, b):
        raise (ValueError if a == 0 else KeyError)(a)

    with pytest.raises(ValueError):
        threads.parallel_for(3, part, work=10)
    with pytest.raises(ZeroDivisionError):
        threads._budget.workers().run([(lambda a, b: None, 0, 1), (part, 1, 2)], meanwhile=lambda: 1 / 0)
    threads.parallel_for(3, lambda a, b: None, work=10)  # raises nothing


def test_numpy_error_state_reaches_the_parts(split):
    disttorch.set_num_threads(2)
    x = disttorch.zeros(64, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert disttorch.log(x).isinf().all()


# ---------------------------------------------------------------------- same numbers
def _grads(fn, *inputs):
    leaves = [t.clone().requires_grad_(True) for t in inputs]
    out = fn(*leaves)
    out.backward(disttorch.ones_like(out) * disttorch.arange(out.numel()).reshape(out.shape).sin())
    return [out.detach().numpy()] + [t.grad.numpy() for t in leaves]


_CLASSES = disttorch.arange(42).reshape(6, 7) % 5


def _losses(a, b, reduction: str):
    """Every common loss but the class-index ones, between ``a`` and ``b``, summed."""
    y, kl = b.sigmoid(), "batchmean" if reduction == "mean" else reduction
    return (
        F.mse_loss(a, b, reduction=reduction)
        + F.l1_loss(a, b, reduction=reduction)
        + F.smooth_l1_loss(a, b, reduction=reduction, beta=0.5)
        + F.huber_loss(a, b, reduction=reduction, delta=0.7)
        + F.binary_cross_entropy(a.sigmoid(), y, reduction=reduction)
        + F.binary_cross_entropy_with_logits(a, y, reduction=reduction, pos_weight=b[0, 0].detach().exp())
        + F.kl_div(a.log_softmax(-1), b.softmax(-1), reduction=kl)
        + F.kl_div(a.log_softmax(-1), b.log_softmax(-1), reduction=kl, log_target=True)
    )


_CASES = {
    "binary broadcast": (lambda a, b: a * b[0] - a / 3, [(6, 5, 7), (2, 5, 7)]),
    "unary": (lambda a: a.tanh().sigmoid().log1p(), [(9, 33)]),
    "relu": (lambda a: F.relu(a), [(9, 33)]),
    "softmax dim 0": (lambda a: F.softmax(a, dim=0), [(7, 5, 3)]),
    "log_softmax": (lambda a: F.log_softmax(a, dim=-1), [(7, 5, 3)]),
    "gelu": (lambda a: F.gelu(a.float()).double(), [(9, 33)]),
    "gelu tanh": (lambda a: F.gelu(a, approximate="tanh"), [(9, 33)]),
    "layer_norm": (lambda a: F.layer_norm(a, (5, 3)), [(7, 5, 3)]),
    "group_norm": (lambda a: F.group_norm(a, 2), [(7, 4, 3)]),
    "attention": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        [(3, 2, 5, 4)] * 3,
    ),
    "cross_entropy": (lambda a: F.cross_entropy(a, disttorch.tensor([1, 0, 4, 2, 2, 3, 0])), [(7, 5)]),
    "batched matmul": (lambda a, b: a @ b, [(6, 5, 7), (1, 7, 3)]),
    "linear": (lambda a, w: F.linear(a, w), [(6, 5, 7), (4, 7)]),
    "sum over dims": (lambda a: a.sum((0, 2)) + a.mean(-1).sum(0, keepdim=True), [(6, 5, 7)]),
    "max_pool": (lambda a: F.max_pool2d(a, 3, 2, 1), [(5, 3, 9, 9)]),
    "avg_pool": (lambda a: F.avg_pool3d(a, 2, 1), [(5, 2, 4, 4, 4)]),
    "conv shifted": (lambda a, w, b: F.conv2d(a, w, b, padding=1), [(5, 16, 6, 6), (4, 16, 3, 3), (4,)]),
    "conv strided groups": (
        lambda a, w, b: F.conv2d(a, w, b, stride=2, groups=2),
        [(5, 4, 9, 9), (6, 2, 3, 3), (6,)],
    ),
    "conv1d": (lambda a, w: F.conv1d(a, w, dilation=2), [(5, 3, 20), (4, 3, 3)]),
    "conv transposed": (lambda a, w: F.conv_transpose2d(a, w, stride=2), [(5, 4, 6, 6), (4, 3, 3, 3)]),
    "batch_norm": (lambda a, w, b: F.batch_norm(a, None, None, w, b, training=True), [(6, 5, 7), (5,), (5,)]),
    "batch_norm 2d": (lambda a: F.batch_norm(a, None, None, training=True), [(5, 3, 4, 4)]),
    "adaptive_avg_pool": (lambda a: F.adaptive_avg_pool2d(a, (3, 2)), [(5, 3, 7, 8)]),
    "adaptive_max_pool": (lambda a: F.adaptive_max_pool3d(a, (3, 2, 4)), [(5, 3, 7, 5, 9)]),
    "embedding": (lambda w: F.embedding(disttorch.tensor([[3, 1, 3, 0], [9, 3, 1, 1]]), w), [(10, 6)]),
    "max and min": (
        lambda a: a.amax((0, 2)) + a.amin(1).sum() + a.max(-1).values.min(0).values,
        [(6, 5, 7)],
    ),
    "whole max and min": (lambda a: a.max() - a.amin(), [(6, 5, 7)]),
    "prod": (lambda a: a.prod(1).sum() + a[:2].prod(), [(6, 5, 7)]),
    "var and std": (lambda a: a.var((0, 2)).sum() + a.std() + a.var(-1, correction=0).sum(), [(6, 5, 7)]),
    "norms": (lambda a: a.norm() + a.norm(p=1, dim=0).sum() + a.norm(p=3, dim=(0, 2)).sum(), [(6, 5, 7)]),
    "inf norms": (lambda a: a.norm(p=float("inf")) + a.norm(p=-float("inf"), dim=1).sum(), [(6, 5, 7)]),
    "logsumexp": (lambda a: a.logsumexp(1).sum() + a.logsumexp((0, 1, 2)), [(6, 5, 7)]),
    "cumsum": (lambda a: a.cumsum(0) + a.cumsum(-1) * a.cumsum(1), [(6, 5, 7)]),
    "cumprod": (lambda a: a.cumprod(1) + a.cumprod(0), [(6, 5, 7)]),
    "cumprod with zeros": (lambda a: (a * (a > -1)).cumprod(2), [(6, 5, 7)]),
    "cummax and cummin": (lambda a: a.cummax(1).values + a.cummin(-1).values, [(6, 5, 7)]),
    "logcumsumexp": (lambda a: a.logcumsumexp(0) + a.logcumsumexp(2), [(6, 5, 7)]),
    "sort and topk": (lambda a: a.sort(1).values + a.sort(0, descending=True).values, [(6, 5, 7)]),
    "more elementwise": (
        lambda a, b: (
            (a / b).abs().neg().clamp(-1, 0.5)
            + disttorch.where(a > b, a, b).sign() * a.square()
            + disttorch.maximum(a, b) * disttorch.minimum(a, b.flip(0))
        ),
        [(6, 5, 7), (6, 5, 7)],
    ),
    "activations": (
        lambda a: F.leaky_relu(a) + F.elu(a) + F.selu(a) + F.silu(a) + F.softplus(a, 2.0, 1.0) + F.mish(a),
        [(9, 33)],
    ),
    "losses per entry": (lambda a, b: _losses(a, b, "none"), [(6, 5, 7), (6, 5, 7)]),
    "losses reduced": (lambda a, b: _losses(a, b, "mean") + _losses(a, b, "sum"), [(6, 5, 7), (6, 5, 7)]),
    "class losses per entry": (
        lambda a: (
            F.cross_entropy(a, _CLASSES, reduction="none", label_smoothing=0.1)
            + F.cross_entropy(a, a.detach().flip(0).softmax(1), reduction="none", label_smoothing=0.2)
            + F.nll_loss(a.log_softmax(1), _CLASSES, reduction="none", weight=disttorch.arange(5.0).double())
        ),
        [(6, 5, 7)],
    ),
    "arg and truth reductions": (
        lambda a: (
            a * a.argmax(1, keepdim=True) + a.argmin(-1, keepdim=True) + (a > 0.5).any(0) + (a > -2).all()
        ),
        [(6, 5, 7)],
    ),
    "normalize": (lambda a: F.normalize(a, dim=1) + F.normalize(a, p=3.0, dim=-1), [(6, 5, 7)]),
    "glu": (lambda a: F.glu(a, 1).sum(1, keepdim=True) + F.glu(a, -1).sum(-1, keepdim=True), [(6, 4, 8)]),
    "medians": (lambda a: a.median(1).values + a.nanmedian(1).values + a.kthvalue(3, 1).values, [(6, 5, 7)]),
    "copies": (
        lambda a, b: (
            disttorch.cat([a.transpose(1, 2).reshape(6, -1), b.permute(0, 2, 1).contiguous().flatten(1)], 1)
            + disttorch.cat([a.clone(), b], 2).sum(2).repeat(1, 14)
        ),
        [(6, 5, 7), (6, 5, 7)],
    ),
    "pad": (lambda a: F.pad(a, (2, 1, -1, 0), value=-3.0) * F.pad(a, (1, 2, 0, -1, 0, 0)), [(6, 5, 7)]),
    "index pads": (
        lambda a: (
            F.pad(a, (2, 1, 1, 3), mode="reflect") * F.pad(a, (1, 2, 4, 0), mode="circular")
            + F.pad(a, (3, 0, 2, 2), mode="replicate")
        ),
        [(3, 2, 5, 7)],
    ),
    "interpolation": (
        lambda a: (
            F.interpolate(a, scale_factor=(1.5, 0.7), mode="bilinear")
            + F.interpolate(a, size=(7, 4), mode="bicubic", align_corners=True)
            + F.interpolate(a, size=(7, 4), mode="nearest-exact")
        ),
        [(3, 2, 5, 6)],
    ),
}


_REDUCTIONS = {
    "losses reduced",
    "normalize",  # a norm per row
    "glu",  # its sums
    "layer_norm",
    "group_norm",
    "sum over dims",
    "batch_norm",
    "batch_norm 2d",
    "max and min",  # its backward sums gradients
    "prod",
    "var and std",
    "norms",
    "inf norms",
    "logsumexp",
}


@pytest.mark.parametrize("case", list(_CASES))
def test_results_are_the_same_for_every_thread_count(split, case):
    fn, shapes = _CASES[case]
    gen = disttorch.Generator().manual_seed(0)
    inputs = [disttorch.randn(*s, generator=gen, dtype=disttorch.float64) for s in shapes]
    runs = {}
    for n in (1, 2, 3):
        disttorch.set_num_threads(n)
        runs[n] = _grads(fn, *inputs)
    again = _grads(fn, *inputs)  # deterministic for a thread count
    assert all(np.array_equal(a, b) for a, b in zip(again, runs[3])), f"{case} differs between runs"
    for n in (2, 3):
        for i, (got, want) in enumerate(zip(runs[n], runs[1])):
            if case in _REDUCTIONS or (case.startswith("conv") and i >= 2):
                np.testing.assert_allclose(
                    got, want, rtol=1e-12
                )  # norms; weight and bias grads sum over images
            else:
                assert np.array_equal(got, want), f"{case}: output {i} differs with {n} threads"


@pytest.mark.parametrize(
    "drop",
    [
        lambda x: F.dropout(x, 0.3),
        lambda x: F.dropout3d(x, 0.5),
        lambda x: F.alpha_dropout(x, 0.2, training=True),
        lambda x: F.feature_alpha_dropout(x, 0.2, training=True),
        lambda x: F.scaled_dot_product_attention(x, x, x, dropout_p=0.4),
    ],
    ids=["dropout", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "attention"],
)
def test_dropout_draws_the_same_mask_and_numbers_for_every_thread_count(split, drop):
    x = disttorch.randn(6, 5, 4, 3, 7, dtype=disttorch.float64)
    runs = {}
    for n in (1, 2, 3):
        disttorch.set_num_threads(n)
        disttorch.manual_seed(0)
        runs[n] = _grads(drop, x) + [disttorch.rand(5).numpy()]  # the stream goes on alike
    for n in (2, 3):
        assert all(np.array_equal(a, b) for a, b in zip(runs[n], runs[1])), f"{n} threads differ"


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("SGD", {"momentum": 0.9, "weight_decay": 0.01}),
        ("SGD", {"momentum": 0.9, "nesterov": True}),
        ("Adam", {}),
        ("Adam", {"amsgrad": True, "weight_decay": 0.1}),
        ("AdamW", {}),
        ("RMSprop", {}),
        ("Adagrad", {}),
        ("NAdam", {}),
    ],
)
def test_optimizer_updates_split_over_parameters_with_the_same_numbers(split, monkeypatch, name, kwargs):
    from disttorch.optim import optimizer

    cuts = []
    real = optimizer._pieces
    monkeypatch.setattr(optimizer, "_pieces", lambda *a: cuts.append(real(*a)) or cuts[-1])
    results = {}
    for n in (1, 3):
        disttorch.set_num_threads(n)
        disttorch.manual_seed(0)
        params = [disttorch.randn(60, 7, requires_grad=True)] + [
            disttorch.randn(5, 4, requires_grad=True) for _ in range(4)
        ]
        opt = getattr(disttorch.optim, name)(params, lr=0.1, **kwargs)
        for _ in range(3):
            sum((p * p * p).sum() for p in params).backward()
            opt.step()
            opt.zero_grad()
        results[n] = [p.detach().numpy().copy() for p in params]
    assert all(np.array_equal(a, b) for a, b in zip(results[1], results[3]))
    # element-wise updates cut the large parameter once its state exists (after the first step)
    cut = name in ("SGD", "Adam", "AdamW")
    assert [len(p) for p in cuts] == [5, 5, 5, 5, 5 + 2 * cut, 5 + 2 * cut]


def test_a_parameter_updated_in_pieces_counts_its_step_once():
    before = disttorch.get_num_threads()
    try:
        disttorch.set_num_threads(2)
        big = disttorch.zeros(1 << 19, requires_grad=True)
        opt = disttorch.optim.Adam([big, disttorch.zeros(3, requires_grad=True)], lr=0.1)
        for _ in range(3):
            for p in opt.param_groups[0]["params"]:
                p.grad = disttorch.ones_like(p)
            opt.step()
        assert float(opt.state[big]["step"]) == 3.0
        assert np.allclose(big.detach().numpy(), -0.3, atol=1e-6)
    finally:
        disttorch.set_num_threads(before)


def test_an_optimizer_step_runs_on_several_threads_only_when_allowed(split):
    params = [disttorch.randn(64, requires_grad=True) for _ in range(6)]
    opt = disttorch.optim.SGD(params, lr=0.1)
    for p in params:
        p.grad = disttorch.ones_like(p)
    assert len(_run_recorded(3, opt.step)) == 2 and _run_recorded(1, opt.step) == []


def test_an_optimizer_step_too_small_for_two_threads_neither_splits_nor_cuts(monkeypatch):
    """With the compiled momentum step an MLP's parameters (535k elements in six) update on
    one thread, uncut (without numba its four passes split); 900k elements (once the state
    exists) split, one parameter cut in two. (Adam, the GPT's 30 parameters: see below.)"""
    from disttorch.optim import optimizer

    cuts = []
    real = optimizer._pieces
    monkeypatch.setattr(optimizer, "_pieces", lambda *a: cuts.append(real(*a)) or cuts[-1])
    before = disttorch.get_num_threads()
    try:
        for shapes in ([(512, 784), (512,), (256, 512), (256,), (10, 256), (10,)], [(900_000,)]):
            params = [disttorch.zeros(*s, requires_grad=True) for s in shapes]
            for p in params:
                p.grad = disttorch.ones_like(p)
            opt = disttorch.optim.SGD(params, lr=0.1, momentum=0.9)
            opt.step()  # (makes the state: a parameter is cut only once it has its state)
            work = opt._update_units * sum(p.numel() for p in params)
            splits = (
                work - optimizer.PYTHON_UNITS_PER_PARAMETER * len(params) >= 2 * threads.MIN_PART_ELEMENTS
            )
            assert splits == (len(shapes) == 1 or opt._update_units == 4)
            assert len(_run_recorded(2, opt.step)) == splits
            assert len(cuts[-1]) == len(shapes) + splits
    finally:
        disttorch.set_num_threads(before)


def test_a_step_over_many_small_parameters_stays_on_one_thread():
    """Adam over the GPT's 30 parameters (430k elements) does not split: their Python, which
    two threads run in turns, would outweigh the halved arithmetic; six of 89k do."""
    before = disttorch.get_num_threads()
    try:
        for count, size, handed in ((30, 14_336, 0), (6, 89_000, 1)):
            params = [disttorch.zeros(size, requires_grad=True) for _ in range(count)]
            for p in params:
                p.grad = disttorch.ones_like(p)
            opt = disttorch.optim.Adam(params, lr=0.1)
            opt.step()
            assert len(_run_recorded(2, opt.step)) == handed
    finally:
        disttorch.set_num_threads(before)


def test_work_meanwhile_runs_once_on_the_calling_thread_while_the_products_run(split):
    """``matmuls(..., meanwhile=)``: once, on the caller, whether the products split (then
    before the workers' shares are waited for), run whole or fall back to Python parts; an
    error in it comes after every product finished."""
    rng = np.random.default_rng(4)
    g, w, x = (rng.standard_normal(s, np.float32) for s in ((64, 32), (32, 48), (64, 48)))
    products = [(g, w), (g.T, x)]
    before = disttorch.get_num_threads()
    try:
        for n, compiled_parts in ((1, True), (2, True), (3, True), (2, False)):
            seen = []
            disttorch.set_num_threads(n)
            if not compiled_parts:  # the Python parts' path
                threads._budget.gemm, gemm = None, threads._budget.gemm
            try:
                got = threads.matmuls(products, meanwhile=lambda: seen.append(threading.current_thread()))
            finally:
                if not compiled_parts:
                    threads._budget.gemm = gemm
            assert seen == [threading.current_thread()]
            np.testing.assert_allclose(got[0], g @ w, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(got[1], g.T @ x, rtol=1e-5, atol=1e-5)
        disttorch.set_num_threads(2)
        outs = [np.zeros((64, 48), np.float32), np.zeros((32, 48), np.float32)]
        with pytest.raises(ZeroDivisionError):
            threads.matmuls(products, outs, meanwhile=lambda: 1 / 0)
        assert np.array_equal(outs[1], g.T @ x) and np.array_equal(outs[0], g @ w)  # both finished
    finally:
        disttorch.set_num_threads(before)


def test_collate_stacks_on_several_threads_with_the_same_batch(split):
    from disttorch.utils.data import default_collate

    samples = [disttorch.randn(3, 4) for _ in range(8)]
    several = _run_recorded(4, lambda: default_collate(samples))
    assert len(several) == 3
    assert np.array_equal(default_collate(samples).numpy(), np.stack([s.numpy() for s in samples]))
    with pytest.raises(ValueError, match="same shape"):
        default_collate([np.zeros(3), np.zeros(1)])


@pytest.mark.parametrize("dtype", [disttorch.float32, disttorch.float64, disttorch.int32, disttorch.bool])
def test_a_whole_sum_is_deterministic_per_thread_count_and_close_across(split, dtype):
    x = (disttorch.randn(1000, 37) * 100).to(dtype)
    disttorch.set_num_threads(1)
    one = x.sum().item()
    disttorch.set_num_threads(3)
    runs = {x.sum().item() for _ in range(3)}
    assert len(runs) == 1 and runs.pop() == pytest.approx(one, rel=1e-5)
    assert x.sum(dtype=disttorch.float64).dtype == disttorch.float64
    assert x.float().mean().item() == pytest.approx(x.double().mean().item(), rel=1e-5)
    assert x.sum((0, 1), keepdim=True).shape == (1, 1)


# ---------------------------------------------------------------------- fork
@pytest.mark.timeout(90)
def test_a_forked_child_makes_its_own_pool():
    code = (
        "import os, disttorch\n"
        "from disttorch.kernels import threads\n"
        "threads.MIN_PART_ELEMENTS = 1\n"
        "disttorch.set_num_threads(2)\n"
        "x = disttorch.randn(64, 64)\n"
        "y = x * 2\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0 if bool(((x * 2) == y).all()) else 3)\n"
        "print(os.waitpid(pid, 0)[1])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=80)
    assert out.stdout.strip() == "0", out.stderr


def test_an_optimizer_deals_its_parameters_into_shares_of_about_equal_size():
    from disttorch.optim.optimizer import _shares

    assert _shares([400, 1, 131, 1, 2, 1], 2) == [[0], [2, 4, 1, 3, 5]]
    assert _shares([5, 5, 5], 4) == [[0], [1], [2]] and _shares([], 2) == [[]]


def test_a_large_decomposition_gives_blas_the_budget_while_it_runs_and_a_small_one_does_not():
    before = disttorch.get_num_threads()
    seen = []

    def spy(a):
        seen.append(_blas_threads())
        return np.linalg.svd(a, compute_uv=False)

    try:
        disttorch.set_num_threads(2)
        big, small = np.eye(400), np.eye(8)
        np.testing.assert_allclose(threads.lapack(spy, big), np.ones(400))
        threads.lapack(spy, small)
        threads.parallel_for(2, lambda i, j: threads.lapack(spy, big), work=1 << 30)  # inside a split op
        assert seen == [{2}, {1}, {1}, {1}] and _blas_threads() == {1}
        s = disttorch.linalg.svdvals(disttorch.tensor(big))
        assert np.allclose(s.numpy(), 1.0) and _blas_threads() == {1}
    finally:
        disttorch.set_num_threads(before)


@pytest.mark.parametrize(
    "other,dim,message",
    [
        ((4, 1, 6), 0, "Sizes of tensors must match except in dimension 0. Expected size 5 but got size 1"),
        ((4, 5, 1), 1, "Sizes of tensors must match except in dimension 1. Expected size 6 but got size 1"),
        ((4, 5), 2, "Tensors must have same number of dimensions: got 3 and 2"),
        ((4, 5, 6, 1), 1, "Tensors must have same number of dimensions: got 3 and 4"),
    ],
    ids=["broadcastable size", "broadcastable last dim", "fewer dims", "more dims"],
)
@pytest.mark.parametrize("n", [1, 2])
def test_cat_of_mismatched_shapes_raises_pytorchs_error_split_or_not(split, other, dim, message, n):
    """A size of 1 would broadcast into its slot of a split copy: the split checks the shapes
    first and lets NumPy's error (worded as PyTorch's) through, on any thread count."""
    disttorch.set_num_threads(n)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        disttorch.cat([disttorch.randn(4, 5, 6), disttorch.randn(*other)], dim)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_the_cuts_the_blas_allows_keep_the_whole_products_bits(dtype):
    """product_cuts asks the running BLAS where a cut keeps the bits: rows at multiples of a
    grain (12 with OpenBLAS's Haswell kernels on an AMD EPYC, 1 with its Intel kernels),
    columns only where any cut did; every place cut_bounds picks keeps them."""
    from disttorch.kernels.product_cuts import CutRule, cut_bounds, cut_rule

    rule = cut_rule(np.dtype(dtype))
    rng = np.random.default_rng(1)
    for m, k, n in ((1100, 96, 260), (260, 96, 1100), (2000, 40, 128)):  # (parts of 2M-14M multiply-adds)
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        whole = a @ b
        for parts in (2, 3, 5):
            cut = cut_bounds(m, n, parts, rule, 16)
            if cut is None:
                continue
            axis, bounds = cut
            assert bounds[0] == 0 and all(x < y for x, y in zip(bounds, bounds[1:]))
            if axis == "rows":
                assert bounds[-1] == m and all(x % rule.row_grain == 0 for x in bounds[:-1])
                got = np.concatenate([a[i:j] @ b for i, j in zip(bounds, bounds[1:])])
            else:
                assert rule.columns and bounds[-1] == n
                got = np.concatenate([a @ b[:, i:j] for i, j in zip(bounds, bounds[1:])], axis=1)
            assert np.array_equal(got, whole), (m, k, n, cut)
    # a rule that allows neither cuts nothing; one of rows at steps of 12 never cuts elsewhere
    assert cut_bounds(500, 500, 4, CutRule(0, False), 16) is None
    assert cut_bounds(100, 500, 4, CutRule(12, False), 16) == ("rows", [0, 24, 48, 72, 100])
