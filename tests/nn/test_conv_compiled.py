"""The compiled block loops of the shifted convolution (kernels/conv_products.py: the
padding of a block's images, its products and sums, the crop of its outputs with the bias,
and the output gradient's spread onto the computed grid) give the NumPy form's numbers bit
for bit: output, input gradient, weight and bias gradients, for 1-3 spatial dims, groups,
dilation, padding, several blocks of images, float32 and float64, on one and on two
threads; and they really run (the NumPy form is not called)."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch
import disttorch.nn.functional as F
from disttorch.kernels import conv_shifted, threads
from disttorch.kernels.jit import compiled

pytestmark = pytest.mark.timeout(120)

CASES = {
    "2d": ((5, 16, 9, 9), (24, 16, 3, 3), dict(padding=1)),
    "1d dilated": ((3, 16, 20), (8, 16, 3), dict(padding=2, dilation=2)),
    "3d": ((2, 16, 5, 4, 6), (4, 16, 3, 2, 3), dict(padding=(1, 0, 1))),
    "groups": ((4, 32, 7, 7), (8, 16, 3, 3), dict(padding=1, groups=2)),
    "many blocks": ((70, 16, 6, 6), (20, 16, 3, 3), dict()),
    "one output channel": ((3, 16, 6, 6), (1, 16, 3, 3), dict(padding=1)),  # NumPy's gemv: not compiled
}


@pytest.fixture(scope="module", autouse=True)
def compiled_loops():
    if threads.blas_gemm(np.float32) is None or compiled(conv_shifted._load_products) is None:
        pytest.skip("no numba, or no 64-bit-index CBLAS in NumPy's BLAS: no compiled form")


def _run(case: str, dtype: np.dtype) -> list:
    xs, ws, kwargs = CASES[case]
    rng = np.random.default_rng(0)
    conv = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[len(xs)]
    x = disttorch.tensor(rng.standard_normal(xs).astype(dtype), requires_grad=True)
    w = disttorch.tensor(rng.standard_normal(ws).astype(dtype), requires_grad=True)
    b = disttorch.tensor(rng.standard_normal(ws[0]).astype(dtype), requires_grad=True)
    y = conv(x, w, b, **kwargs)
    y.backward(disttorch.tensor(rng.standard_normal(tuple(y.shape)).astype(dtype)))
    return [y.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()]


def _counted(calls: dict, name: str, loop):
    def run(*args):
        calls[name] += 1
        return loop(*args)

    return run


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(CASES))
def test_compiled_blocks_give_the_numpy_forms_bits(monkeypatch, case, dtype, n_threads):
    monkeypatch.setattr(threads, "MIN_PART_ELEMENTS", 1)  # two threads split the images
    if case == "many blocks":
        monkeypatch.setattr(conv_shifted, "BLOCK_BYTES", 4096)  # a few images a block
    calls = dict.fromkeys(("forward", "weight", "pad_planes", "crop_planes", "spread_planes"), 0)
    loops = conv_shifted._load_products()
    for name in calls:
        monkeypatch.setattr(loops, name, _counted(calls, name, getattr(loops, name)))
    before = disttorch.get_num_threads()
    disttorch.set_num_threads(n_threads)
    try:
        compiled = _run(case, dtype)
        monkeypatch.setenv("DISTTORCH_JIT", "0")
        plain = _run(case, dtype)
    finally:
        disttorch.set_num_threads(before)
    for got, expected in zip(compiled, plain):
        assert got.dtype == expected.dtype and np.array_equal(got, expected)
    if case == "one output channel":
        assert not any(calls.values())
    else:  # (the input gradient is a shifted convolution too when there are 16 output channels)
        assert all(count >= 1 for count in calls.values())
