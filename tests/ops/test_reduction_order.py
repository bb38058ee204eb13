"""Sums, means and variances over some dims, and whole sums of strided tensors, in PyTorch's
CPU order (``kernels/torch_sum.py``, ``kernels/torch_var.py``): bit for bit against PyTorch
when it is installed, per thread count; without numba, NumPy's order (close, not equal)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck
from disttorch.kernels.jit import compiled
from disttorch.kernels.torch_sum import _load_loops

# shape, dims, layout: each of the 2-D loop's branches (a contiguous reduced dim in vectors,
# contiguous kept columns in blocks of 32/8/1, strided rows and columns), reduced dims that
# do not merge, a reduced dim outside the 2-D loop, transposed and sliced inputs
CASES = [
    ((64, 768), (-1,), ""),
    ((3, 5000), (1,), ""),
    ((16, 12, 7, 7), (0, 2, 3), ""),
    ((1024, 10), (0,), ""),
    ((70, 100), (0,), ""),
    ((6, 8, 16), (0, 2), ""),
    ((5, 3, 4, 6, 2), (0, 2, 4), ""),
    ((9, 5, 11, 3), (1, 3), ""),
    ((40, 30), (1,), "t"),
    ((40, 30), (0,), "t"),
    ((50, 60), (0,), "slice"),
    ((50, 60), (1,), "slice"),
    ((4, 6, 5), (0, 1), "permute"),
]
# with 3 threads from 32768 elements: PyTorch cuts the kept columns per thread
THREADED = [
    ((3000, 70), (0,), "slice"),
    ((3000, 40), (0,), ""),
    ((200, 300), (0,), ""),
    ((64, 768), (1,), ""),
]


def _layout(a, layout):
    if layout == "t":
        return a.t()
    if layout == "slice":
        return a[:, ::2]
    if layout == "permute":
        return a.permute(2, 0, 1)
    return a


@pytest.fixture
def threads(torch):
    """Sets both libraries' thread counts; restores them after. Skips without the compiled
    loops (numba), whose NumPy fallback keeps NumPy's order."""
    if compiled(_load_loops) is None:
        pytest.skip("PyTorch's order over dims needs numba (the 'fast' extra)")
    before = (dt.get_num_threads(), torch.get_num_threads())

    def both(n):
        dt.set_num_threads(n)
        torch.set_num_threads(n)

    yield both
    dt.set_num_threads(before[0])
    torch.set_num_threads(before[1])


def _pairs(torch, cases, dtypes=(np.float32, np.float64)):
    rng = np.random.default_rng(11)
    for shape, dims, layout in cases:
        for dtype in dtypes:
            a = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
            yield (
                _layout(dt.from_numpy(a), layout),
                _layout(torch.from_numpy(a), layout),
                dims,
                (shape, layout, dtype),
            )


def test_sums_and_means_over_dims_have_pytorchs_bits(torch, threads):
    for n, cases in ((1, CASES), (3, THREADED)):
        threads(n)
        for d, t, dims, case in _pairs(torch, cases):
            for op in ("sum", "mean"):
                got, want = getattr(d, op)(dims).numpy(), getattr(t, op)(dims).numpy()
                np.testing.assert_array_equal(got, want, err_msg=f"{op} {case} {dims} threads={n}")
            kept = d.sum(dims, keepdim=True)
            assert kept.shape == tuple(t.sum(dims, keepdim=True).shape)


def test_16_bit_sums_and_means_over_dims_have_pytorchs_bits(torch, threads):
    """float16/bfloat16 accumulate in float32 (in its order) and round once, as PyTorch's."""
    threads(1)
    rng = np.random.default_rng(15)
    for shape, dims in (((64, 768), (-1,)), ((2000, 64), (0,)), ((16, 12, 7, 7), (0, 2, 3))):
        a = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
        for low in ("float16", "bfloat16"):
            d, t = dt.from_numpy(a).to(getattr(dt, low)), torch.from_numpy(a).to(getattr(torch, low))
            for op in ("sum", "mean"):
                got, want = getattr(d, op)(dims).float().numpy(), getattr(t, op)(dims).float().numpy()
                np.testing.assert_array_equal(got, want, err_msg=f"{op} {low} {shape} {dims}")


def test_var_std_and_var_mean_over_dims_have_pytorchs_bits(torch, threads):
    """PyTorch's Welford kernel (float64, the elements in its iterator's order), and the mean
    ``var_mean`` returns from it."""
    threads(2)
    for d, t, dims, case in _pairs(torch, CASES):
        for correction in (0, 1):
            for op in ("var", "std"):
                got, want = (
                    getattr(d, op)(dims, correction=correction),
                    getattr(t, op)(dims, correction=correction),
                )
                np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=f"{op} {case} {dims}")
        for fn in ("var_mean", "std_mean"):
            got, want = getattr(dt, fn)(d, dims), getattr(torch, fn)(t, dims)
            np.testing.assert_array_equal(got[0].numpy(), want[0].numpy(), err_msg=f"{fn} {case}")
            np.testing.assert_array_equal(got[1].numpy(), want[1].numpy(), err_msg=f"{fn} mean {case}")


def test_var_mean_to_one_element_is_welfords(torch, threads):
    """var_mean/std_mean reducing to one element take the Welford kernel for both results (var's
    own one-element path differs); past 32768 elements with threads, one piece per thread
    merged in order."""
    rng = np.random.default_rng(16)
    for n, shape, dims in (
        (1, (5, 33), None),
        (1, (5, 1, 33), (0, 2)),
        (3, (100003,), 0),
        (2, (1, 70000), 1),
    ):
        threads(n)
        for dtype in (np.float32, np.float64):
            a = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
            for fn in ("var_mean", "std_mean"):
                got, want = (
                    getattr(dt, fn)(dt.from_numpy(a), dims),
                    getattr(torch, fn)(torch.from_numpy(a), dims),
                )
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(
                        g.numpy(), w.numpy(), err_msg=f"{fn} {shape} {dtype} threads={n}"
                    )


def test_whole_reductions_of_strided_tensors_have_pytorchs_bits(torch, threads):
    """A permuted tensor in memory order, a sliced one by its iterator's 2-D blocks."""
    threads(1)
    rng = np.random.default_rng(12)
    for shape, layout in (((33, 3, 8), "permute"), ((40, 30), "slice"), ((9, 40), "t")):
        for dtype in (np.float32, np.float64):
            a = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
            d, t = _layout(dt.from_numpy(a), layout), _layout(torch.from_numpy(a), layout)
            for op in ("sum", "mean", "var", "std"):
                assert getattr(d, op)().item() == getattr(t, op)().item(), (op, shape, layout, dtype)


def test_without_numba_sums_over_dims_keep_numpys_order(monkeypatch):
    rng = np.random.default_rng(13)
    a = rng.standard_normal((30, 8, 20)).astype(np.float32)
    compiled = [dt.from_numpy(a).sum((0, 2)).numpy(), dt.from_numpy(a).var(-1).numpy()]
    monkeypatch.setenv("DISTTORCH_JIT", "0")
    plain = [dt.from_numpy(a).sum((0, 2)).numpy(), dt.from_numpy(a).var(-1).numpy()]
    np.testing.assert_array_equal(plain[0], np.add.reduce(a, (0, 2)))
    for got, want in zip(compiled, plain):
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_var_mean_gradients_float64():
    x = dt.tensor(np.random.default_rng(14).standard_normal((4, 3, 5)), requires_grad=True)
    for dims in ((0, 2), -1, None):
        assert gradcheck(lambda t, dims=dims: dt.var_mean(t, dims)[0] + dt.var_mean(t, dims)[1], (x,))
        assert gradcheck(lambda t, dims=dims: dt.std_mean(t, dims, keepdim=True)[1] * 2, (x,))
