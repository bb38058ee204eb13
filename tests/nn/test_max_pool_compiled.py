"""The compiled stages of max pooling (kernels/max_pool_loops.py) give the NumPy form's
numbers bit for bit: values, indices, input gradient and forward-mode tangent, for 1-3
spatial dims, overlapping and disjoint windows, dilation, padding, ceil_mode, ties,
signed zeros, infinities and NaN, float32 and float64, on one and on two threads; and
they really run (the NumPy form is not called)."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch
import disttorch.nn.functional as F
from disttorch.kernels import max_pool, threads
from disttorch.kernels.jit import compiled

pytestmark = pytest.mark.timeout(120)

CASES = {
    "2d pairs": (F.max_pool2d, (6, 3, 8, 10), dict(kernel_size=2)),
    "2d pairs, odd size": (F.max_pool2d, (4, 2, 9, 7), dict(kernel_size=2)),
    "2d overlapping, padded": (F.max_pool2d, (4, 3, 9, 9), dict(kernel_size=3, stride=2, padding=1)),
    "2d dilated, ceil_mode": (
        F.max_pool2d,
        (3, 2, 11, 10),
        dict(kernel_size=(2, 3), dilation=2, ceil_mode=True),
    ),
    "2d disjoint gaps": (F.max_pool2d, (3, 2, 12, 12), dict(kernel_size=3, stride=4)),
    "1d": (F.max_pool1d, (5, 4, 17), dict(kernel_size=3, stride=1)),
    "3d": (F.max_pool3d, (2, 3, 6, 5, 8), dict(kernel_size=2, stride=(1, 2, 2))),
    "unbatched": (F.max_pool2d, (3, 8, 8), dict(kernel_size=2)),
}


@pytest.fixture(scope="module", autouse=True)
def compiled_loops():
    if compiled(max_pool._load_loops) is None:
        pytest.skip("no numba: no compiled form")


def _input(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Small integers (many ties), signed zeros, infinities and a few NaN."""
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, shape).astype(dtype)
    x[x == 0] = np.where(rng.random(int((x == 0).sum())) < 0.5, -0.0, 0.0)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=max(3, flat.size // 30), replace=False)
    flat[picks[0::3]] = np.inf
    flat[picks[1::3]] = -np.inf
    flat[picks[2::3]] = np.nan
    return x


def _run(case: str, dtype: np.dtype) -> list:
    pool, shape, kwargs = CASES[case]
    x = disttorch.tensor(_input(shape, dtype), requires_grad=True)
    y, index = pool(x, return_indices=True, **kwargs)
    g = np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(dtype)
    g.reshape(-1)[::7] = -0.0
    y.backward(disttorch.tensor(g))
    with disttorch.autograd.forward_ad.dual_level():
        tangent = disttorch.tensor(np.random.default_rng(2).standard_normal(shape).astype(dtype))
        dual = pool(disttorch.autograd.forward_ad.make_dual(x.detach(), tangent), **kwargs)
        jvp = disttorch.autograd.forward_ad.unpack_dual(dual).tangent
    return [y.detach().numpy(), index.numpy(), x.grad.numpy(), jvp.numpy()]


def _counted(calls: dict, name: str, loop):
    def run(*args):
        calls[name] += 1
        return loop(*args)

    return run


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(CASES))
def test_compiled_stages_give_the_numpy_forms_bits(monkeypatch, case, dtype, n_threads):
    monkeypatch.setattr(threads, "MIN_PART_ELEMENTS", 1)  # two threads split the images
    calls = {"max_stage": 0, "scatter_winners": 0}
    loops = max_pool._load_loops()
    for name in calls:
        monkeypatch.setattr(loops, name, _counted(calls, name, getattr(loops, name)))
    before = disttorch.get_num_threads()
    disttorch.set_num_threads(n_threads)
    try:
        fast = _run(case, dtype)
        monkeypatch.setenv("DISTTORCH_JIT", "0")
        plain = _run(case, dtype)
    finally:
        disttorch.set_num_threads(before)
    for got, expected in zip(fast, plain):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.tobytes() == expected.tobytes()  # NaN and -0.0 included
    spatial = len(CASES[case][1]) - (1 if case == "unbatched" else 2)
    assert calls["max_stage"] >= 2 * spatial and calls["scatter_winners"] >= spatial  # forward twice


def test_a_layout_the_loops_do_not_take_runs_the_numpy_form(monkeypatch):
    """A channels-last input (not C-ordered) and float16 stay with the NumPy form."""
    calls = {"max_stage": 0}
    loops = max_pool._load_loops()
    monkeypatch.setattr(loops, "max_stage", _counted(calls, "max_stage", loops.max_stage))
    x = disttorch.randn(2, 3, 6, 6).to(memory_format=disttorch.channels_last)
    F.max_pool2d(x, 2)
    F.max_pool2d(disttorch.randn(2, 3, 6, 6, dtype=disttorch.float16), 2)
    assert calls["max_stage"] == 0
