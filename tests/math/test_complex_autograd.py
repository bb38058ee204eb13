"""Autograd on complex tensors, PyTorch's convention: the gradient of a real loss w.r.t.
``z`` is ``dL/d(re z) + i dL/d(im z)``. Each op passes the complex gradcheck (real and
imaginary parts perturbed) and gives PyTorch's gradients."""

import types

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

OPS = {
    "mul": lambda z, w, x: z * w,
    "div": lambda z, w, x: z / w,
    "add_real": lambda z, w, x: z + x - w,
    "pow_tensor": lambda z, w, x: z**w,
    "pow_scalar": lambda z, w, x: z**2.5,
    "rpow": lambda z, w, x: 2**z,
    "square": lambda z, w, x: z.square(),
    "exp_times_real": lambda z, w, x: z.exp() * x,
    "abs": lambda z, w, x: (z * z).abs(),
    "angle": lambda z, w, x: z.angle(),
    "sgn": lambda z, w, x: z.sgn(),
    "real_imag": lambda z, w, x: z.real * w.imag,
    "polar": lambda z, w, x: dt.polar(x.abs() + 0.5, x),
    "complex": lambda z, w, x: dt.complex(x, x * 2),
    "view_as_real": lambda z, w, x: dt.view_as_real(z * w),
    "view_as_complex": lambda z, w, x: dt.view_as_complex(dt.stack([x, x * x], -1)),
    "chain": lambda z, w, x: z.sqrt().log().sin().tanh(),
    "trig": lambda z, w, x: z.cos() + z.sinh() + z.cosh() + z.tan(),
    "sigmoid": lambda z, w, x: z.sigmoid(),
    "reciprocal_rsqrt": lambda z, w, x: z.reciprocal() - z.rsqrt(),
    "conj": lambda z, w, x: z.conj() * x,
    "outer_matmul": lambda z, w, x: z.reshape(3, 1) @ w.reshape(1, 3),
    "dot": lambda z, w, x: z @ w,
    "sum_mean": lambda z, w, x: z.sum() + w.mean(),
    "real_times_complex_scalar": lambda z, w, x: x * (1 + 2j),
    "to_complex": lambda z, w, x: x.to(dt.complex128) * w,
    "norm": lambda z, w, x: z.norm() + dt.linalg.vector_norm(w, 3),
    "inverse_hyperbolic": lambda z, w, x: dt.asinh(z) + dt.acosh(w) + dt.atanh(z * 0.5),
    "exp2": lambda z, w, x: dt.exp2(z),
    "sinc": lambda z, w, x: dt.sinc(z),
    "logsumexp": lambda z, w, x: dt.logsumexp(dt.stack([z, w]), 0),
}


def _inputs(seed=0):
    dt.manual_seed(seed)
    z = dt.randn(3, dtype=dt.complex128, requires_grad=True)
    w = (dt.randn(3, dtype=dt.complex128) + 0.5).requires_grad_()
    x = dt.randn(3, dtype=dt.float64, requires_grad=True)
    return z, w, x


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck(name):
    assert gradcheck(OPS[name], _inputs())


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(OPS))
def test_gradients_match_pytorch(name):
    torch = pytest.importorskip("torch")
    ours = _inputs(1)
    theirs = [torch.tensor(t.detach().numpy(), requires_grad=True) for t in ours]
    out = OPS[name](*ours)
    # the same expression with ``dt`` meaning PyTorch
    tout = types.FunctionType(OPS[name].__code__, dict(OPS[name].__globals__, dt=torch))(*theirs)
    rng = np.random.default_rng(0)
    shape = tuple(out.shape)
    wt = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if out.dtype.is_complex else 0)
    loss = (out * dt.tensor(wt)).real.sum() if out.dtype.is_complex else (out * dt.tensor(wt)).sum()
    tloss = (tout * torch.tensor(wt)).real.sum() if tout.is_complex() else (tout * torch.tensor(wt)).sum()
    loss.backward()
    tloss.backward()
    for a, b in zip(ours, theirs):
        if b.grad is None:
            assert a.grad is None or not a.grad.numpy().any()
        else:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.resolve_conj().numpy(), rtol=1e-6, atol=1e-9)
            assert a.grad.dtype.name == str(b.grad.dtype).split(".")[1]


def test_leaf_grad_of_a_complex_tensor_is_complex():
    z = dt.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    (z * z).abs().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [2 + 4j, 6 - 2j], rtol=1e-6)
    assert z.grad.dtype == dt.complex64


def test_real_leaf_gets_the_real_part():
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    (x * (1 + 1j)).abs().sum().backward()
    assert x.grad.dtype == dt.float32
    np.testing.assert_allclose(x.grad.numpy(), [np.sqrt(2)] * 2, rtol=1e-6)


def test_gradcheck_catches_a_wrong_complex_gradient():
    class Wrong(dt.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return g * 2 * z  # missing the conjugate

    z = dt.tensor([1 + 2j], dtype=dt.complex128, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(Wrong.apply, (z,))


MATRIX_OPS = {
    "prod": lambda z, w: z.prod(1),
    "cumprod": lambda z, w: z.cumprod(0),
    "vdot": lambda z, w: dt.vdot(z[0], w[1]),
    "inner": lambda z, w: dt.inner(z, w),
    "einsum": lambda z, w: dt.einsum("ij,jk->ik", z, w),
    "tensordot": lambda z, w: dt.tensordot(z, w, 1),
    "linear": lambda z, w: dt.nn.functional.linear(z, w, w[0]),
    "det": lambda z, w: dt.linalg.det(z),
    "inv": lambda z, w: dt.linalg.inv(z),
    "solve": lambda z, w: dt.linalg.solve(z, w),
    "solve_right": lambda z, w: dt.linalg.solve(z, w, left=False),
    "slogdet": lambda z, w: dt.linalg.slogdet(z)[1],
    "var_std": lambda z, w: z.var() + w.std(0),
    "eigvalsh": lambda z, w: dt.linalg.eigvalsh(z + z.mH),
    "eigh_vectors": lambda z, w: dt.linalg.eigh(z + z.mH).eigenvectors.abs(),
    "svdvals": lambda z, w: dt.linalg.svdvals(z),
    "matrix_norms": lambda z, w: dt.linalg.matrix_norm(z, "nuc") + dt.linalg.matrix_norm(w, float("inf")),
    "matrix_exp": lambda z, w: dt.linalg.matrix_exp(z * 0.5),
}


def _matrices(lib=dt, seed=3):
    rng = np.random.default_rng(seed)
    z, w = (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)) for _ in range(2))
    return lib.tensor(z, requires_grad=True), lib.tensor(w, requires_grad=True)


@pytest.mark.parametrize("name", sorted(MATRIX_OPS))
def test_gradcheck_matrix_ops(name):
    assert gradcheck(MATRIX_OPS[name], _matrices())


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MATRIX_OPS))
def test_matrix_ops_match_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = _matrices(), _matrices(torch)
    out = MATRIX_OPS[name](*ours)
    tout = types.FunctionType(MATRIX_OPS[name].__code__, dict(MATRIX_OPS[name].__globals__, dt=torch))(
        *theirs
    )
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().resolve_conj().numpy(), rtol=1e-10)
    wt = np.random.default_rng(4).standard_normal(tuple(out.shape) + (2,)).view(np.complex128)[..., 0]
    if out.dtype.is_complex:
        (out * dt.tensor(wt)).real.sum().backward()
        (tout * torch.tensor(wt)).real.sum().backward()
    else:
        (out * dt.tensor(wt.real)).sum().backward()
        (tout * torch.tensor(wt.real)).sum().backward()
    for a, b in zip(ours, theirs):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.resolve_conj().numpy(), rtol=1e-8, atol=1e-10)


def _svd_loss(L, a):
    """A function of a complex SVD that does not depend on the singular vectors' phases."""
    u, s, vh = L.linalg.svd(a, full_matrices=False)
    weights = L.arange(vh.shape[-1], dtype=L.float64)
    return (u.abs() ** 3).sum() + (vh.abs() ** 2 * weights).sum() + s.sum()


def _svd_matrix(L, shape):
    rng = np.random.default_rng(sum(shape))
    return L.tensor(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (3, 3)])
def test_complex_svd_vectors_first_and_second_derivatives(shape):
    a = _svd_matrix(dt, shape)
    assert gradcheck(lambda x: _svd_loss(dt, x), (a,))
    assert dt.autograd.gradgradcheck(lambda x: _svd_loss(dt, x), (a,))


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(4, 3), (3, 5)])
def test_complex_svd_double_backward_matches_pytorch(torch, shape):
    out = []
    for L in (dt, torch):
        a = _svd_matrix(L, shape)
        (g,) = L.autograd.grad(_svd_loss(L, a), a, create_graph=True)
        (gg,) = L.autograd.grad((g.abs() ** 2).sum(), a)
        out.append((g.detach().numpy(), gg.numpy()))
    for ours, theirs in zip(*out):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_complex_svd_loss_depending_on_phase_raises_as_pytorch():
    u = dt.linalg.svd(_svd_matrix(dt, (4, 3)), full_matrices=False).U
    with pytest.raises(RuntimeError, match=r"specified up to multiplication by e\^\{i phi\}"):
        u[0, 0].real.backward()


SECOND_ORDER = {
    "abs": lambda L, z: z.abs().sum(),
    "exp_conj": lambda L, z: (z.exp() * z.conj()).real.sum(),
    "fft": lambda L, z: (L.fft.fft(z * z) * L.fft.fft(z).conj()).real.sum(),
    "rfft": lambda L, z: L.fft.rfft(z.real).abs().square().sum(),
    "irfft": lambda L, z: (L.fft.irfft(z * z) ** 2).sum(),
    "sin": lambda L, z: (z.sin() * z).imag.sum(),
    "angle": lambda L, z: (z.angle() ** 2).sum(),
    "sgn": lambda L, z: (z.sgn() * z).real.sum(),
    "div": lambda L, z: (1 / (z + 3)).real.sum(),
    "complex": lambda L, z: L.complex(z.real**2, z.imag * z.real).abs().sum(),
    "matmul": lambda L, z: (z.reshape(5, 1) @ (z * z).reshape(1, 5)).real.sum(),
    "polar": lambda L, z: L.polar(z.real**2 + 1, z.imag).real.sum(),
    "view_as_real": lambda L, z: (L.view_as_real(z * z) ** 2).sum(),
    "stft": lambda L, z: (
        L.stft(
            z.real.repeat(4), 8, hop_length=2, window=L.hann_window(8, dtype=L.float64), return_complex=True
        )
        .abs()
        .square()
        .sum()
    ),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_gradients_match_pytorch(name):
    """``create_graph=True`` through complex ops: the gradient of |grad|^2 equals PyTorch's."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal(5)
    z0 = x + 1j * x[::-1]

    def grad_norm(lib, z):
        (g,) = lib.autograd.grad(SECOND_ORDER[name](lib, z), z, create_graph=True)
        return (g * g.conj()).real.sum()

    ours, theirs = dt.tensor(z0, requires_grad=True), torch.tensor(z0, requires_grad=True)
    grad_norm(dt, ours).backward()
    grad_norm(torch, theirs).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-8, atol=1e-10)


def _write_parts(L, x):
    y = x * 1
    y.real.mul_(2)
    y.imag[0] = 5
    w = L.view_as_real(y)
    w[1, 1] = 7.0
    w[2].add_(w[0] * 1)
    y.mul_(1j)
    y.conj_physical_()
    return (y.abs() ** 2 + y.real * y.imag).sum()


def _zero_imag_after_use(L, x):
    y = x * 2
    r = y.real
    y.imag.zero_()
    return (r * 2).sum() + y.abs().sum()


def _assign_parts(L, x):
    y = x.clone()
    y.real = x.imag * 2
    y.imag.copy_(x.real**2)
    return (y * y).real.sum()


@pytest.mark.parametrize("fn", [_write_parts, _zero_imag_after_use, _assign_parts], ids=lambda f: f.__name__)
def test_in_place_writes_through_real_views_keep_gradients(fn):
    """In-place ops on ``.real``/``.imag``/``view_as_real`` of a complex tensor in the graph:
    the base is rebased (as PyTorch's CopySlices), checked by gradcheck and against PyTorch."""
    z0 = np.array([1 + 2j, -1 + 0.5j, 3 - 1j])
    assert gradcheck(lambda x: fn(dt, x), (dt.tensor(z0, requires_grad=True),))
    torch = pytest.importorskip("torch")
    ours, theirs = dt.tensor(z0, requires_grad=True), torch.tensor(z0, requires_grad=True)
    fn(dt, ours).backward()
    fn(torch, theirs).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)


def test_backward_of_a_complex_scalar_needs_a_gradient():
    z = dt.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="only for real scalar outputs but got disttorch.complex64"):
        (z * 2).sum().backward()
    (z * 2).sum().backward(dt.tensor(1j))
    assert z.grad.tolist() == [2j]
