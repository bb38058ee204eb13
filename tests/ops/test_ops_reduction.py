"""Reductions: values against NumPy over dims and keepdim, float64 gradient checks,
(values, indices) results, tie handling, zeros in prod, dtype rules and dim errors; cumprod
(with zeros), diff, median, std_mean/var_mean; parity with PyTorch when it is installed."""

import math

import numpy as np
import pytest
from parity_helpers import (
    INTS,
    PARITY_RNG,
    any_,
    assert_no_grad_op_matches,
    assert_values_and_gradients_match,
    pos,
    with_zeros,
)

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(1)
X = RNG.normal(size=(3, 4, 5))


def leaf(arr):
    return dt.tensor(np.asarray(arr, dtype=np.float64), requires_grad=True)


DIMS = [None, 0, -1, (0, 2), [1]]
REDUCTIONS = [  # name, NumPy reference (axis, keepdims)
    ("sum", lambda x, d, k: np.sum(x, axis=d, keepdims=k)),
    ("mean", lambda x, d, k: np.mean(x, axis=d, keepdims=k)),
    ("amax", lambda x, d, k: np.max(x, axis=d, keepdims=k)),
    ("amin", lambda x, d, k: np.min(x, axis=d, keepdims=k)),
    ("var", lambda x, d, k: np.var(x, axis=d, keepdims=k, ddof=1)),
    ("std", lambda x, d, k: np.std(x, axis=d, keepdims=k, ddof=1)),
    ("logsumexp", lambda x, d, k: np.log(np.sum(np.exp(x), axis=d, keepdims=k))),
    ("norm", lambda x, d, k: np.sqrt(np.sum(x * x, axis=d, keepdims=k))),
]


def _np_axis(d):
    return tuple(d) if isinstance(d, list) else d


@pytest.mark.parametrize("name,ref", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduction_values(name, ref, keepdim):
    x = dt.tensor(X)
    for d in DIMS:
        if name == "logsumexp" and d is None:
            got = getattr(dt, name)(x, (0, 1, 2), keepdim=keepdim)
        else:
            got = getattr(dt, name)(x, dim=d, keepdim=keepdim)
        want = ref(X, _np_axis(d), keepdim)
        assert got.shape == dt.Size(np.shape(want)), (name, d)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, err_msg=f"{name} dim={d}")
        method = getattr(x, name)(dim=(0, 1, 2) if d is None and name == "logsumexp" else d, keepdim=keepdim)
        np.testing.assert_allclose(method.numpy(), want, rtol=1e-10)


@pytest.mark.parametrize("name", [r[0] for r in REDUCTIONS] + ["prod"])
def test_reduction_gradcheck(name):
    x = leaf(RNG.uniform(0.5, 1.5, (2, 3, 2)))
    dims = [None, 1, (0, 2)] if name != "prod" else [None, 1, -1]
    for d in dims:
        for keepdim in (False, True):
            fn = getattr(dt, name)
            dd = (0, 1, 2) if (d is None and name == "logsumexp") else d
            # (PyTorch's prod refuses dim=None: its product of all elements takes no dim)
            kw = {} if (d is None and name == "prod") else {"dim": dd, "keepdim": keepdim}
            assert gradcheck(lambda t: fn(t, **kw), (x,)), (name, d, keepdim)


@pytest.mark.parametrize("name", ["sum", "mean", "var", "std", "logsumexp", "norm", "prod"])
def test_reduction_second_derivative(name):
    x = leaf(RNG.uniform(0.5, 1.5, (2, 3)))
    assert gradgradcheck(lambda t: getattr(dt, name)(t, 1), (x,))


def test_non_unit_upstream_gradient_is_broadcast_back():
    x = leaf(X)
    g = RNG.normal(size=(3, 5))
    dt.sum(x, 1).backward(dt.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(g[:, None, :], X.shape))
    x.grad = None
    x.mean(dim=(0, 2), keepdim=True).backward(dt.tensor(np.ones((1, 4, 1))))
    np.testing.assert_allclose(x.grad.numpy(), np.full(X.shape, 1 / 15))


def test_sum_over_empty_dim_list_means_all_and_dtype_rules():
    x = dt.tensor(X)
    np.testing.assert_allclose(dt.sum(x, ()).item(), X.sum())
    i = dt.tensor([[1, 2], [3, 4]], dtype=dt.int32)
    assert i.sum().dtype == dt.int64 and i.sum().item() == 10
    assert dt.tensor([True, True, False]).sum().item() == 2
    assert dt.tensor([True, True]).sum().dtype == dt.int64
    assert i.sum(dtype=dt.float64).dtype == dt.float64
    assert i.prod().dtype == dt.int64 and i.prod().item() == 24
    assert i.cumsum(0).dtype == dt.int64
    assert dt.tensor([1.0], dtype=dt.float16).sum().dtype == dt.float16
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype.*Got: Long"):
        dt.tensor([1, 2]).mean()
    assert dt.tensor([1, 2]).mean(dtype=dt.float32).item() == 1.5
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        dt.tensor([1, 2]).var()


def test_bad_dim_raises_pytorch_index_error():
    x = dt.ones(2, 3)
    for fn in (
        lambda: x.sum(2),
        lambda: x.mean(-3),
        lambda: x.max(dim=5),
        lambda: x.cumsum(2),
        lambda: dt.amax(x, 3),
        lambda: x.var(2),
        lambda: x.logsumexp(4),
    ):
        with pytest.raises(
            IndexError,
            match=r"Dimension out of range \(expected to be in range "
            r"of \[-2, 1\], but got -?\d\)",
        ):
            fn()
    with pytest.raises(RuntimeError, match="appears multiple times"):
        x.sum((0, 0))


# ---------------------------------------------------------------------- max / min
def test_max_min_whole_tensor_and_with_dim_return_types():
    x = dt.tensor([[1.0, 5.0, 3.0], [7.0, 2.0, 7.0]])
    assert x.max().item() == 7.0 and dt.min(x).item() == 1.0
    out = x.max(dim=1)
    values, indices = out
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert out.values is values and out.indices is indices and out[0] is values
    assert type(out).__name__ == "max" and "return_types.max(" in repr(out)
    r = dt.min(x, 0, keepdim=True)
    assert r.values.tolist() == [[1.0, 2.0, 3.0]] and r.indices.tolist() == [[0, 1, 0]]
    assert r.indices.dtype == dt.int64
    s = dt.max(dt.tensor(4.0), 0)
    assert s.values.item() == 4.0 and s.indices.item() == 0 and s.values.shape == dt.Size([])


def test_max_dim_gradient_goes_to_selected_element():
    x = leaf([[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]])
    g = dt.tensor([2.0, 3.0], dtype=dt.float64)
    x.max(dim=1).values.backward(g)
    np.testing.assert_allclose(x.grad.numpy(), [[0, 2, 0], [3, 0, 0]])
    y = leaf(RNG.normal(size=(3, 4)))
    assert gradcheck(lambda t: t.max(dim=0).values, (y,))
    assert gradcheck(lambda t: dt.min(t, -1, keepdim=True)[0], (y,))


def test_amax_and_full_max_split_gradient_evenly_among_ties():
    x = leaf([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    dt.amax(x, dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0.5, 0.5], [0.5, 0.5, 0]])
    y = leaf([3.0, 1.0, 3.0, 3.0])
    y.max().backward()
    np.testing.assert_allclose(y.grad.numpy(), [1 / 3, 0, 1 / 3, 1 / 3])
    z = leaf([0.0, 0.0, 1.0])
    dt.amin(z).backward()
    np.testing.assert_allclose(z.grad.numpy(), [0.5, 0.5, 0.0])


def test_max_errors_on_empty_input():
    with pytest.raises(
        RuntimeError,
        match=r"max\(\): Expected reduction dim to be specified "
        r"for input.numel\(\) == 0",
    ):
        dt.ones(0).max()
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        dt.ones(0, 3).max(0)


# ---------------------------------------------------------------------- prod
def test_prod_values_and_gradient_with_zeros():
    x = leaf([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]])
    np.testing.assert_allclose(x.prod(1).detach().numpy(), [0, 0, 6])
    x.prod(1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 6, 0], [0, 0, 0], [6, 3, 2]])
    y = leaf([2.0, 0.0, 3.0])
    y.prod().backward()
    np.testing.assert_allclose(y.grad.numpy(), [0, 6, 0])
    assert gradcheck(lambda t: t.prod(0), (leaf([[1.0, 0.0], [3.0, 2.0], [0.5, 0.0]]),))
    with pytest.raises(TypeError, match="must be int"):
        dt.prod(dt.ones(2, 2), (0, 1))


# ---------------------------------------------------------------------- var / std
def test_var_std_correction_and_unbiased_forms():
    x = dt.tensor(X)
    np.testing.assert_allclose(x.var(correction=0).item(), X.var())
    np.testing.assert_allclose(x.var(False).item(), X.var())
    np.testing.assert_allclose(dt.var(x, 1, True).numpy(), X.var(axis=1, ddof=1))
    np.testing.assert_allclose(dt.var(x, 1, False, True).numpy(), X.var(axis=1, keepdims=True))
    np.testing.assert_allclose(x.std(dim=2, unbiased=False).numpy(), X.std(axis=2))
    np.testing.assert_allclose(x.std(dim=(0, 1), correction=2).numpy(), X.std(axis=(0, 1), ddof=2))
    v, m = dt.var_mean(x, 0)
    np.testing.assert_allclose(v.numpy(), X.var(0, ddof=1))
    np.testing.assert_allclose(m.numpy(), X.mean(0))
    s, m = dt.std_mean(x, dim=1, correction=0)
    np.testing.assert_allclose(s.numpy(), X.std(1))
    assert np.isnan(dt.tensor([1.0]).var().item())
    for c in (0, 2):
        assert gradcheck(lambda t: dt.std(t, 1, correction=c), (leaf(X[:, :, :2]),))
        assert gradcheck(lambda t: dt.var(t, correction=c), (leaf(X[:2, :2, 0]),))


def test_std_gradient_is_zero_for_constant_input():
    x = leaf([2.0, 2.0, 2.0])
    x.std().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, 0.0])


# ---------------------------------------------------------------------- logsumexp, norm, cumsum
def test_logsumexp_is_stable_and_handles_infinities():
    x = dt.tensor([[1000.0, 1000.0], [-1000.0, -1000.0]], dtype=dt.float64)
    np.testing.assert_allclose(dt.logsumexp(x, 1).numpy(), [1000 + math.log(2), -1000 + math.log(2)])
    y = dt.tensor([-np.inf, -np.inf])
    assert dt.logsumexp(y, 0).item() == -np.inf
    assert dt.logsumexp(dt.tensor([np.inf, 1.0]), 0).item() == np.inf
    assert dt.logsumexp(dt.tensor([1, 2]), 0).dtype == dt.float32
    big = leaf([[500.0, 501.0], [0.0, 2.0]])
    dt.logsumexp(big, 1).sum().backward()
    e = np.exp([[0.0, 1.0], [0.0, 2.0]])
    np.testing.assert_allclose(big.grad.numpy(), e / e.sum(1, keepdims=True))


@pytest.mark.parametrize("p", [2, "fro", 1, 3, 0.5, math.inf, -math.inf, 0])
def test_norm_values_and_gradients(p):
    a = RNG.normal(size=(3, 4))
    x = dt.tensor(a)
    pn = 2 if p == "fro" else p
    for d in (None, 1, (0, 1)):
        axis = d if d is not None else (0, 1)
        absval = np.abs(a)
        if pn == math.inf:
            want = absval.max(axis=axis)
        elif pn == -math.inf:
            want = absval.min(axis=axis)
        elif pn == 0:
            want = (a != 0).sum(axis=axis).astype(float)
        else:
            want = (absval**pn).sum(axis=axis) ** (1 / pn)
        np.testing.assert_allclose(dt.norm(x, p, d).numpy(), want, rtol=1e-12)
        assert dt.norm(x, p, d, keepdim=True).dim() == 2
        assert gradcheck(lambda t: t.norm(p, d), (leaf(a),))


def test_norm_default_gradient_at_zero_and_integer_error():
    x = leaf([0.0, 0.0])
    x.norm().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        dt.norm(dt.tensor([1, 2]))


def test_cumsum_values_gradients_and_second_order():
    a = RNG.normal(size=(3, 4))
    for d in (0, 1, -1):
        np.testing.assert_allclose(dt.cumsum(dt.tensor(a), d).numpy(), np.cumsum(a, axis=d))
        assert gradcheck(lambda t: t.cumsum(d), (leaf(a),))
    x = leaf([1.0, 2.0, 3.0])
    x.cumsum(0).backward(dt.tensor([1.0, 10.0, 100.0], dtype=dt.float64))
    np.testing.assert_allclose(x.grad.numpy(), [111.0, 110.0, 100.0])
    assert gradgradcheck(lambda t: t.cumsum(1) ** 2, (leaf(a[:2, :3]),))
    assert dt.tensor([True, True, True]).cumsum(0).tolist() == [1, 2, 3]


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.amax(1),
        lambda t: t.logsumexp(1),
        lambda t: t.norm(dim=1),
        lambda t: t.std(1),
        lambda t: t.prod(1),
        lambda t: t.max(),
    ],
    ids=["amax", "logsumexp", "norm", "std", "prod", "max"],
)
def test_backward_refuses_an_output_modified_in_place(fn):
    x = leaf([[1.0, 2.0], [3.0, 5.0]])
    y = fn(x)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.amax(1) ** 2,
        lambda t: t.max(1).values ** 2,
        lambda t: t.norm(1, 1) ** 2,
        lambda t: t.norm(math.inf, 1) ** 2,
        lambda t: t.norm(3, 1),
        lambda t: t.logsumexp(1),
        lambda t: dt.where(t > 0.5, 0.0, t).prod(1),
        lambda t: dt.where(t > 0, 0.0, t).prod(),
    ],
    ids=["amax", "max_dim", "norm1", "norm_inf", "norm3", "logsumexp", "prod_one_zero", "prod_zeros"],
)
def test_second_derivatives_of_piecewise_and_zero_cases(fn):
    x = leaf(RNG.normal(size=(2, 3)))
    assert gradgradcheck(fn, (x,))


# ---------------------------------------------------------------------- parity with PyTorch
# name: (fn(lib, *float64 leaves), inputs) -- fn uses only API both libraries share
PS = (3, 4)
PARITY_GRAD = {
    "sum": (lambda L, a: a.sum(), [any_(PS)]),
    "sum_dim": (lambda L, a: L.sum(a, (0, 2), keepdim=True), [any_((2, 3, 4))]),
    "mean_dim": (lambda L, a: a.mean(dim=1), [any_(PS)]),
    "max_all": (lambda L, a: a.max(), [any_(PS)]),
    "max_dim": (lambda L, a: a.max(dim=1).values, [any_(PS)]),
    "min_dim_keep": (lambda L, a: L.min(a, 0, keepdim=True)[0], [any_(PS)]),
    "amax_ties": (lambda L, a: L.amax(a, 1), [np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])]),
    "amin": (lambda L, a: a.amin(dim=(0, 1)), [any_((2, 3, 4))]),
    "prod": (lambda L, a: a.prod(1), [np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 1.0], [1.5, 2.0, 3.0]])]),
    "prod_all": (lambda L, a: a.prod(), [pos(PS)]),
    "var": (lambda L, a: a.var(1), [any_(PS)]),
    "var_correction": (lambda L, a: L.var(a, dim=0, correction=0, keepdim=True), [any_(PS)]),
    "std": (lambda L, a: a.std(), [any_(PS)]),
    "std_unbiased_false": (lambda L, a: L.std(a, 1, False), [any_(PS)]),
    "logsumexp": (lambda L, a: L.logsumexp(a * 100, 1), [any_(PS)]),
    "norm": (lambda L, a: a.norm(), [any_(PS)]),
    "norm_p1_dim": (lambda L, a: L.norm(a, 1, 1), [any_(PS)]),
    "norm_inf": (lambda L, a: L.norm(a, math.inf, 0), [any_(PS)]),
    "norm_p3": (lambda L, a: L.norm(a, 3, 1, keepdim=True), [any_(PS)]),
    "cumsum": (lambda L, a: a.cumsum(1), [any_(PS)]),
    "sort_values": (lambda L, a: L.sort(a, 1, descending=True).values, [any_(PS)]),
    "topk_values": (lambda L, a: L.topk(a, 2, 0).values, [any_(PS)]),
    "cumprod": (lambda L, a: L.cumprod(a, 1), [PARITY_RNG.normal(size=(3, 5))]),
    "cumprod_zeros": (lambda L, a: a.cumprod(-1), [with_zeros((4, 6))]),
    "cumprod_zeros_dim0": (lambda L, a: L.cumprod(a, 0), [with_zeros((5, 3))]),
    "diff": (lambda L, a: L.diff(a, n=2, dim=0), [PARITY_RNG.normal(size=(5, 3))]),
    "diff_prepend": (
        lambda L, a, p: a.diff(dim=1, prepend=p),
        [PARITY_RNG.normal(size=(3, 4)), PARITY_RNG.normal(size=(3, 2))],
    ),
    "median": (lambda L, a: L.median(a), [PARITY_RNG.normal(size=(4, 5))]),
    "median_dim": (lambda L, a: L.median(a, 1).values, [PARITY_RNG.normal(size=(4, 5))]),
    "median_keepdim": (lambda L, a: a.median(0, keepdim=True)[0], [PARITY_RNG.normal(size=(4, 5))]),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(PARITY_GRAD))
def test_values_and_gradients_match_torch(name):
    assert_values_and_gradients_match(*PARITY_GRAD[name])


PARITY_NO_GRAD = {  # compare values and dtypes on int64 inputs
    "argmax": lambda L, a: L.argmax(a),
    "argmin_dim": lambda L, a: a.argmin(1),
    "any": lambda L, a: L.any(a > 2, 1),
    "all": lambda L, a: (a > -4).all(),
    "sort_idx": lambda L, a: L.sort(a, dim=1, stable=True).indices,
    "argsort_desc": lambda L, a: L.argsort(a.float() + 0.01 * L.arange(4), 1, descending=True),
    "unique": lambda L, a: L.unique(a, return_inverse=True, return_counts=True),
    "int_sum": lambda L, a: a.sum(0),
    "int_cumsum": lambda L, a: a.int().cumsum(1),
    "int_prod": lambda L, a: a.int().prod(),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(PARITY_NO_GRAD))
def test_no_grad_ops_match_torch(name):
    assert_no_grad_op_matches(PARITY_NO_GRAD[name], INTS)


# ---------------------------------------------------------------------- cumprod, diff, median, std_mean
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumprod_values(dim):
    x = RNG.normal(size=(3, 4, 2))
    np.testing.assert_allclose(dt.cumprod(dt.tensor(x), dim).numpy(), np.cumprod(x, axis=dim), rtol=1e-12)
    np.testing.assert_allclose(dt.tensor(x).cumprod(dim).numpy(), np.cumprod(x, axis=dim))


def test_cumprod_dtypes_and_0_dim():
    assert dt.cumprod(dt.tensor([1, 2, 3]), 0).tolist() == [1, 2, 6]
    assert dt.cumprod(dt.tensor([1, 2], dtype=dt.int32), 0).dtype == dt.int64
    assert dt.cumprod(dt.tensor([True, True]), 0).dtype == dt.int64
    out = dt.cumprod(dt.tensor([1.0, 2.0]), 0, dtype=dt.float64)
    assert out.dtype == dt.float64 and out.tolist() == [1.0, 2.0]
    assert dt.cumprod(dt.tensor(3.0), 0).item() == 3.0
    with pytest.raises(IndexError, match="Dimension out of range"):
        dt.cumprod(dt.ones(2, 3), 2)
    with pytest.raises(TypeError):
        dt.cumprod(dt.ones(3))


def test_cumprod_gradient_with_zeros_closed_form():
    # grad[i] = sum_{k >= i} g[k] * prod_{j <= k, j != i} x[j]
    x = dt.tensor([2.0, 0.0, 3.0, 0.0, 4.0], requires_grad=True)
    dt.cumprod(x, 0).backward(dt.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert x.grad.tolist() == [1.0, 22.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "values",
    [
        [[2.0, 0.0, 3.0, 0.0, 4.0], [1.0, 2.0, 0.0, 5.0, 0.5]],  # two zeros, one zero
        [[0.0, 1.5, -2.0, 0.7, 1.1], [0.9, -1.2, 1.3, 0.8, 0.0]],  # zero first, zero last
        [[0.0, 0.0, 1.5, 2.0, 3.0], [1.5, 2.0, -1.0, 0.5, 2.5]],  # adjacent zeros, no zeros
    ],
)
def test_cumprod_gradcheck_with_zeros(values):
    x = leaf(values)
    assert gradcheck(lambda v: dt.cumprod(v, 1), (x,))
    assert gradcheck(lambda v: dt.cumprod(v, 0), (x,))
    assert gradgradcheck(lambda v: dt.cumprod(v, 1), (x,))


def test_cumprod_gradcheck_random():
    x = leaf(RNG.normal(size=(2, 3, 4)))
    for dim in (0, 1, 2):
        assert gradcheck(lambda v: dt.cumprod(v, dim), (x,))
    assert gradgradcheck(lambda v: v.cumprod(-1), (x,))
    x3 = leaf(RNG.normal(size=(2, 3, 4)) * (RNG.random((2, 3, 4)) > 0.4))
    assert gradgradcheck(lambda v: dt.cumprod(v, 1), (x3,))
    assert gradcheck(lambda v: dt.cumprod(v, 0), (leaf(2.5),))


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_diff_values(n, dim):
    x = RNG.normal(size=(4, 5))
    np.testing.assert_allclose(
        dt.diff(dt.tensor(x), n, dim).numpy(), np.diff(x, n, axis=dim), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        dt.tensor(x).diff(n=n, dim=dim).numpy(), np.diff(x, n, axis=dim), rtol=1e-12, atol=1e-12
    )


def test_diff_prepend_append_and_special_orders():
    v = dt.tensor([1, 4, 9, 16])
    assert dt.diff(v).tolist() == [3, 5, 7]
    assert dt.diff(v, prepend=dt.tensor([0]), append=dt.tensor([20, 30])).tolist() == [1, 3, 5, 7, 4, 10]
    assert dt.diff(v, prepend=dt.tensor([0.5])).dtype == dt.float32
    same = dt.diff(v, n=0)
    assert same.tolist() == v.tolist() and same is not v
    assert dt.diff(v, n=5).shape == (0,)
    assert dt.diff(dt.tensor([True, False, False])).tolist() == [True, False]
    x = dt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert dt.diff(x, dim=0, prepend=dt.zeros(1, 3)).tolist() == [[1, 2, 3], [3, 3, 3]]


def test_diff_errors():
    v = dt.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="diff expects input to be at least one-dimensional"):
        dt.diff(dt.tensor(3.0))
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        dt.diff(v, n=-1)
    with pytest.raises(RuntimeError, match="to be the same dimension as input"):
        dt.diff(dt.ones(2, 3), dim=0, prepend=dt.zeros(3))
    with pytest.raises(RuntimeError, match="input.size\\(1\\) = 3, but got tensor.size\\(1\\) = 2"):
        dt.diff(dt.ones(2, 3), dim=0, prepend=dt.zeros(1, 2))
    with pytest.raises(TypeError, match="argument 'prepend' must be Tensor, not int"):
        dt.diff(v, prepend=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        dt.diff(dt.ones(2, 3), dim=3)


def test_diff_gradcheck():
    x = leaf(RNG.normal(size=(4, 5)))
    for n, dim in ((1, -1), (2, 0), (3, 1), (6, 1)):
        assert gradcheck(lambda v: dt.diff(v, n, dim), (x,))
    assert gradgradcheck(lambda v: dt.diff(v, 2, 1) ** 2, (x,))
    p, a = leaf(RNG.normal(size=(1, 5))), leaf(RNG.normal(size=(2, 5)))
    assert gradcheck(lambda v, pp, aa: dt.diff(v, 2, 0, prepend=pp, append=aa), (x, p, a))


def _lower_median(x):
    flat = np.sort(np.asarray(x).reshape(-1))
    return flat[(flat.size - 1) // 2]


def test_median_whole_tensor_is_the_lower_median():
    for shape in ((7,), (3, 4), (2, 3, 5)):
        x = RNG.normal(size=shape)
        assert dt.median(dt.tensor(x)).item() == _lower_median(x)
        assert dt.tensor(x).median().item() == _lower_median(x)
    assert dt.median(dt.tensor([3.0, 1.0, 2.0, 4.0])).item() == 2.0
    out = dt.median(dt.tensor([1, 5, 2, 9]))
    assert out.item() == 2 and out.dtype == dt.int64 and out.shape == ()
    assert math.isnan(dt.median(dt.tensor([1.0, math.nan, 2.0])).item())
    assert math.isnan(dt.median(dt.ones(0)).item())
    assert dt.median(dt.tensor([], dtype=dt.int64)).item() == np.iinfo(np.int64).min
    assert dt.median(dt.tensor(2.0)).item() == 2.0


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_median_dim_values_and_indices(dim, keepdim):
    x = RNG.normal(size=(4, 6))
    res = dt.median(dt.tensor(x), dim, keepdim)
    values, indices = res
    assert res.values is values and res.indices is indices and type(res).__name__ == "median"
    ref = np.take(np.sort(x, axis=dim), [(x.shape[dim] - 1) // 2], axis=dim)
    if not keepdim:
        ref = ref.squeeze(dim)
    np.testing.assert_array_equal(values.numpy(), ref)
    assert indices.dtype == dt.int64
    picked = np.take_along_axis(
        x, indices.numpy() if keepdim else np.expand_dims(indices.numpy(), dim), axis=dim
    )
    np.testing.assert_array_equal(picked.reshape(values.shape), values.numpy())
    assert "disttorch.return_types.median(" in repr(res)


def test_median_dim_nan_0_dim_and_empty():
    x = dt.tensor([[1.0, math.nan, 2.0, math.nan], [3.0, 1.0, 2.0, 5.0]])
    values, indices = dt.median(x, 1)
    assert math.isnan(values[0].item()) and values[1].item() == 2.0
    assert indices.tolist() == [1, 2]  # the first NaN, as PyTorch
    v, i = dt.median(dt.tensor(2.0), 0)
    assert v.shape == () and i.shape == () and v.item() == 2.0 and i.item() == 0
    v, i = dt.median(dt.tensor(2.0), -1, keepdim=True)
    assert v.shape == () and i.item() == 0
    v, i = dt.median(dt.ones(0, 3), 1)
    assert v.shape == (0,) and i.shape == (0,)


def test_median_errors():
    with pytest.raises(IndexError, match="median\\(\\): Expected reduction dim 0 to have non-zero size."):
        dt.median(dt.ones(0, 3), 0)
    with pytest.raises(NotImplementedError, match="\"median_cpu\" not implemented for 'Bool'"):
        dt.median(dt.tensor([True, False]))
    with pytest.raises(TypeError, match="argument 'dim' \\(position 2\\) must be int, not tuple"):
        dt.median(dt.ones(2, 3), (0, 1))
    with pytest.raises(IndexError, match="Dimension out of range"):
        dt.median(dt.ones(2, 3), 2)


def test_median_gradients():
    x = leaf([1.0, 2.0, 2.0, 2.0, 3.0])
    dt.median(x).backward()  # shared evenly among the ties, as PyTorch
    np.testing.assert_allclose(x.grad.numpy(), [0, 1 / 3, 1 / 3, 1 / 3, 0])
    y = leaf([[1.0, 2.0, 2.0, 2.0, 3.0]])
    values, indices = dt.median(y, 1)
    values.sum().backward()  # to the selected element only
    expected = np.zeros((1, 5))
    expected[0, indices.item()] = 1
    np.testing.assert_array_equal(y.grad.numpy(), expected)
    z = leaf(RNG.normal(size=(3, 5)))
    assert gradcheck(dt.median, (z,))
    for dim in (0, 1):
        assert gradcheck(lambda v: dt.median(v, dim)[0], (z,))
        assert gradcheck(lambda v: dt.median(v, dim, keepdim=True).values, (z,))


def test_std_mean_var_mean_are_functions_only_as_in_pytorch():
    assert callable(dt.std_mean) and callable(dt.var_mean)
    assert not hasattr(dt.Tensor, "std_mean") and not hasattr(dt.Tensor, "var_mean")
    assert not hasattr(dt.Tensor, "tensordot") and not hasattr(dt.Tensor, "meshgrid")


@pytest.mark.parity
@pytest.mark.parity
def test_parity_median_indices_and_int_results(torch):
    x = RNG.permutation(20).reshape(4, 5).astype(np.float64)  # distinct values: no ties
    ours, theirs = dt.median(dt.tensor(x), 1), torch.median(torch.tensor(x), 1)
    assert ours.indices.tolist() == theirs.indices.tolist()
    v = [[1, 4, 9, 16], [2, 3, 5, 7]]
    assert dt.diff(dt.tensor(v), n=2).tolist() == torch.diff(torch.tensor(v), n=2).tolist()
    assert dt.cumprod(dt.tensor(v), 1).tolist() == torch.cumprod(torch.tensor(v), 1).tolist()
    assert dt.trace(dt.tensor(v)).item() == torch.trace(torch.tensor(v)).item()
    assert dt.median(dt.tensor(v)).item() == torch.median(torch.tensor(v)).item()


@pytest.mark.parity
def test_value_index_results_are_named_as_pytorchs(torch):
    x = RNG.standard_normal((3, 5))
    for name, args in [
        ("cummax", (1,)),
        ("cummin", (0,)),
        ("kthvalue", (1, 1)),
        ("nanmedian", (1,)),
        ("mode", (1,)),
    ]:
        ours, theirs = getattr(dt.tensor(x), name)(*args), getattr(torch.tensor(x), name)(*args)
        assert type(ours).__name__ == type(theirs).__name__ == name
        assert ours._fields == ("values", "indices")
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        assert type(getattr(dt.tensor(1.0), name)(*args[:-1], 0)).__name__ == name  # a 0-d input, too
    assert dt.return_types.cummax is type(dt.cummax(dt.tensor(x), 0))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_nanmedian_over_a_dim_skips_nans_in_every_float_dtype(torch, dtype):
    v = [
        [math.nan, 3, 1, 2, math.nan, 7, 0.5, 9, -1],
        [4, math.inf, math.nan, -math.inf, math.inf, 5, 6, 7, 8],
    ]
    ours = dt.nanmedian(dt.tensor(v).to(getattr(dt, dtype)), 1)
    theirs = torch.nanmedian(torch.tensor(v).to(getattr(torch, dtype)), 1)
    assert ours.values.float().tolist() == theirs.values.float().tolist()
    assert ours.indices.tolist() == theirs.indices.tolist()


@pytest.mark.parity
def test_reductions_refuse_dtypes_and_empty_inputs_as_pytorch(torch):
    """The dtypes each kernel has no loop for, and norms without an identity over nothing."""
    calls = [
        lambda L: L.argmax(L.ones(2, 3, dtype=L.bool), 5),  # the dtype is checked before the dim
        lambda L: L.argmin(L.ones(3, dtype=L.bool)),
        lambda L: L.topk(L.ones(3, dtype=L.bool), 1),
        lambda L: L.nanmedian(L.ones(3, dtype=L.bool)),
        lambda L: L.nanmedian(L.ones(2, 3, dtype=L.complex64), 0),
        lambda L: L.mode(L.ones(3, dtype=L.complex64)),
        lambda L: L.kthvalue(L.ones(3, dtype=L.bool), 1),
        lambda L: L.cummax(L.ones(3, dtype=L.complex64), 0),
        lambda L: L.cummin(L.ones(3, dtype=L.complex64), 0),
        lambda L: L.softmax(L.ones(3, 2, dtype=L.int64), 0),
        lambda L: L.log_softmax(L.tensor(1), 0),
        lambda L: L.nn.functional.gelu(L.ones(3, dtype=L.int64)),
        lambda L: L.nn.functional.cross_entropy(L.ones(2, 3, 4, dtype=L.int64), L.zeros(2, 4, dtype=L.int64)),
        lambda L: L.linalg.vector_norm(L.zeros(0, 3), math.inf),
        lambda L: L.linalg.vector_norm(L.zeros(0, 3), -1.5, dim=-2),
        lambda L: L.linalg.vector_norm(L.zeros(0, 3), -1, dim=1),
        lambda L: L.norm(L.zeros(0, 3), -math.inf),
        lambda L: L.linalg.matrix_norm(L.zeros(2, 3, 0), 1),
        lambda L: L.linalg.matrix_norm(L.zeros(2, 3, 0), 2),
        lambda L: L.linalg.norm(L.zeros(0, 3), math.inf),
    ]

    def answer(L, call):
        try:
            r = call(L)
        except (RuntimeError, NotImplementedError, IndexError) as e:
            return type(e).__name__, str(e)
        return tuple(r.shape), r.tolist()

    for i, call in enumerate(calls):
        assert answer(dt, call) == answer(torch, call), i


@pytest.mark.parity
def test_reduction_signatures_pytorch_refuses(torch):
    """A keepdim without a dim, a bool or tuple dim where PyTorch takes an int, both unbiased and
    correction: TypeErrors; an explicit ``dim=None`` with keepdim is accepted."""
    calls = {
        "sum_keepdim": lambda x: x.sum(keepdim=True),
        "torch_sum_keepdim": lambda x: type(x).sum(x, keepdim=False),
        "mean_keepdim": lambda x: x.mean(keepdim=True),
        "prod_keepdim": lambda x: x.prod(keepdim=True),
        "max_keepdim": lambda x: x.max(keepdim=True),
        "min_keepdim": lambda x: x.min(keepdim=False),
        "sum_bool_dim": lambda x: x.sum(True),
        "amax_bool_dim": lambda x: x.amax(True),
        "amax_bool_in_dims": lambda x: x.amax((0, True)),
        "max_tuple": lambda x: x.max((0, 1)),
        "argmin_tuple": lambda x: x.argmin(dim=(0,)),
        "aminmax_tuple": lambda x: x.aminmax(dim=(0,)),
        "var_both": lambda x: x.var(0, unbiased=False, correction=1),
        "select_float": lambda x: x.select(0, 1.0),
        "sum_none_keepdim": lambda x: x.sum(None, True),
        "mean_none_keepdim": lambda x: x.mean(dim=None, keepdim=True),
        "sum": lambda x: x.sum(),
        "max": lambda x: x.max(),
    }

    def answer(L, call):
        try:
            r = call(L.arange(6.0).reshape(2, 3))
        except (TypeError, RuntimeError) as e:
            return type(e).__name__
        return tuple(r.shape), r.tolist()

    for name, call in calls.items():
        assert answer(dt, call) == answer(torch, call), name


@pytest.mark.parity
def test_float16_reductions_accumulate_in_float32_as_pytorch(torch):
    """Sums of squares beyond float16's range stay finite where PyTorch's do: the reductions
    add in float32 and round once."""
    a = np.random.default_rng(0).standard_normal((64, 257)).astype(np.float32) * 3 + 0.1

    def answers(L):
        x = L.tensor(a).half()
        sq = x * x
        calls = [x.var(), x.std(1), x.norm(), L.linalg.vector_norm(x), sq.mean(), sq.mean(0), sq.sum(1)]
        calls.append(L.nn.functional.mse_loss(x, x.flip(0)))
        return [c.float().numpy() for c in calls]

    for ours, theirs in zip(answers(dt), answers(torch)):
        np.testing.assert_array_equal(ours, theirs)


def _spread_gradient(lib, dtype_name, fn):
    x = lib.tensor(np.random.default_rng(1).standard_normal((6, 70)), dtype=lib.float32).to(
        getattr(lib, dtype_name)
    )
    x.requires_grad_()
    y = fn(x)
    y.backward(
        lib.tensor(np.random.default_rng(2).standard_normal(tuple(y.shape)), dtype=lib.float32).to(y.dtype)
    )
    return x.grad.float().numpy()


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
def test_var_std_16_bit_gradients_bits_as_pytorch(torch, dtype_name):
    """PyTorch's steps, each rounded to the dtype: ``(2 / dof) * grad * (x - mean)``, std's
    gradient divided by ``2 * std`` first."""
    for fn in (lambda x: x.var(-1), lambda x: x.var(), lambda x: x.std(0, correction=0)):
        np.testing.assert_array_equal(
            _spread_gradient(dt, dtype_name, fn), _spread_gradient(torch, dtype_name, fn)
        )


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
def test_vector_norm_16_bit_gradients_bits_as_pytorch(torch, dtype_name):
    """PyTorch's steps, each rounded to the dtype: ``grad * (x / norm)`` for p = 2, and its
    orders of operations for the other p."""
    for p in (2, 3, 1.5, math.inf):
        fn = lambda x, p=p: x.norm(p=p, dim=-1)  # noqa: E731
        np.testing.assert_array_equal(
            _spread_gradient(dt, dtype_name, fn), _spread_gradient(torch, dtype_name, fn)
        )


@pytest.mark.parity
def test_float16_cumsum_accumulates_in_float32_as_pytorch(torch):
    """PyTorch's scan keeps a float32 running sum and rounds each output to float16 (NumPy's
    float16 cumsum accumulates in float16)."""
    x = np.random.default_rng(0).standard_normal((3, 300)).astype(np.float16)
    for dim in (0, 1):
        got = dt.tensor(x).cumsum(dim).numpy()
        np.testing.assert_array_equal(got, torch.tensor(x).cumsum(dim).numpy())


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
def test_logsumexp_16_bit_gradient_bits_as_pytorch(torch, dtype_name):
    """``grad * exp(x - result)`` with each step rounded to the dtype."""
    fn = lambda x: x.logsumexp(-1)  # noqa: E731
    np.testing.assert_array_equal(
        _spread_gradient(dt, dtype_name, fn), _spread_gradient(torch, dtype_name, fn)
    )


def _lanes_by_hand(row, lanes):
    """PyTorch's vectorised 2-norm order, one step at a time: lane i % L, lanes in order, tail."""
    acc = [row.dtype.type(0)] * lanes
    body = row.size - row.size % lanes
    for i in range(body):
        acc[i % lanes] = acc[i % lanes] + row[i] * row[i]
    total = acc[0]
    for v in acc[1:]:
        total = total + v
    for v in row[body:]:
        total = total + v * v
    return np.sqrt(total)


@pytest.mark.parametrize("jit", ["1", "0"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_norm_over_last_dims_adds_in_vector_lanes(dtype, jit, monkeypatch):
    # 8 float32 / 4 float64 lanes: over many entries far from a pairwise sum (millions of
    # float32 gradients: the fourth digit), so printed gradient norms differed from PyTorch's;
    # the compiled loop and the NumPy form alike
    monkeypatch.setenv("DISTTORCH_JIT", jit)
    x = np.random.default_rng(0).standard_normal((3, 203)).astype(dtype)
    want = [_lanes_by_hand(r, 32 // x.itemsize) for r in x]
    for got in (dt.linalg.vector_norm(dt.tensor(x), dim=-1), dt.tensor(x).norm(dim=1)):
        assert got.dtype == dt.tensor(x).dtype
        np.testing.assert_array_equal(got.numpy(), want)
    assert dt.tensor(x).norm().item() == _lanes_by_hand(x.reshape(-1), 32 // x.itemsize)


@pytest.mark.parity
def test_two_norms_bits_as_pytorch(torch):
    rng = np.random.default_rng(1)
    big = rng.standard_normal(1 << 20).astype(np.float32)
    x = rng.standard_normal((4, 6, 45)).astype(np.float32)
    assert dt.tensor(big).norm().item() == torch.tensor(big).norm().item()
    for dim in (None, -1, (1, 2), 0):  # dim 0: not PyTorch's vectorised path (close, not bits)
        got = dt.linalg.vector_norm(dt.tensor(x), dim=dim).numpy()
        want = torch.linalg.vector_norm(torch.tensor(x), dim=dim).numpy()
        (np.testing.assert_allclose if dim == 0 else np.testing.assert_array_equal)(got, want)


# ---------------------------------------------------------------------- whole sums in PyTorch's order
WHOLE_SIZES = [2, 5, 8, 9, 33, 1000, 1025, 4096 + 7, 40000, 100003]


@pytest.mark.parametrize("jit", ["1", "0"], ids=["compiled", "numpy"])
def test_whole_sum_mean_var_std_have_pytorchs_bits(torch, monkeypatch, jit):
    """A sum over every element adds in PyTorch's cascade order (kernels/torch_sum.py), per
    thread count; mean, var and std of every element follow PyTorch's kernels from it."""
    monkeypatch.setenv("DISTTORCH_JIT", jit)
    rng = np.random.default_rng(3)
    before = (dt.get_num_threads(), torch.get_num_threads())
    try:
        for threads in (1, 3):
            dt.set_num_threads(threads)
            torch.set_num_threads(threads)
            for n in WHOLE_SIZES:
                for dtype in (np.float32, np.float64):
                    a = (rng.standard_normal(n) * 100 + 3).astype(dtype)
                    d, t = dt.from_numpy(a), torch.from_numpy(a)
                    for op in ("sum", "mean", "var", "std"):
                        assert getattr(d, op)().item() == getattr(t, op)().item(), (op, n, dtype, threads)
    finally:
        dt.set_num_threads(before[0])
        torch.set_num_threads(before[1])


@pytest.mark.filterwarnings("ignore:.*degrees of freedom")
def test_whole_sums_of_other_layouts_and_kept_dims(torch):
    """Transposed (dense) tensors are summed in memory order, sliced ones as before; kept dims,
    dims that cover every dim, and a size-1 dim left over go the same way as PyTorch."""
    a = np.random.default_rng(4).standard_normal((37, 45)).astype(np.float32)
    d, t = dt.from_numpy(a), torch.from_numpy(a)
    assert d.t().sum().item() == t.t().sum().item()
    assert d.mean((0, 1), keepdim=True).numpy().tolist() == t.mean((0, 1), keepdim=True).numpy().tolist()
    assert d[None].std((1, 2)).numpy().tolist() == t[None].std((1, 2)).numpy().tolist()
    assert d.reshape(1, -1).var(1).numpy().tolist() == t.reshape(1, -1).var(1).numpy().tolist()
    assert d[:, ::2].sum().item() == pytest.approx(t[:, ::2].sum().item(), rel=1e-6)
    assert d.sum(dtype=dt.float64).item() == t.sum(dtype=torch.float64).item()
    assert math.isnan(dt.ones(1).std().item()) and math.isnan(dt.ones(3).var(correction=5).item())
    assert (
        dt.arange(3.0).var(correction=5).item()
        == t.new_tensor([0.0, 1, 2]).var(correction=5).item()
        == math.inf
    )


def test_whole_sum_forms_agree_without_pytorch(monkeypatch):
    """The compiled loops and the NumPy passes give the same bits (numba or not)."""
    from disttorch.kernels.torch_sum import torch_sum

    rng = np.random.default_rng(5)
    for n in (0, 3, 64, 1000, 70000):
        a = rng.standard_normal(n).astype(np.float32)
        monkeypatch.setenv("DISTTORCH_JIT", "1")
        compiled = torch_sum(a, 2)
        monkeypatch.setenv("DISTTORCH_JIT", "0")
        assert torch_sum(a, 2) == compiled
    assert torch_sum(np.zeros(0, np.float64), 1) == 0.0
