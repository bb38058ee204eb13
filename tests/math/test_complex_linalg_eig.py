"""``linalg.eig``/``eigvals`` of general matrices: complex eigenvalues and unit-norm
eigenvectors (PyTorch's values and dtypes), complex inputs, gradients (gradcheck and
PyTorch's), and the error for a loss that depends on the eigenvectors' phase."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck


def _matrix(shape=(4, 4), seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if complex_ else a


def test_decomposition_and_dtypes():
    a = dt.tensor(_matrix((3, 4, 4)))
    w, v = dt.linalg.eig(a)
    assert w.shape == (3, 4) and v.shape == (3, 4, 4) and w.dtype == dt.complex128
    np.testing.assert_allclose((a.cdouble() @ v).numpy(), (v * w.unsqueeze(-2)).numpy(), atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(v.numpy(), axis=-2), 1, rtol=1e-12)
    assert dt.linalg.eigvals(a.float()).dtype == dt.complex64
    c = dt.tensor(_matrix(complex_=True)).to(dt.complex64)
    assert dt.linalg.eig(c).eigenvalues.dtype == dt.complex64


def test_errors():
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        dt.linalg.eig(dt.ones(2, 3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        dt.linalg.eigvals(dt.ones(2, 2, dtype=dt.int64))
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        dt.linalg.eig(dt.tensor([[1.0, float("nan")], [0.0, 1.0]]))
    a = dt.tensor(_matrix(), requires_grad=True)
    with pytest.raises(RuntimeError, match="specified up to multiplication by e\\^\\{i phi\\}"):
        dt.linalg.eig(a).eigenvectors.real.sum().backward()


@pytest.mark.parametrize("complex_", [False, True])
def test_gradcheck(complex_):
    a = dt.tensor(_matrix(seed=1, complex_=complex_), requires_grad=True)
    assert gradcheck(dt.linalg.eigvals, (a,))
    assert gradcheck(lambda x: dt.linalg.eig(x).eigenvectors.abs(), (a,))


@pytest.mark.parity
@pytest.mark.parametrize("complex_", [False, True])
def test_matches_pytorch(complex_):
    torch = pytest.importorskip("torch")
    x = _matrix((2, 4, 4), seed=2, complex_=complex_)
    a, ta = dt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (w, v), (tw, tv) = dt.linalg.eig(a), torch.linalg.eig(ta)
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(v.detach().numpy(), tv.detach().numpy(), atol=1e-10)

    def loss(w, v, lib):
        return (
            (w * w).real.sum()
            + w.imag.abs().sum()
            + (v.abs() ** 2 * lib.arange(4.0, dtype=lib.float64)).sum()
        )

    loss(w, v, dt).backward()
    loss(tw, tv, torch).backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), atol=1e-9)
