"""torch.geqrf, torch.orgqr and torch.ormqr: LAPACK's Householder QR and products with Q
(values, reconstruction, gradients, errors, parity with PyTorch)."""

import numpy as np
import pytest

import disttorch as dt

RNG = np.random.default_rng(22)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_geqrf_encodes_a_qr_decomposition(shape):
    a = RNG.normal(size=shape)
    h, tau = dt.geqrf(dt.tensor(a))
    assert type(h) is dt.Tensor and h.shape == shape and tau.shape == shape[:-2] + (min(shape[-2:]),)
    assert type(dt.geqrf(dt.tensor(a))).__name__ == "geqrf"
    m, n = shape[-2:]
    k = min(m, n)
    r = np.triu(h.numpy())[..., :k, :]
    eye = dt.tensor(np.broadcast_to(np.eye(m, k), shape[:-2] + (m, k)).copy())
    q = dt.ormqr(h, tau, eye)  # the first k columns of Q
    np.testing.assert_allclose((q @ dt.tensor(r)).numpy(), a, atol=1e-12)
    np.testing.assert_allclose(
        (q.mT @ q).numpy(), np.broadcast_to(np.eye(k), shape[:-2] + (k, k)), atol=1e-12
    )


def test_orgqr_is_householder_product_and_a_tensor_method():
    a = RNG.normal(size=(5, 3))
    h, tau = dt.geqrf(dt.tensor(a))
    q = dt.orgqr(h, tau)
    np.testing.assert_allclose(q.numpy(), dt.linalg.householder_product(h, tau).numpy())
    np.testing.assert_allclose(h.orgqr(tau).numpy(), q.numpy())
    qn, rn = np.linalg.qr(a)
    np.testing.assert_allclose(np.abs(q.numpy()), np.abs(qn), atol=1e-12)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
def test_ormqr_matches_the_explicit_product(left, transpose):
    a = RNG.normal(size=(4, 4))
    h, tau = dt.geqrf(dt.tensor(a))
    q = dt.orgqr(h, tau).numpy()
    op = q.T if transpose else q
    c = RNG.normal(size=(4, 2) if left else (2, 4))
    got = dt.ormqr(h, tau, dt.tensor(c), left, transpose).numpy()
    np.testing.assert_allclose(got, op @ c if left else c @ op, atol=1e-12)
    np.testing.assert_allclose(h.ormqr(tau, dt.tensor(c), left=left, transpose=transpose).numpy(), got)


def test_ormqr_and_orgqr_gradcheck():
    h, tau = dt.geqrf(dt.tensor(RNG.normal(size=(4, 3))))
    h = h.detach().requires_grad_()
    tau = tau.detach().requires_grad_()
    c = dt.tensor(RNG.normal(size=(4, 2)), requires_grad=True)
    c2 = dt.tensor(RNG.normal(size=(2, 4)), requires_grad=True)
    assert dt.autograd.gradcheck(lambda a, t, o: dt.ormqr(a, t, o), (h, tau, c))
    assert dt.autograd.gradcheck(lambda a, t, o: dt.ormqr(a, t, o, left=False, transpose=True), (h, tau, c2))
    assert dt.autograd.gradcheck(dt.orgqr, (h, tau))


def test_geqrf_has_no_derivative_as_in_pytorch():
    a = dt.tensor(RNG.normal(size=(3, 3)), requires_grad=True)
    h, tau = dt.geqrf(a)
    with pytest.raises(NotImplementedError, match="derivative for 'geqrf' is not implemented"):
        h.sum().backward()


def test_errors():
    h, tau = dt.geqrf(dt.tensor(RNG.normal(size=(4, 3))))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        dt.geqrf(dt.ones(3))
    with pytest.raises(NotImplementedError, match="Long"):
        dt.geqrf(dt.tensor([[1, 2], [3, 4]]))
    with pytest.raises(RuntimeError, match=r"other.shape\[-2\] must be equal to input.shape\[-2\]"):
        dt.ormqr(h, tau, dt.ones(3, 2, dtype=dt.float64))
    with pytest.raises(RuntimeError, match=r"other.shape\[-1\] must be equal to input.shape\[-2\]"):
        dt.ormqr(h, tau, dt.ones(3, 2, dtype=dt.float64), left=False)
    with pytest.raises(RuntimeError, match="same dtype"):
        dt.ormqr(h, tau, dt.ones(4, 2))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        dt.ormqr(h, tau, dt.ones(2, 4, 2, dtype=dt.float64))
    with pytest.raises(RuntimeError, match="tau.shape"):
        dt.ormqr(h, dt.ones(5, dtype=dt.float64), dt.ones(4, 2, dtype=dt.float64))


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_parity_with_pytorch(torch, shape):
    a = RNG.normal(size=shape)
    h, tau = dt.geqrf(dt.tensor(a))
    th, ttau = torch.geqrf(torch.tensor(a))
    np.testing.assert_allclose(h.numpy(), th.numpy(), atol=1e-12)
    np.testing.assert_allclose(tau.numpy(), ttau.numpy(), atol=1e-12)
    m = shape[-2]
    for left in (True, False):
        for transpose in (False, True):
            c = RNG.normal(size=shape[:-2] + ((m, 2) if left else (2, m)))
            hh = h.detach().requires_grad_()
            tt = tau.detach().requires_grad_()
            cc = dt.tensor(c, requires_grad=True)
            out = dt.ormqr(hh, tt, cc, left, transpose)
            thh, ttt = th.clone().requires_grad_(), ttau.clone().requires_grad_()
            tcc = torch.tensor(c, requires_grad=True)
            tout = torch.ormqr(thh, ttt, tcc, left, transpose)
            np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-12)
            w = RNG.normal(size=tuple(out.shape))
            (out * dt.tensor(w)).sum().backward()
            (tout * torch.tensor(w)).sum().backward()
            for ours, theirs in ((hh, thh), (tt, ttt), (cc, tcc)):
                np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-10)
