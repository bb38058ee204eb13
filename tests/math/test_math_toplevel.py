"""The long tail of top-level functions and Tensor methods (disttorch.ops.mathfns): values
against PyTorch, gradients (gradcheck) of the differentiable compositions, in-place forms."""

import math
import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

rng = np.random.default_rng(3)
V = rng.uniform(0.2, 0.9, (3, 4))
M = rng.standard_normal((3, 4))
SQ = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
INTS = np.array([[4, 6, 9], [10, 15, 7]])


def _cases(lib):
    return {
        "acosh": lambda: lib.acosh(lib.tensor(V + 1)),
        "asinh": lambda: lib.asinh(lib.tensor(M)),
        "atanh": lambda: lib.atanh(lib.tensor(V)),
        "deg2rad": lambda: lib.deg2rad(lib.tensor(M)),
        "rad2deg": lambda: lib.rad2deg(lib.tensor(M)),
        "copysign": lambda: lib.copysign(lib.tensor(M), lib.tensor(-M.T[:1].T)),
        "fmax": lambda: lib.fmax(lib.tensor([1.0, np.nan, 3.0]), lib.tensor([np.nan, 2.0, 1.0])),
        "fmin": lambda: lib.fmin(lib.tensor([1.0, np.nan, 3.0]), lib.tensor([np.nan, 2.0, 1.0])),
        "frac": lambda: lib.frac(lib.tensor(M * 3)),
        "fix": lambda: lib.fix(lib.tensor(M * 3)),
        "heaviside": lambda: lib.heaviside(lib.tensor([-1.0, 0.0, 2.0]), lib.tensor([0.5])),
        "ldexp": lambda: lib.ldexp(lib.tensor(M), lib.tensor([1, 2, 3, 4])),
        "frexp": lambda: lib.frexp(lib.tensor(M)),
        "gcd": lambda: lib.gcd(lib.tensor(INTS), lib.tensor([2, 3, 3])),
        "lcm": lambda: lib.lcm(lib.tensor(INTS), lib.tensor([2, 3, 3])),
        "nextafter": lambda: lib.nextafter(lib.tensor(M), lib.tensor(0.0, dtype=lib.float64)),
        "logaddexp2": lambda: lib.logaddexp2(lib.tensor(M), lib.tensor(V)),
        "signbit": lambda: lib.signbit(lib.tensor([-0.0, 1.0, -2.0])),
        "isposinf": lambda: lib.isposinf(lib.tensor([np.inf, -np.inf, 1.0])),
        "isneginf": lambda: lib.isneginf(lib.tensor([np.inf, -np.inf, 1.0])),
        "addmv": lambda: lib.addmv(lib.tensor(M[:, 0]), lib.tensor(M), lib.tensor(V[0]), beta=0.5, alpha=2),
        "addr": lambda: lib.addr(lib.tensor(M), lib.tensor(V[:, 0]), lib.tensor(V[0]), alpha=3),
        "addbmm": lambda: lib.addbmm(lib.tensor(SQ[0]), lib.tensor(SQ), lib.tensor(SQ)),
        "baddbmm": lambda: lib.baddbmm(lib.tensor(SQ), lib.tensor(SQ), lib.tensor(SQ), beta=2),
        "addcmul": lambda: lib.addcmul(lib.tensor(M), lib.tensor(V), lib.tensor(M), value=0.5),
        "addcdiv": lambda: lib.addcdiv(lib.tensor(M), lib.tensor(V), lib.tensor(V + 1), value=2),
        "inner": lambda: lib.inner(lib.tensor(M), lib.tensor(V)),
        "kron": lambda: lib.kron(lib.tensor(M[:2, :2]), lib.tensor(V)),
        "vdot": lambda: lib.vdot(lib.tensor(M[0]), lib.tensor(V[0])),
        "ger": lambda: lib.ger(lib.tensor(M[0]), lib.tensor(V[0])),
        "chain_matmul": lambda: lib.chain_matmul(lib.tensor(M), lib.tensor(V.T), lib.tensor(M)),
        "det": lambda: lib.det(lib.tensor(SQ)),
        "logdet": lambda: lib.logdet(lib.tensor(SQ)),
        "inverse": lambda: lib.inverse(lib.tensor(SQ)),
        "pinverse": lambda: lib.pinverse(lib.tensor(M)),
        "matrix_exp": lambda: lib.matrix_exp(lib.tensor(SQ)),
        "matrix_power": lambda: lib.matrix_power(lib.tensor(SQ), 3),
        "cholesky_solve": lambda: lib.cholesky_solve(
            lib.tensor(M[:3, :2]), lib.linalg.cholesky(lib.tensor(SQ[0] @ SQ[0].T))
        ),
        "cholesky_inverse": lambda: lib.cholesky_inverse(lib.linalg.cholesky(lib.tensor(SQ[0] @ SQ[0].T))),
        "triangular_solve": lambda: lib.triangular_solve(lib.tensor(M[:3, :2]), lib.tensor(SQ[0]))[0],
        "vander": lambda: lib.vander(lib.tensor([1.0, 2.0, 3.0]), N=4),
        "cross": lambda: lib.cross(lib.tensor(M[:, :3]), lib.tensor(V[:, :3])),
        "dist": lambda: lib.dist(lib.tensor(M), lib.tensor(V), 3),
        "cdist": lambda: lib.cdist(lib.tensor(M), lib.tensor(V)),
        "diag_embed": lambda: lib.diag_embed(lib.tensor(M), offset=1),
        "diagflat": lambda: lib.diagflat(lib.tensor(M[:2, :2])),
        "block_diag": lambda: lib.block_diag(lib.tensor(M[:2, :2]), lib.tensor(V[:1])),
        "column_stack": lambda: lib.column_stack([lib.tensor(M[0]), lib.tensor(V[0])]),
        "row_stack": lambda: lib.row_stack([lib.tensor(M[0]), lib.tensor(V[0])]),
        "dstack": lambda: lib.dstack([lib.tensor(M), lib.tensor(V)]),
        "tensor_split": lambda: lib.tensor_split(lib.tensor(M), 3, dim=1),
        "tensor_split_idx": lambda: lib.tensor_split(lib.tensor(M), [1, 3], dim=1),
        "hsplit": lambda: lib.hsplit(lib.tensor(M), 2),
        "rot90": lambda: lib.rot90(lib.tensor(M), 3),
        "msort": lambda: lib.msort(lib.tensor(M)),
        "aminmax": lambda: tuple(lib.aminmax(lib.tensor(M), dim=1)),
        "cummax": lambda: tuple(lib.cummax(lib.tensor(M), 1)),
        "cummin": lambda: tuple(lib.cummin(lib.tensor(M), 0)),
        "logcumsumexp": lambda: lib.logcumsumexp(lib.tensor(M), 1),
        "nansum": lambda: lib.nansum(lib.tensor([1.0, np.nan, 2.0])),
        "nanmean": lambda: lib.nanmean(lib.tensor([[1.0, np.nan], [2.0, 4.0]]), 1),
        "quantile": lambda: lib.quantile(lib.tensor(M), lib.tensor([0.25, 0.5], dtype=lib.float64), dim=1),
        "nanquantile": lambda: lib.nanquantile(lib.tensor([1.0, np.nan, 3.0, 4.0]), 0.5),
        "nanmedian": lambda: lib.nanmedian(lib.tensor([1.0, np.nan, 3.0, 4.0])),
        "trapezoid": lambda: lib.trapezoid(lib.tensor(M), dx=0.5),
        "cumulative_trapezoid": lambda: lib.cumulative_trapezoid(lib.tensor(M)),
        "cov": lambda: lib.cov(lib.tensor(M)),
        "corrcoef": lambda: lib.corrcoef(lib.tensor(M)),
        "logspace": lambda: lib.logspace(0, 2, 5, dtype=lib.float64),
        "hann": lambda: lib.hann_window(8, dtype=lib.float64),
        "hamming": lambda: lib.hamming_window(7, periodic=False, dtype=lib.float64),
        "blackman": lambda: lib.blackman_window(8, dtype=lib.float64),
        "bartlett": lambda: lib.bartlett_window(9, dtype=lib.float64),
        "kaiser": lambda: lib.kaiser_window(8, dtype=lib.float64),
        "bucketize": lambda: lib.bucketize(lib.tensor(M), lib.tensor([-1.0, 0.0, 1.0])),
        "searchsorted": lambda: lib.searchsorted(
            lib.tensor([1.0, 3.0, 5.0]), lib.tensor([0.0, 3.0, 6.0]), right=True
        ),
        "bincount": lambda: lib.bincount(lib.tensor([0, 1, 1, 4])),
        "histc": lambda: lib.histc(lib.tensor(M), bins=4, min=-2, max=2),
        "kthvalue": lambda: tuple(lib.kthvalue(lib.tensor(M), 2, 1)),
        "mode": lambda: tuple(lib.mode(lib.tensor([[1, 2, 2, 3], [4, 4, 1, 1]]), 1)),
        "repeat_interleave": lambda: lib.repeat_interleave(lib.tensor(M), 2, dim=0),
        "unique_consecutive": lambda: lib.unique_consecutive(
            lib.tensor([1, 1, 2, 2, 3, 1]), return_counts=True, return_inverse=True
        ),
        "cartesian_prod": lambda: lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3, 4, 5])),
        "combinations": lambda: lib.combinations(lib.tensor([1, 2, 3, 4]), 3),
        "renorm": lambda: lib.renorm(lib.tensor(M), 2, 0, 1.0),
        "igamma": lambda: lib.igamma(lib.tensor(V + 1), lib.tensor(V)),
        "unravel_index": lambda: lib.unravel_index(lib.tensor([5, 7]), (3, 4)),
        "atleast_3d": lambda: lib.atleast_3d(lib.tensor([1.0, 2.0])),
        "broadcast_tensors": lambda: lib.broadcast_tensors(lib.tensor(M), lib.tensor(V[0])),
    }


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


@pytest.mark.parity
@pytest.mark.parametrize("name", list(_cases(dt)))
def test_parity(name):
    torch = pytest.importorskip("torch")
    ours, ref = _np(_cases(dt)[name]()), _np(_cases(torch)[name]())
    if isinstance(ref, list):
        assert len(ours) == len(ref)
        for a, b in zip(ours, ref):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True)
    else:
        np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-6, equal_nan=True)


GRAD = {
    "acosh": (dt.acosh, [1.5, 3.0]),
    "asinh": (dt.asinh, [-2.0, 0.5]),
    "atanh": (dt.atanh, [-0.5, 0.3]),
    "copysign": (lambda x: dt.copysign(x, dt.tensor([-1.0, 1.0])), [0.5, -2.0]),
    "logaddexp2": (lambda x: dt.logaddexp2(x, x * 2), [0.5, -2.0]),
    "kron": (lambda x: dt.kron(x.reshape(1, 2), x.reshape(2, 1)), [0.5, -2.0]),
    "cdist": (lambda x: dt.cdist(x.reshape(2, 1), dt.tensor([[0.1], [2.0]], dtype=dt.float64)), [0.5, -2.0]),
    "logcumsumexp": (lambda x: dt.logcumsumexp(x, 0), [0.5, -2.0, 1.0]),
    "cov": (lambda x: dt.cov(x.reshape(2, 2)), [0.5, -2.0, 1.0, 3.0]),
    "trapezoid": (lambda x: dt.trapezoid(x), [0.5, -2.0, 1.0]),
    "diag_embed": (lambda x: dt.diag_embed(x), [0.5, -2.0]),
    "logdet": (lambda x: dt.logdet(x.reshape(2, 2)), [2.0, 0.3, 0.1, 1.5]),
    "block_diag": (
        lambda x: dt.block_diag(x[:4].reshape(2, 2), x[4], x[4:]),
        [2.0, 0.3, 0.1, 1.5, -1.0, 0.7],
    ),
    "linalg_cross": (
        lambda x: dt.linalg.cross(x.reshape(2, 3), x[:3].reshape(1, 3) * 2, dim=1),
        [2.0, 0.3, 0.1, 1.5, -1.0, 0.7],
    ),
    "renorm": (lambda x: dt.renorm(x.reshape(3, 2), 2, 0, 1.0), [2.0, 0.3, 0.1, 0.5, -1.0, 0.7]),
    "quantile": (
        lambda x: dt.quantile(x.reshape(2, 3), dt.tensor([0.2, 0.6], dtype=dt.float64), dim=1),
        [2.0, 0.3, 0.1, 1.5, -1.0, 0.7],
    ),
}


@pytest.mark.parametrize("name", list(GRAD))
def test_gradcheck(name):
    fn, pts = GRAD[name]
    assert gradcheck(fn, (dt.tensor(pts, dtype=dt.float64, requires_grad=True),))


def test_constants_inplace_and_info():
    assert dt.pi == math.pi and dt.e == math.e and math.isinf(dt.inf) and math.isnan(dt.nan)
    assert dt.newaxis is None
    t = dt.tensor([0.25, 0.5])
    assert t.acosh_ is not None
    t.erfinv_()
    np.testing.assert_allclose(t.numpy(), [0.2253121, 0.4769363], rtol=1e-5)
    u = dt.tensor([1.0, 4.0])
    dt.log2_(u)
    np.testing.assert_allclose(u.numpy(), [0.0, 2.0])
    assert dt.finfo(dt.float32).eps == np.finfo(np.float32).eps
    assert dt.iinfo(dt.int8).max == 127
    assert dt.can_cast(dt.int32, dt.float32) and not dt.can_cast(dt.float32, dt.int32)
    assert dt.promote_types(dt.int64, dt.float32) is dt.float32
    with pytest.raises(RuntimeError, match="ambiguous"):
        dt.is_nonzero(dt.tensor([1, 2]))


def test_diag_embed_dims_dtypes_and_size():
    """Any pair of new dims and offset (gradient: that diagonal of ``g``), the input's dtype
    (bool too), and memory linear in the result (it built an n x n x n selector)."""
    x = dt.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    for offset, d1, d2 in [(0, -2, -1), (1, 0, 2), (-1, -1, -3), (2, 0, 1)]:
        assert gradcheck(lambda t, o=offset, a=d1, b=d2: dt.diag_embed(t, o, a, b), (x,))
    y = dt.diag_embed(x, 1, 0, 2)
    assert y.shape == (4, 2, 4) and y[0, 1, 1].item() == 3.0 and y[2, 0, 3].item() == 2.0
    assert dt.diag_embed(dt.tensor([True, False])).dtype == dt.bool
    assert dt.diagflat(dt.tensor([[1, 2]], dtype=dt.int8), -1).dtype == dt.int8
    big = dt.diag_embed(dt.ones(3000))
    assert big.shape == (3000, 3000) and big.sum().item() == 3000
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical"):
        dt.diag_embed(x, 0, 1, -2)


@pytest.mark.parity
@pytest.mark.parametrize(
    "kw",
    [{"correction": 2}, {"aweights": [0.5, 0.5], "correction": 3}, {"fweights": [1, 1], "correction": 2}],
)
def test_cov_without_degrees_of_freedom_warns_and_divides_by_zero_as_pytorch(torch, kw):
    def run(lib):
        args = {k: lib.tensor(v) if isinstance(v, list) else v for k, v in kw.items()}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.cov(lib.tensor([[1.0, 2.0], [3.0, 5.0]]), **args)
        return out.tolist(), [str(w.message) for w in caught]

    assert run(dt) == run(torch)


def test_directional_splits_need_even_sections():
    """hsplit/vsplit/dsplit by a number of sections need it to divide the dimension, and a
    tensor of enough dimensions (PyTorch's errors); indices split anywhere."""
    x = dt.zeros(3, 3, 3)
    with pytest.raises(RuntimeError, match="torch.hsplit attempted to split along dimension 1, but the size"):
        dt.hsplit(x, 2)
    with pytest.raises(RuntimeError, match="not divisible by the split_size 0"):
        x.vsplit(0)
    with pytest.raises(RuntimeError, match="torch.dsplit requires a tensor with at least 3 dimension"):
        dt.dsplit(x[0], 1)
    assert [t.shape[2] for t in x.dsplit(3)] == [1, 1, 1]
    assert [t.shape[1] for t in dt.hsplit(x, [1])] == [1, 2]
    assert [t.shape[0] for t in x[0, 0].hsplit(3)] == [1, 1, 1]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_nansum_of_16_bit_floats_skips_their_nans(dtype):
    # bfloat16 (an ml_dtypes type, NumPy kind 'V') once kept its NaNs: the sum was NaN
    x = np.array([[1.5, np.nan, 2.0, -0.25], [np.nan, np.nan, 3.0, 1.0]], np.float32)
    t = dt.from_numpy(x).to(getattr(dt, dtype))
    assert t.nansum().dtype == t.dtype
    assert t.nansum().float().item() == 7.25
    np.testing.assert_array_equal(t.nansum(1).float().numpy(), [3.25, 4.0])
    np.testing.assert_array_equal(t.nansum(0).float().numpy(), [1.5, 0.0, 5.0, 0.75])
