"""disttorch.linalg: values and gradients against PyTorch (parity), float64 gradcheck of
every differentiable function, float32 and batched shapes, PyTorch's errors."""

import math

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

rng = np.random.default_rng(0)
A = rng.standard_normal((2, 4, 4))
B = rng.standard_normal((2, 4, 3))
W = rng.standard_normal((2, 5, 3))
WD = rng.standard_normal((2, 3, 5))


def _sym(f):
    return lambda a: f((a + a.mT) / 2)


def _spd(lib, **kw):
    return lambda a: lib.linalg.cholesky(a @ a.mT + 4 * lib.eye(4, dtype=a.dtype), **kw)


def _svd_fixed(lib):
    """SVD with a sign convention (first row of U non-negative), so both libraries agree."""

    def f(a):
        u, s, vh = lib.linalg.svd(a, full_matrices=False)
        sg = lib.sign(u[..., :1, :])
        return u * sg, s, vh * sg.mT

    return f


def _eigh_fixed(lib):
    def f(a):
        w, v = lib.linalg.eigh((a + a.mT) / 2)
        sg = lib.sign(v[..., :1, :])
        return w, v * sg

    return f


def _cases(lib):
    la = lib.linalg
    return {
        "inv": (la.inv, [A]),
        "solve": (la.solve, [A, B]),
        "solve_left_false": (lambda a, b: la.solve(a, b.mT, left=False), [A, B]),
        "solve_vector": (la.solve, [A, B[..., 0]]),
        "solve_triangular": (lambda a, b: la.solve_triangular(a, b, upper=True), [A + 4 * np.eye(4), B]),
        "solve_triangular_right_unit": (
            lambda a, b: la.solve_triangular(a, b.mT, upper=False, left=False, unitriangular=True),
            [A, B],
        ),
        "det": (la.det, [A]),
        "slogdet": (lambda a: la.slogdet(a).logabsdet, [A]),
        "eigh": (_eigh_fixed(lib), [A]),
        "eigvalsh": (_sym(la.eigvalsh), [A]),
        "svd_tall": (_svd_fixed(lib), [W]),
        "svd_wide": (_svd_fixed(lib), [WD]),
        "svdvals": (la.svdvals, [W]),
        "qr_tall": (la.qr, [W]),
        "qr_wide": (la.qr, [WD]),
        "cholesky": (_spd(lib), [A]),
        "cholesky_upper": (_spd(lib, upper=True), [A]),
        "matrix_exp": (la.matrix_exp, [A]),
        "pinv": (la.pinv, [W]),
        "pinv_hermitian": (_sym(lambda a: la.pinv(a, hermitian=True)), [A]),
        "lstsq": (lambda a, b: la.lstsq(a, b).solution, [W, rng.standard_normal((2, 5, 2))]),
        "matrix_power_3": (lambda a: la.matrix_power(a, 3), [A]),
        "matrix_power_-2": (lambda a: la.matrix_power(a, -2), [A]),
        "vector_norm_2": (lambda a: la.vector_norm(a, dim=-1), [W]),
        "vector_norm_1": (lambda a: la.vector_norm(a, 1, dim=(0, 2)), [W]),
        "vector_norm_3": (lambda a: la.vector_norm(a, 3, dim=-1, keepdim=True), [W]),
        "vector_norm_inf": (lambda a: la.vector_norm(a, math.inf, dim=-1), [W]),
        "vector_norm_-inf": (lambda a: la.vector_norm(a, -math.inf, dim=-1), [W]),
        **{
            f"matrix_norm_{o}": ((lambda o: lambda a: la.matrix_norm(a, o))(o), [W])
            for o in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)
        },
        "norm": (la.norm, [W]),
        "norm_matrix_keepdim": (lambda a: la.norm(a, "fro", dim=(0, 2), keepdim=True), [W]),
        "cond": (la.cond, [A]),
        "cross": (la.cross, [W, rng.standard_normal((1, 5, 3))]),
        "vecdot": (la.vecdot, [W, rng.standard_normal((5, 3))]),
        "multi_dot": (
            lambda a, b, c: la.multi_dot([a, b, c]),
            [rng.standard_normal(3), rng.standard_normal((3, 6)), rng.standard_normal((6, 2))],
        ),
        "vander": (lambda a: la.vander(a, N=4), [rng.standard_normal((2, 3))]),
        "tensorinv": (lambda a: la.tensorinv(a.reshape(4, 2, 2), ind=1), [A[0]]),
        "tensorsolve": (
            lambda a, b: la.tensorsolve(a.reshape(2, 2, 2, 2), b.reshape(2, 2)),
            [A[0], B[0, :, 0]],
        ),
        "householder_product": (
            la.householder_product,
            [rng.standard_normal((5, 3)), rng.standard_normal(2)],
        ),
    }


NAMES = list(_cases(dt))


def _scalar(out):
    outs = out if isinstance(out, tuple) else (out,)
    return sum((o * (i + 1.37)).sum() for i, o in enumerate(outs) if o.requires_grad)


@pytest.mark.parametrize("name", NAMES)
def test_gradcheck(name):
    fn, arrays = _cases(dt)[name]
    inputs = tuple(dt.tensor(a, dtype=dt.float64, requires_grad=True) for a in arrays)
    assert gradcheck(fn, inputs)


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_parity_values_and_grads(name):
    torch = pytest.importorskip("torch")
    fd, arrays = _cases(dt)[name]
    ft, _ = _cases(torch)[name]
    xd = [dt.tensor(a, dtype=dt.float64, requires_grad=True) for a in arrays]
    xt = [torch.tensor(a, requires_grad=True) for a in arrays]
    od, ot = fd(*xd), ft(*xt)
    for a, b in zip(od if isinstance(od, tuple) else (od,), ot if isinstance(ot, tuple) else (ot,)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-7, atol=1e-9)
    _scalar(od).backward()
    _scalar(ot).backward()
    for a, b in zip(xd, xt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "name",
    [
        "inv",
        "solve",
        "det",
        "svdvals",
        "cholesky",
        "matrix_exp",
        "qr_tall",
        "pinv",
        "matrix_norm_nuc",
        "eigvalsh",
    ],
)
def test_float32_keeps_dtype(name):
    fn, arrays = _cases(dt)[name]
    out = fn(*(dt.tensor(a, dtype=dt.float32) for a in arrays))
    for o in out if isinstance(out, tuple) else (out,):
        assert o.dtype == dt.float32
    ref = fn(*(dt.tensor(a, dtype=dt.float64) for a in arrays))
    for o, r in zip(out if isinstance(out, tuple) else (out,), ref if isinstance(ref, tuple) else (ref,)):
        np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=2e-3, atol=2e-4)


def test_lu_family_and_rank():
    x = rng.standard_normal((3, 4, 4))
    t = dt.tensor(x)
    lu, piv = dt.linalg.lu_factor(t)
    assert piv.dtype == dt.int32 and piv.shape == (3, 4) and piv.numpy().min() >= 1
    p, low, up = dt.linalg.lu(t)
    np.testing.assert_allclose((p @ low @ up).numpy(), x, atol=1e-12)
    assert np.allclose(np.triu(low.numpy(), 1), 0) and np.allclose(np.diagonal(low.numpy(), 0, 1, 2), 1)
    b = rng.standard_normal((3, 4, 2))
    np.testing.assert_allclose(dt.linalg.lu_solve(lu, piv, dt.tensor(b)).numpy(), np.linalg.solve(x, b))
    assert dt.linalg.lu_factor_ex(t).info.numpy().tolist() == [0, 0, 0]
    assert dt.linalg.matrix_rank(t).numpy().tolist() == [4, 4, 4]
    low_rank = t[..., :2] @ t[..., :2, :]
    assert dt.linalg.matrix_rank(low_rank).numpy().tolist() == [2, 2, 2]
    spd = dt.tensor(x @ x.transpose(0, 2, 1) + np.eye(4))
    ld, lpiv = dt.linalg.ldl_factor(spd)
    np.testing.assert_allclose(
        dt.linalg.ldl_solve(ld, lpiv, dt.tensor(b)).numpy(), np.linalg.solve(spd.numpy(), b), rtol=1e-8
    )


@pytest.mark.parity
def test_lu_parity():
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((2, 5, 5))
    ld, pd = dt.linalg.lu_factor(dt.tensor(x))
    lt, pt = torch.linalg.lu_factor(torch.tensor(x))
    np.testing.assert_allclose(ld.numpy(), lt.numpy(), atol=1e-12)
    np.testing.assert_array_equal(pd.numpy(), pt.numpy())


def test_eig_real_spectrum():
    x = dt.tensor([[2.0, 1.0], [0.0, 3.0]], dtype=dt.float64)
    w, v = dt.linalg.eig(x)
    assert w.dtype == dt.complex128 and v.dtype == dt.complex128
    np.testing.assert_allclose(sorted(w.numpy().real), [2.0, 3.0])
    np.testing.assert_allclose((x.cdouble() @ v).numpy(), (v * w).numpy(), atol=1e-12)
    rot = dt.linalg.eigvals(dt.tensor([[0.0, -1.0], [1.0, 0.0]]))  # complex eigenvalues: +-i
    assert rot.dtype == dt.complex64
    np.testing.assert_allclose(sorted(rot.numpy().imag), [-1, 1], atol=1e-6)


def test_errors():
    with pytest.raises(dt.linalg.LinAlgError, match="The diagonal element 2 is zero"):
        dt.linalg.inv(dt.tensor([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(RuntimeError, match="leading minor of order 2 is not positive-definite"):
        dt.linalg.cholesky(dt.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are 2 by 3"):
        dt.linalg.det(dt.zeros(2, 3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        dt.linalg.inv(dt.eye(2, dtype=dt.int64))
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        dt.linalg.inv(dt.ones(3))
    info = dt.linalg.cholesky_ex(dt.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])).info
    assert info.numpy().tolist() == [0, 2]
    assert issubclass(dt.linalg.LinAlgError, RuntimeError)
    assert dt.linalg.LinAlgError.__name__ == "_LinAlgError" and dt._C._LinAlgError is dt.linalg.LinAlgError


@pytest.mark.parity
def test_det_gradient_at_singular_matrices_as_pytorch(torch):
    """PyTorch's first-order gradient is 0 where det is exactly 0; a differentiable one
    (create_graph) is the adjugate there."""

    def grads(L):
        out = []
        for rows in (
            [[1.0, 2.0], [2.0, 4.0]],
            [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 2.0]],
            [[2.0, 1.0], [1.0, 3.0]],
        ):
            a = L.tensor(rows, dtype=L.float64, requires_grad=True)
            out.append(L.autograd.grad(L.linalg.det(a), a)[0].abs().tolist())
            out.append(L.autograd.grad(L.linalg.det(a), a, create_graph=True)[0].detach().tolist())
        return out

    np.testing.assert_allclose(
        np.concatenate([np.ravel(g) for g in grads(dt)]),
        np.concatenate([np.ravel(g) for g in grads(torch)]),
        atol=1e-12,
    )


@pytest.mark.parity
def test_matrix_power_of_integer_matrices_and_its_small_powers_as_pytorch(torch):
    def answer(L, dtype, n):
        a = L.tensor([[1, 2], [3, 4]], dtype=getattr(L, dtype))
        try:
            r = L.linalg.matrix_power(a, n)
        except (RuntimeError, NotImplementedError) as e:
            return type(e).__name__, str(e)
        return str(r.dtype).split(".")[-1], r.tolist(), r is a

    for dtype, n in [("int64", 3), ("uint8", 0), ("int32", 1), ("bool", 2), ("int64", -1)]:
        assert answer(dt, dtype, n) == answer(torch, dtype, n)
    a = dt.eye(2, dtype=dt.float64).requires_grad_()
    (dt.linalg.matrix_power(a, 0).sum() + dt.linalg.matrix_power(a, 1).sum()).backward()
    assert a.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]  # zero through the identity, one through the copy
