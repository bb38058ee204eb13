"""Ops added together: softmax/log_softmax at the top level and as methods, cumprod (with
zeros), logaddexp, hypot, trace, tensordot, diff, median, nan_to_num, meshgrid and the
top-level numel/detach/is_floating_point. Values against NumPy or closed forms, float64
gradient checks, PyTorch's error messages, and parity with PyTorch when it is installed."""
import math

import numpy as np
import pytest

import disttorch as torch
from disttorch.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.timeout(60)

RNG = np.random.default_rng(7)


def leaf(arr):
    return torch.tensor(np.asarray(arr, dtype=np.float64), requires_grad=True)


def np_of(t):
    return t.detach().numpy()


# ---------------------------------------------------------------------- softmax, log_softmax
def _np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_values_top_level_and_method(dim):
    x = RNG.normal(size=(3, 4)) * 10
    t = torch.tensor(x)
    ref = _np_softmax(x, dim)
    for out in (torch.softmax(t, dim), t.softmax(dim), t.softmax(dim=dim)):
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    for out in (torch.log_softmax(t, dim), t.log_softmax(dim)):
        np.testing.assert_allclose(out.numpy(), np.log(ref), rtol=1e-12, atol=1e-12)


def test_softmax_reuses_the_nn_functional_implementation():
    x = leaf(RNG.normal(size=(2, 3)))
    assert torch.softmax(x, 1).grad_fn.name() == "SoftmaxBackward0"
    assert x.log_softmax(1).grad_fn.name() == "LogSoftmaxBackward0"
    import disttorch.nn.functional as F
    np.testing.assert_array_equal(np_of(torch.softmax(x, 0)), np_of(F.softmax(x, 0)))


def test_softmax_stable_for_large_inputs_and_0_dim():
    t = torch.tensor([1000.0, 1000.0, -1000.0])
    np.testing.assert_allclose(torch.softmax(t, 0).numpy(), [0.5, 0.5, 0.0])
    assert np.isfinite(torch.log_softmax(t, 0).numpy()).all()
    assert torch.softmax(torch.tensor(2.0), 0).item() == 1.0


def test_softmax_dtype_argument():
    t = torch.tensor([[1, 2, 3]])
    assert torch.softmax(t, 1, torch.float64).dtype == torch.float64
    assert torch.softmax(t, -1, dtype=torch.float32).dtype == torch.float32
    assert t.log_softmax(1, torch.float64).dtype == torch.float64
    assert torch.softmax(torch.ones(2, 3), -1).dtype == torch.float32


def test_softmax_errors():
    t = torch.ones(2, 3)
    with pytest.raises(TypeError):
        torch.softmax(t)  # dim is required at the top level, as in PyTorch
    with pytest.raises(TypeError, match="must be int, not NoneType"):
        torch.softmax(t, None)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.softmax(t, 2)
    with pytest.raises(RuntimeError):
        torch.softmax(torch.tensor([1, 2]), 0)  # integer input without dtype


@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_gradcheck(dim):
    x = leaf(RNG.normal(size=(3, 4)))
    assert gradcheck(lambda v: torch.softmax(v, dim), (x,))
    assert gradcheck(lambda v: v.log_softmax(dim), (x,))
    assert gradgradcheck(lambda v: torch.log_softmax(v, dim), (x,))


# ---------------------------------------------------------------------- cumprod
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumprod_values(dim):
    x = RNG.normal(size=(3, 4, 2))
    np.testing.assert_allclose(torch.cumprod(torch.tensor(x), dim).numpy(),
                               np.cumprod(x, axis=dim), rtol=1e-12)
    np.testing.assert_allclose(torch.tensor(x).cumprod(dim).numpy(), np.cumprod(x, axis=dim))


def test_cumprod_dtypes_and_0_dim():
    assert torch.cumprod(torch.tensor([1, 2, 3]), 0).tolist() == [1, 2, 6]
    assert torch.cumprod(torch.tensor([1, 2], dtype=torch.int32), 0).dtype == torch.int64
    assert torch.cumprod(torch.tensor([True, True]), 0).dtype == torch.int64
    out = torch.cumprod(torch.tensor([1.0, 2.0]), 0, dtype=torch.float64)
    assert out.dtype == torch.float64 and out.tolist() == [1.0, 2.0]
    assert torch.cumprod(torch.tensor(3.0), 0).item() == 3.0
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.cumprod(torch.ones(2, 3), 2)
    with pytest.raises(TypeError):
        torch.cumprod(torch.ones(3))


def test_cumprod_gradient_with_zeros_closed_form():
    # grad[i] = sum_{k >= i} g[k] * prod_{j <= k, j != i} x[j]
    x = torch.tensor([2.0, 0.0, 3.0, 0.0, 4.0], requires_grad=True)
    torch.cumprod(x, 0).backward(torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert x.grad.tolist() == [1.0, 22.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("values", [
    [[2.0, 0.0, 3.0, 0.0, 4.0], [1.0, 2.0, 0.0, 5.0, 0.5]],   # two zeros, one zero
    [[0.0, 1.5, -2.0, 0.7, 1.1], [0.9, -1.2, 1.3, 0.8, 0.0]],  # zero first, zero last
    [[0.0, 0.0, 1.5, 2.0, 3.0], [1.5, 2.0, -1.0, 0.5, 2.5]],  # adjacent zeros, no zeros
])
def test_cumprod_gradcheck_with_zeros(values):
    x = leaf(values)
    assert gradcheck(lambda v: torch.cumprod(v, 1), (x,))
    assert gradcheck(lambda v: torch.cumprod(v, 0), (x,))
    assert gradgradcheck(lambda v: torch.cumprod(v, 1), (x,))


def test_cumprod_gradcheck_random():
    x = leaf(RNG.normal(size=(2, 3, 4)))
    for dim in (0, 1, 2):
        assert gradcheck(lambda v: torch.cumprod(v, dim), (x,))
    assert gradgradcheck(lambda v: v.cumprod(-1), (x,))
    x3 = leaf(RNG.normal(size=(2, 3, 4)) * (RNG.random((2, 3, 4)) > 0.4))
    assert gradgradcheck(lambda v: torch.cumprod(v, 1), (x3,))
    assert gradcheck(lambda v: torch.cumprod(v, 0), (leaf(2.5),))


# ---------------------------------------------------------------------- logaddexp, hypot
def test_logaddexp_values_and_stability():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4,))
    np.testing.assert_allclose(torch.logaddexp(torch.tensor(a), torch.tensor(b)).numpy(),
                               np.logaddexp(a, b), rtol=1e-12)
    big = torch.logaddexp(torch.tensor([1000.0, -1000.0]), torch.tensor([1000.0, -1000.0]))
    np.testing.assert_allclose(big.numpy(), [1000 + math.log(2), -1000 + math.log(2)], rtol=1e-6)
    inf = torch.tensor([-math.inf])
    assert torch.logaddexp(inf, inf).item() == -math.inf
    assert torch.tensor([0.0]).logaddexp(torch.tensor([0.0])).item() == pytest.approx(math.log(2))


def test_hypot_values_and_stability():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 1))
    np.testing.assert_allclose(torch.hypot(torch.tensor(a), torch.tensor(b)).numpy(),
                               np.hypot(a, b), rtol=1e-12)
    assert torch.hypot(torch.tensor([3.0]), torch.tensor([4.0])).item() == 5.0
    big = torch.hypot(torch.tensor([3e200], dtype=torch.float64),
                      torch.tensor([4e200], dtype=torch.float64))
    assert big.item() == pytest.approx(5e200)
    assert torch.tensor([5.0]).hypot(torch.tensor([12.0])).item() == 13.0


def test_logaddexp_hypot_dtypes_and_errors():
    f32, f64 = torch.ones(2), torch.ones(2, dtype=torch.float64)
    assert torch.logaddexp(f32, f64).dtype == torch.float64
    assert torch.hypot(torch.tensor([1, 2]), torch.tensor([1.0, 2.0])).dtype == torch.float32
    for fn, name in ((torch.logaddexp, "logaddexp"), (torch.hypot, "hypot")):
        with pytest.raises(NotImplementedError, match=f'"{name}_cpu" not implemented for \'Long\''):
            fn(torch.tensor([1, 2]), torch.tensor([3, 4]))
        with pytest.raises(TypeError,
                           match="argument 'other' \\(position 2\\) must be Tensor, not float"):
            fn(f32, 1.0)
        with pytest.raises(RuntimeError, match="must match the size"):
            fn(torch.ones(2, 3), torch.ones(4))


def test_logaddexp_hypot_gradcheck():
    a, b = leaf(RNG.normal(size=(3, 4))), leaf(RNG.normal(size=(4,)))
    for fn in (torch.logaddexp, torch.hypot):
        assert gradcheck(fn, (a, b))
        assert gradgradcheck(fn, (a, b))
    c = leaf(RNG.normal(size=(3, 4)))
    assert gradcheck(lambda u: torch.logaddexp(u, torch.tensor([0.5])), (c,))


def test_hypot_gradient_at_origin_is_nan_as_pytorch():
    a, b = leaf([0.0]), leaf([0.0])
    with np.errstate(invalid="ignore"):
        torch.hypot(a, b).sum().backward()
    assert math.isnan(a.grad.item()) and math.isnan(b.grad.item())


# ---------------------------------------------------------------------- trace
def test_trace_values_and_dtypes():
    x = RNG.normal(size=(3, 5))
    assert torch.trace(torch.tensor(x)).item() == pytest.approx(np.trace(x))
    assert torch.tensor(x).trace().item() == pytest.approx(np.trace(x))
    t = torch.arange(6).reshape(2, 3)
    assert torch.trace(t).item() == 4 and torch.trace(t).dtype == torch.int64
    assert torch.trace(torch.ones(2, 2, dtype=torch.int32)).dtype == torch.int64
    assert torch.trace(torch.ones(0, 3)).item() == 0.0


def test_trace_errors_and_gradcheck():
    with pytest.raises(RuntimeError, match="trace: expected a matrix, but got tensor with dim 3"):
        torch.trace(torch.ones(2, 3, 4))
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        torch.trace(torch.tensor([[True, False], [False, True]]))
    for shape in ((3, 3), (2, 4), (4, 2)):
        x = leaf(RNG.normal(size=shape))
        assert gradcheck(torch.trace, (x,))
        assert gradgradcheck(lambda v: torch.trace(v) ** 2, (x,))
    x = leaf(RNG.normal(size=(3, 3)))
    torch.trace(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(3))


# ---------------------------------------------------------------------- tensordot
A = RNG.normal(size=(2, 3, 4))
B = RNG.normal(size=(3, 4, 5))

TENSORDOT_DIMS = [  # disttorch dims, NumPy axes
    (2, 2),
    (1, ([2], [1])),
    (0, 0),
    (([1, 2], [0, 1]), ([1, 2], [0, 1])),
    (((2, 1), (1, 0)), ([2, 1], [1, 0])),
    ([[-1], [1]], ([2], [1])),
]


@pytest.mark.parametrize("dims,axes", TENSORDOT_DIMS, ids=[str(d[0]) for d in TENSORDOT_DIMS])
def test_tensordot_values(dims, axes):
    if dims == 1:  # a's last dim (4) against B's first (3) would not match: use B's transpose
        b = np.ascontiguousarray(B.transpose(1, 0, 2))
        out = torch.tensordot(torch.tensor(A), torch.tensor(b), dims=1)
        np.testing.assert_allclose(out.numpy(), np.tensordot(A, b, axes=1), rtol=1e-12)
        return
    out = torch.tensordot(torch.tensor(A), torch.tensor(B), dims)
    np.testing.assert_allclose(out.numpy(), np.tensordot(A, B, axes=axes), rtol=1e-12)


def test_tensordot_dims_as_tensor_and_default():
    a, b = torch.tensor(A), torch.tensor(B)
    ref = np.tensordot(A, B, axes=([1, 2], [0, 1]))
    np.testing.assert_allclose(torch.tensordot(a, b, torch.tensor([[1, 2], [0, 1]])).numpy(), ref)
    np.testing.assert_allclose(torch.tensordot(a, b, torch.tensor(2)).numpy(), ref)
    np.testing.assert_allclose(torch.tensordot(a, b).numpy(), ref)
    ints = torch.tensordot(torch.ones(2, 3, dtype=torch.int32), torch.ones(3, dtype=torch.int32), 1)
    assert ints.dtype == torch.int32 and ints.tolist() == [3, 3]


def test_tensordot_size_one_dim_is_summed_as_pytorch():
    a, b = RNG.normal(size=(2, 1)), RNG.normal(size=(3, 4))
    out = torch.tensordot(torch.tensor(a), torch.tensor(b), dims=([1], [0]))
    np.testing.assert_allclose(out.numpy(), a @ b.sum(0, keepdims=True), rtol=1e-12)
    ta, tb = leaf(a), leaf(b)
    assert gradcheck(lambda u, v: torch.tensordot(u, v, ([1], [0])), (ta, tb))


@pytest.mark.parametrize("dims", [2, ([1, 2], [1, 0]), ([2, 1], [0, 1]), ([2], [0]), 0])
def test_tensordot_gradcheck(dims):
    a, b = leaf(RNG.normal(size=(2, 3, 4))), leaf(RNG.normal(size=(4, 3, 2)))
    if dims == 2:
        b = leaf(RNG.normal(size=(3, 4, 2)))
    assert gradcheck(lambda u, v: torch.tensordot(u, v, dims), (a, b))
    assert gradgradcheck(lambda u, v: torch.tensordot(u, v, dims), (a, b))


def test_tensordot_errors():
    a, b = torch.tensor(A), torch.tensor(B)
    with pytest.raises(RuntimeError, match="tensordot expects dims >= 0, but got dims=-1"):
        torch.tensordot(a, b, dims=-1)
    with pytest.raises(RuntimeError,
                       match="tensordot expects dims < ndim_a or ndim_b, but got dims=4"):
        torch.tensordot(a, b, dims=4)
    with pytest.raises(RuntimeError, match="contracted dimensions need to match, but first has "
                                           "size 4 in dim -1 and second has size 3 in dim 0"):
        torch.tensordot(a, b, dims=1)
    with pytest.raises(RuntimeError,
                       match="first has size 3 in dim 1 and second has size 4 in dim 1"):
        torch.tensordot(a, b, dims=([1], [1]))
    with pytest.raises(RuntimeError, match="both dimension lists should have same length"):
        torch.tensordot(a, b, dims=([1, 2], [0]))
    with pytest.raises(RuntimeError, match="both inputs should have same dtype"):
        torch.tensordot(a, b.float(), dims=2)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        torch.tensordot(a, b, dims=[[1, 1], [0, 0]])
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.tensordot(a, b, dims=[[5], [0]])
    with pytest.raises(RuntimeError, match="tensordot expects dims to be int or"):
        torch.tensordot(a, b, dims=2.0)
    with pytest.raises(TypeError,
                       match="'dims_self' \\(position 3\\) must be tuple of ints, not int"):
        torch.tensordot(a, b, dims=(1, 0))


# ---------------------------------------------------------------------- diff
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_diff_values(n, dim):
    x = RNG.normal(size=(4, 5))
    np.testing.assert_allclose(torch.diff(torch.tensor(x), n, dim).numpy(),
                               np.diff(x, n, axis=dim), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(torch.tensor(x).diff(n=n, dim=dim).numpy(), np.diff(x, n, axis=dim),
                               rtol=1e-12, atol=1e-12)


def test_diff_prepend_append_and_special_orders():
    v = torch.tensor([1, 4, 9, 16])
    assert torch.diff(v).tolist() == [3, 5, 7]
    assert torch.diff(v, prepend=torch.tensor([0]), append=torch.tensor([20, 30])).tolist() \
        == [1, 3, 5, 7, 4, 10]
    assert torch.diff(v, prepend=torch.tensor([0.5])).dtype == torch.float32
    same = torch.diff(v, n=0)
    assert same.tolist() == v.tolist() and same is not v
    assert torch.diff(v, n=5).shape == (0,)
    assert torch.diff(torch.tensor([True, False, False])).tolist() == [True, False]
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert torch.diff(x, dim=0, prepend=torch.zeros(1, 3)).tolist() == [[1, 2, 3], [3, 3, 3]]


def test_diff_errors():
    v = torch.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="diff expects input to be at least one-dimensional"):
        torch.diff(torch.tensor(3.0))
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        torch.diff(v, n=-1)
    with pytest.raises(RuntimeError, match="to be the same dimension as input"):
        torch.diff(torch.ones(2, 3), dim=0, prepend=torch.zeros(3))
    with pytest.raises(RuntimeError, match="input.size\\(1\\) = 3, but got tensor.size\\(1\\) = 2"):
        torch.diff(torch.ones(2, 3), dim=0, prepend=torch.zeros(1, 2))
    with pytest.raises(TypeError, match="argument 'prepend' must be Tensor, not int"):
        torch.diff(v, prepend=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.diff(torch.ones(2, 3), dim=3)


def test_diff_gradcheck():
    x = leaf(RNG.normal(size=(4, 5)))
    for n, dim in ((1, -1), (2, 0), (3, 1), (6, 1)):
        assert gradcheck(lambda v: torch.diff(v, n, dim), (x,))
    assert gradgradcheck(lambda v: torch.diff(v, 2, 1) ** 2, (x,))
    p, a = leaf(RNG.normal(size=(1, 5))), leaf(RNG.normal(size=(2, 5)))
    assert gradcheck(lambda v, pp, aa: torch.diff(v, 2, 0, prepend=pp, append=aa), (x, p, a))


# ---------------------------------------------------------------------- median
def _lower_median(x):
    flat = np.sort(np.asarray(x).reshape(-1))
    return flat[(flat.size - 1) // 2]


def test_median_whole_tensor_is_the_lower_median():
    for shape in ((7,), (3, 4), (2, 3, 5)):
        x = RNG.normal(size=shape)
        assert torch.median(torch.tensor(x)).item() == _lower_median(x)
        assert torch.tensor(x).median().item() == _lower_median(x)
    assert torch.median(torch.tensor([3.0, 1.0, 2.0, 4.0])).item() == 2.0
    out = torch.median(torch.tensor([1, 5, 2, 9]))
    assert out.item() == 2 and out.dtype == torch.int64 and out.shape == ()
    assert math.isnan(torch.median(torch.tensor([1.0, math.nan, 2.0])).item())
    assert math.isnan(torch.median(torch.ones(0)).item())
    assert torch.median(torch.tensor([], dtype=torch.int64)).item() == np.iinfo(np.int64).min
    assert torch.median(torch.tensor(2.0)).item() == 2.0


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_median_dim_values_and_indices(dim, keepdim):
    x = RNG.normal(size=(4, 6))
    res = torch.median(torch.tensor(x), dim, keepdim)
    values, indices = res
    assert res.values is values and res.indices is indices and type(res).__name__ == "median"
    ref = np.take(np.sort(x, axis=dim), [(x.shape[dim] - 1) // 2], axis=dim)
    if not keepdim:
        ref = ref.squeeze(dim)
    np.testing.assert_array_equal(values.numpy(), ref)
    assert indices.dtype == torch.int64
    picked = np.take_along_axis(x, indices.numpy() if keepdim else
                                np.expand_dims(indices.numpy(), dim), axis=dim)
    np.testing.assert_array_equal(picked.reshape(values.shape), values.numpy())
    assert "disttorch.return_types.median(" in repr(res)


def test_median_dim_nan_0_dim_and_empty():
    x = torch.tensor([[1.0, math.nan, 2.0, math.nan], [3.0, 1.0, 2.0, 5.0]])
    values, indices = torch.median(x, 1)
    assert math.isnan(values[0].item()) and values[1].item() == 2.0
    assert indices.tolist() == [1, 2]  # the first NaN, as PyTorch
    v, i = torch.median(torch.tensor(2.0), 0)
    assert v.shape == () and i.shape == () and v.item() == 2.0 and i.item() == 0
    v, i = torch.median(torch.tensor(2.0), -1, keepdim=True)
    assert v.shape == () and i.item() == 0
    v, i = torch.median(torch.ones(0, 3), 1)
    assert v.shape == (0,) and i.shape == (0,)


def test_median_errors():
    with pytest.raises(IndexError,
                       match="median\\(\\): Expected reduction dim 0 to have non-zero size."):
        torch.median(torch.ones(0, 3), 0)
    with pytest.raises(NotImplementedError, match="\"median_cpu\" not implemented for 'Bool'"):
        torch.median(torch.tensor([True, False]))
    with pytest.raises(TypeError, match="argument 'dim' \\(position 2\\) must be int, not tuple"):
        torch.median(torch.ones(2, 3), (0, 1))
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.median(torch.ones(2, 3), 2)


def test_median_gradients():
    x = leaf([1.0, 2.0, 2.0, 2.0, 3.0])
    torch.median(x).backward()  # shared evenly among the ties, as PyTorch
    np.testing.assert_allclose(x.grad.numpy(), [0, 1 / 3, 1 / 3, 1 / 3, 0])
    y = leaf([[1.0, 2.0, 2.0, 2.0, 3.0]])
    values, indices = torch.median(y, 1)
    values.sum().backward()  # to the selected element only
    expected = np.zeros((1, 5))
    expected[0, indices.item()] = 1
    np.testing.assert_array_equal(y.grad.numpy(), expected)
    z = leaf(RNG.normal(size=(3, 5)))
    assert gradcheck(torch.median, (z,))
    for dim in (0, 1):
        assert gradcheck(lambda v: torch.median(v, dim)[0], (z,))
        assert gradcheck(lambda v: torch.median(v, dim, keepdim=True).values, (z,))


# ---------------------------------------------------------------------- nan_to_num
def test_nan_to_num_values():
    x = torch.tensor([math.nan, math.inf, -math.inf, 1.5])
    f32 = np.finfo(np.float32)
    assert torch.nan_to_num(x).tolist() == [0.0, float(f32.max), float(f32.min), 1.5]
    f64 = torch.nan_to_num(x.double())
    assert f64.dtype == torch.float64 and f64.tolist() == [0.0, np.finfo(np.float64).max,
                                                           np.finfo(np.float64).min, 1.5]
    assert torch.nan_to_num(x, nan=2.0, posinf=1.0, neginf=-1.0).tolist() == [2.0, 1.0, -1.0, 1.5]
    assert x.nan_to_num(1.0).tolist()[0] == 1.0
    assert torch.nan_to_num(x, posinf=1e300).tolist()[1] == math.inf  # beyond float32: inf
    ints = torch.tensor([1, 2])
    out = torch.nan_to_num(ints)
    assert out.tolist() == [1, 2] and out.dtype == torch.int64 and out._data is not ints._data
    assert math.isnan(x[0].item())  # the input is left alone


def test_nan_to_num_gradient_passes_where_finite():
    x = torch.tensor([math.nan, math.inf, -math.inf, 1.5], dtype=torch.float64, requires_grad=True)
    torch.nan_to_num(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 1.0]
    y = leaf(RNG.normal(size=(3, 4)))
    assert gradcheck(torch.nan_to_num, (y,))


# ---------------------------------------------------------------------- meshgrid
@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_values(indexing):
    a, b, c = np.arange(3.0), np.arange(4.0) + 10, np.arange(2.0) - 5
    outs = torch.meshgrid(torch.tensor(a), torch.tensor(b), torch.tensor(c), indexing=indexing)
    refs = np.meshgrid(a, b, c, indexing=indexing)
    assert len(outs) == 3
    for o, r in zip(outs, refs):
        np.testing.assert_array_equal(o.numpy(), r)
    two = torch.meshgrid([torch.tensor(a), torch.tensor(b)], indexing=indexing)
    for o, r in zip(two, np.meshgrid(a, b, indexing=indexing)):
        np.testing.assert_array_equal(o.numpy(), r)


def test_meshgrid_views_0_dim_and_default_indexing():
    a, b = torch.tensor([1, 2, 3]), torch.tensor([4, 5])
    x, y = torch.meshgrid(a, b, indexing="ij")
    assert x._base is a and y._base is b and x.stride() == (1, 0)
    assert [t.shape for t in torch.meshgrid(torch.tensor(3), b, indexing="ij")] == [(1, 2), (1, 2)]
    assert torch.meshgrid(a, indexing="xy")[0].tolist() == [1, 2, 3]
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        x2, _ = torch.meshgrid(a, b)
    assert x2.shape == (3, 2)


def test_meshgrid_errors():
    a = torch.tensor([1, 2, 3])
    with pytest.raises(RuntimeError,
                       match='indexing must be one of "xy" or "ij", but received: foo'):
        torch.meshgrid(a, a, indexing="foo")
    with pytest.raises(RuntimeError, match="meshgrid expects all tensors to have the same dtype"):
        torch.meshgrid(a, a.double(), indexing="ij")
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
        torch.meshgrid(a, torch.ones(2, 2, dtype=torch.int64), indexing="ij")
    with pytest.raises(RuntimeError, match="meshgrid expects a non-empty TensorList"):
        torch.meshgrid(indexing="ij")


def test_meshgrid_gradcheck():
    a, b, c = leaf(RNG.normal(size=3)), leaf(RNG.normal(size=4)), leaf(RNG.normal(size=2))
    for indexing in ("ij", "xy"):
        assert gradcheck(lambda u, v, w: torch.meshgrid(u, v, w, indexing=indexing), (a, b, c))


# ---------------------------------------------------------------------- numel, detach, ...
def test_top_level_numel_detach_is_floating_point():
    t = torch.ones(2, 3, requires_grad=True)
    assert torch.numel(t) == 6 and isinstance(torch.numel(t), int)
    assert torch.is_floating_point(t) and not torch.is_floating_point(torch.tensor([1]))
    d = torch.detach(t)
    assert not d.requires_grad and d.grad_fn is None and d._data is t._data
    for name in ("numel", "is_floating_point", "detach"):
        with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'input' \\(position 1\\) "
                                            f"must be Tensor, not int"):
            getattr(torch, name)(3)


def test_std_mean_var_mean_are_functions_only_as_in_pytorch():
    assert callable(torch.std_mean) and callable(torch.var_mean)
    assert not hasattr(torch.Tensor, "std_mean") and not hasattr(torch.Tensor, "var_mean")
    assert not hasattr(torch.Tensor, "tensordot") and not hasattr(torch.Tensor, "meshgrid")


# ---------------------------------------------------------------------- parity with PyTorch
def _pair(x, requires_grad=True):
    """The same float64 values as a disttorch and a PyTorch leaf."""
    real = pytest.importorskip("torch")
    x = np.asarray(x, dtype=np.float64)
    return (torch.tensor(x, requires_grad=requires_grad),
            real.tensor(x, requires_grad=requires_grad))


def _zeroed(shape):
    x = RNG.normal(size=shape)
    x[RNG.random(shape) < 0.3] = 0.0
    return x


PARITY = {  # name: (fn(lib, *tensors), inputs)
    "softmax": (lambda L, a: L.softmax(a, 1), [RNG.normal(size=(3, 4))]),
    "log_softmax": (lambda L, a: a.log_softmax(0), [RNG.normal(size=(3, 4))]),
    "softmax_dtype": (lambda L, a: L.softmax(a, -1, dtype=L.float32), [RNG.normal(size=(3, 4))]),
    "cumprod": (lambda L, a: L.cumprod(a, 1), [RNG.normal(size=(3, 5))]),
    "cumprod_zeros": (lambda L, a: a.cumprod(-1), [_zeroed((4, 6))]),
    "cumprod_zeros_dim0": (lambda L, a: L.cumprod(a, 0), [_zeroed((5, 3))]),
    "logaddexp": (lambda L, a, b: L.logaddexp(a, b), [RNG.normal(size=(3, 4)),
                                                      RNG.normal(size=(4,))]),
    "hypot": (lambda L, a, b: a.hypot(b), [RNG.normal(size=(3, 4)), RNG.normal(size=(3, 1))]),
    "trace": (lambda L, a: L.trace(a), [RNG.normal(size=(3, 4))]),
    "tensordot_int": (lambda L, a, b: L.tensordot(a, b, 2), [RNG.normal(size=(2, 3, 4)),
                                                             RNG.normal(size=(3, 4, 5))]),
    "tensordot_lists": (lambda L, a, b: L.tensordot(a, b, dims=([2, 0], [0, 2])),
                        [RNG.normal(size=(2, 3, 4)), RNG.normal(size=(4, 5, 2))]),
    "tensordot_outer": (lambda L, a, b: L.tensordot(a, b, 0), [RNG.normal(size=(2, 3)),
                                                               RNG.normal(size=(4,))]),
    "diff": (lambda L, a: L.diff(a, n=2, dim=0), [RNG.normal(size=(5, 3))]),
    "diff_prepend": (lambda L, a, p: a.diff(dim=1, prepend=p), [RNG.normal(size=(3, 4)),
                                                               RNG.normal(size=(3, 2))]),
    "median": (lambda L, a: L.median(a), [RNG.normal(size=(4, 5))]),
    "median_dim": (lambda L, a: L.median(a, 1).values, [RNG.normal(size=(4, 5))]),
    "median_keepdim": (lambda L, a: a.median(0, keepdim=True)[0], [RNG.normal(size=(4, 5))]),
    "nan_to_num": (lambda L, a: L.nan_to_num(a, posinf=3.0), [np.array([np.nan, np.inf, 1.0])]),
    "meshgrid_xy": (lambda L, a, b: L.stack(L.meshgrid(a, b, indexing="xy")) * 1.0,
                    [RNG.normal(size=3), RNG.normal(size=4)]),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(PARITY))
def test_parity_with_pytorch(name):
    real = pytest.importorskip("torch")
    fn, inputs = PARITY[name]
    pairs = [_pair(x) for x in inputs]
    ours = fn(torch, *[p[0] for p in pairs])
    theirs = fn(real, *[p[1] for p in pairs])
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6,
                               atol=1e-9, equal_nan=True)
    g = RNG.normal(size=tuple(ours.shape))
    ours.backward(torch.tensor(g, dtype=ours.dtype))
    theirs.backward(real.tensor(g, dtype=theirs.dtype))
    for (mine, ref) in pairs:
        np.testing.assert_allclose(mine.grad.numpy(), ref.grad.numpy(), rtol=1e-6, atol=1e-9)


@pytest.mark.parity
def test_parity_median_indices_and_int_results():
    real = pytest.importorskip("torch")
    x = RNG.permutation(20).reshape(4, 5).astype(np.float64)  # distinct values: no ties
    ours, theirs = torch.median(torch.tensor(x), 1), real.median(real.tensor(x), 1)
    assert ours.indices.tolist() == theirs.indices.tolist()
    v = [[1, 4, 9, 16], [2, 3, 5, 7]]
    assert torch.diff(torch.tensor(v), n=2).tolist() == real.diff(real.tensor(v), n=2).tolist()
    assert torch.cumprod(torch.tensor(v), 1).tolist() == real.cumprod(real.tensor(v), 1).tolist()
    assert torch.trace(torch.tensor(v)).item() == real.trace(real.tensor(v)).item()
    assert torch.median(torch.tensor(v)).item() == real.median(real.tensor(v)).item()
