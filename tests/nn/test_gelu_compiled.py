"""Exact GELU's compiled block loops (kernels/gelu_blocks.py) give the NumPy form's bits:
values and derivatives, for ordinary numbers, tiny and huge ones, zeros of both signs,
infinities and NaNs, on one thread and split over two; and they really run. (A NaN's
payload is not compared: NumPy's own passes keep the input's in their vector loops and drop
it in their tails.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import disttorch
import disttorch.nn.functional as F
from disttorch.kernels import gelu, threads
from disttorch.kernels.jit import compiled

pytestmark = pytest.mark.timeout(120)

_SPECIAL = np.array(
    [
        0x7FC00001,
        0xFFC00002,
        0x7F800000,
        0xFF800000,
        0x80000000,
        0x00000000,
        0x00000001,
        0x80000001,
        0x7F7FFFFF,
    ],
    dtype=np.uint32,
).view(np.float32)


@pytest.fixture(scope="module", autouse=True)
def compiled_loops():
    if compiled(gelu._load_blocks) is None:
        pytest.skip("numba is not installed: no compiled form")


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(0)
    parts = [rng.standard_normal(150_000) * scale for scale in (1e-3, 1.0, 4.0, 40.0, 1e3)]
    return np.concatenate(parts + [_SPECIAL]).astype(np.float32)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("derivative", [False, True])
def test_compiled_blocks_give_the_numpy_forms_bits(monkeypatch, n_threads, derivative):
    monkeypatch.setattr(threads, "MIN_PART_ELEMENTS", 1)
    calls = []
    loops = gelu._load_blocks()
    original = loops.after_exp
    monkeypatch.setattr(loops, "after_exp", lambda *args: calls.append(1) or original(*args))
    x = _inputs()
    before = threads.get_num_threads()
    threads.set_num_threads(n_threads)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the NumPy form warns of its overflows
            fast = gelu.gelu_with_derivative(x, derivative)
            monkeypatch.setenv("DISTTORCH_JIT", "0")
            plain = gelu.gelu_with_derivative(x, derivative)
    finally:
        threads.set_num_threads(before)
    assert len(calls) == -(-x.size // gelu._BLOCK)
    for got, expected in zip(fast, plain):
        if expected is not None:
            _assert_same_bits(got, expected)


def test_the_op_and_its_gradient_through_the_compiled_blocks(monkeypatch):
    """F.gelu forward and backward: the same bits with and without the compiled loops."""
    data = _inputs()[:300_000]
    results = []
    for jit in ("1", "0"):
        monkeypatch.setenv("DISTTORCH_JIT", jit)
        x = disttorch.tensor(data, requires_grad=True)
        y = F.gelu(x)
        y.backward(disttorch.ones_like(y))
        results.append((y.detach().numpy(), x.grad.numpy()))
    for got, expected in zip(*results):
        _assert_same_bits(got, expected)


def _assert_same_bits(got: np.ndarray, expected: np.ndarray) -> None:
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), expected[~nan].view(np.uint32))
