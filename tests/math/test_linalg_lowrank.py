"""torch.svd_lowrank, torch.pca_lowrank and torch.lobpcg: exactness on low-rank input,
centering, sparse input, eigenpairs of standard and generalised problems, gradients, errors,
parity with PyTorch."""

import numpy as np
import pytest

import disttorch as dt

RNG = np.random.default_rng(23)
LOW = RNG.normal(size=(20, 4)) @ RNG.normal(size=(4, 15))  # rank 4


def _spd(m, lo=1.0, hi=50.0, seed=0):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(m, m)))
    return (q * np.linspace(lo, hi, m)) @ q.T


def _reconstruct(U, S, V):
    return ((U * S.unsqueeze(-2)) @ V.mT).numpy()


@pytest.mark.parametrize("a", [LOW, LOW.T], ids=["tall", "wide"])
def test_svd_lowrank_is_exact_for_low_rank_input(a):
    U, S, V = dt.svd_lowrank(dt.tensor(a), q=6)
    m, n = a.shape
    assert U.shape == (m, 6) and S.shape == (6,) and V.shape == (n, 6)
    np.testing.assert_allclose(S.numpy()[:4], np.linalg.svd(a, compute_uv=False)[:4], rtol=1e-10)
    np.testing.assert_allclose(_reconstruct(U, S, V), a, atol=1e-10)
    np.testing.assert_allclose((U.mT @ U).numpy(), np.eye(6), atol=1e-10)


def test_svd_lowrank_with_M_and_batches():
    a = np.stack([LOW, 2 * LOW])
    mean = a.mean(-2, keepdims=True)
    U, S, V = dt.svd_lowrank(dt.tensor(a), q=5, M=dt.tensor(mean))
    np.testing.assert_allclose(_reconstruct(U, S, V), a - mean, atol=1e-10)


def test_pca_lowrank_centers_and_matches_exact_svd():
    U, S, V = dt.pca_lowrank(dt.tensor(LOW))
    assert S.shape == (6,)
    centered = LOW - LOW.mean(0)
    np.testing.assert_allclose(S.numpy()[:4], np.linalg.svd(centered, compute_uv=False)[:4], rtol=1e-10)
    np.testing.assert_allclose(_reconstruct(U, S, V), centered, atol=1e-10)
    U, S, V = dt.pca_lowrank(dt.tensor(LOW), q=4, center=False)
    np.testing.assert_allclose(_reconstruct(U, S, V), LOW, atol=1e-10)


def test_lowrank_accepts_sparse_input():
    sp = dt.tensor(LOW).to_sparse()
    U, S, V = dt.svd_lowrank(sp, q=4)
    np.testing.assert_allclose(_reconstruct(U, S, V), LOW, atol=1e-10)
    U, S, V = dt.pca_lowrank(sp, q=4)
    np.testing.assert_allclose(_reconstruct(U, S, V), LOW - LOW.mean(0), atol=1e-10)


def test_svd_lowrank_gradcheck_with_a_fixed_seed():
    a = dt.tensor(RNG.normal(size=(6, 2)) @ RNG.normal(size=(2, 5)), requires_grad=True)

    def singular_values(x):
        dt.manual_seed(0)
        return dt.svd_lowrank(x, q=3, niter=1)[1][:2]

    assert dt.autograd.gradcheck(singular_values, (a,))


def test_lowrank_errors():
    with pytest.raises(ValueError, match="must be non-negative integer and not greater than"):
        dt.pca_lowrank(dt.tensor(LOW), q=16)
    with pytest.raises(ValueError, match="niter"):
        dt.pca_lowrank(dt.tensor(LOW), niter=-1)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        dt.svd_lowrank(dt.ones(3))


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_finds_the_extreme_eigenpairs(method, largest):
    a = _spd(30)
    E, X = dt.lobpcg(dt.tensor(a), k=3, largest=largest, method=method)
    ref = np.linalg.eigvalsh(a)
    ref = ref[::-1][:3] if largest else ref[:3]
    np.testing.assert_allclose(E.numpy(), ref, rtol=1e-10)
    assert X.shape == (30, 3)
    np.testing.assert_allclose(a @ X.numpy(), X.numpy() * E.numpy(), atol=1e-6)
    np.testing.assert_allclose(X.numpy().T @ X.numpy(), np.eye(3), atol=1e-10)


def test_lobpcg_generalised_batched_preconditioned_and_sparse():
    a = _spd(24)
    m = RNG.normal(size=(24, 24))
    b = m @ m.T / 24 + np.eye(24)
    E, X = dt.lobpcg(dt.tensor(np.stack([a, 3 * a])), k=2, B=dt.tensor(np.stack([b, b])))
    lc = np.linalg.cholesky(b)
    li = np.linalg.inv(lc)
    ref = np.linalg.eigvalsh(li @ a @ li.T)[::-1][:2]
    np.testing.assert_allclose(E.numpy(), np.stack([ref, 3 * ref]), rtol=1e-9)
    x = X.numpy()[0]
    np.testing.assert_allclose(x.T @ b @ x, np.eye(2), atol=1e-9)
    E2, _ = dt.lobpcg(dt.tensor(a), k=2, iK=dt.tensor(np.diag(1 / np.diag(a))))
    np.testing.assert_allclose(E2.numpy(), np.linalg.eigvalsh(a)[::-1][:2], rtol=1e-10)
    dt.ones(2, dtype=dt.bfloat16)  # once a 16-bit tensor exists, apply inspects every tensor argument
    E3, _ = dt.lobpcg(dt.tensor(a).to_sparse(), k=2, X=dt.tensor(RNG.normal(size=(24, 3))))
    np.testing.assert_allclose(E3.numpy(), np.linalg.eigvalsh(a)[::-1][:2], rtol=1e-10)
    sparse_eye = dt.eye(24, dtype=dt.float64).to_sparse()
    E4, _ = dt.lobpcg(dt.tensor(a), k=2, B=sparse_eye, iK=sparse_eye)
    np.testing.assert_allclose(E4.numpy(), np.linalg.eigvalsh(a)[::-1][:2], rtol=1e-10)


def test_lobpcg_gradient_is_the_eigendecomposition_gradient():
    a = _spd(15, seed=3)
    w = RNG.normal(size=(15, 2))
    x0 = dt.tensor(RNG.normal(size=(15, 2)))
    A = dt.tensor(a, requires_grad=True)
    E, X = dt.lobpcg(A, k=2, X=x0, tol=1e-12)
    A2 = dt.tensor(a, requires_grad=True)
    e, v = dt.linalg.eigh((A2 + A2.mT) / 2)
    v = v[:, [-1, -2]]
    sign = dt.tensor(np.sign((X.detach().numpy() * v.detach().numpy()).sum(0)))
    (E.sum() + (X * dt.tensor(w)).sum()).backward()
    (e[[-1, -2]].sum() + (v * sign * dt.tensor(w)).sum()).backward()
    np.testing.assert_allclose(A.grad.numpy(), A2.grad.numpy(), atol=1e-7)


def test_lobpcg_eigenvalue_gradcheck():
    a = dt.tensor(_spd(9, seed=4), requires_grad=True)
    x0 = dt.tensor(RNG.normal(size=(9, 2)))
    assert dt.autograd.gradcheck(lambda t: dt.lobpcg(t, k=2, X=x0, tol=1e-13, niter=500)[0], (a,))


def test_lobpcg_errors():
    with pytest.raises(AssertionError, match="A must be square"):
        dt.lobpcg(dt.ones(3, 4))
    with pytest.raises(ValueError, match="3 x the number of requested eigenpairs"):
        dt.lobpcg(dt.tensor(_spd(9)), k=4)
    with pytest.raises(ValueError, match="method"):
        dt.lobpcg(dt.tensor(_spd(9)), method="fast")
    with pytest.raises(AssertionError, match="X shape mismatch"):
        dt.lobpcg(dt.tensor(_spd(9)), X=dt.ones(8, 2, dtype=dt.float64))
    with pytest.raises(AssertionError, match="same shape"):
        dt.lobpcg(dt.tensor(_spd(9)), B=dt.eye(8, dtype=dt.float64))


@pytest.mark.parity
def test_parity_with_pytorch(torch):
    for a, q in ((LOW, 6), (LOW.T, 5)):
        S = dt.svd_lowrank(dt.tensor(a), q=q)[1]
        tS = torch.svd_lowrank(torch.tensor(a), q=q)[1]
        np.testing.assert_allclose(S.numpy()[:4], tS.numpy()[:4], rtol=1e-10)
    np.testing.assert_allclose(
        dt.pca_lowrank(dt.tensor(LOW))[1].numpy()[:4],
        torch.pca_lowrank(torch.tensor(LOW))[1].numpy()[:4],
        rtol=1e-10,
    )
    a = _spd(30, seed=5)
    x0 = RNG.normal(size=(30, 3))
    for method in ("ortho", "basic"):
        for largest in (True, False):
            A = dt.tensor(a, requires_grad=True)
            tA = torch.tensor(a, requires_grad=True)
            E, X = dt.lobpcg(A, k=2, X=dt.tensor(x0), largest=largest, method=method, tol=1e-12)
            tE, tX = torch.lobpcg(tA, k=2, X=torch.tensor(x0), largest=largest, method=method, tol=1e-12)
            np.testing.assert_allclose(E.detach().numpy(), tE.detach().numpy(), rtol=1e-10)
            sign = np.sign((X.detach().numpy() * tX.detach().numpy()).sum(0))
            np.testing.assert_allclose(X.detach().numpy() * sign, tX.detach().numpy(), atol=1e-6)
            w = RNG.normal(size=(30, 2))
            (E.sum() + (X * dt.tensor(w * sign)).sum()).backward()
            (tE.sum() + (tX * torch.tensor(w)).sum()).backward()
            np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), atol=1e-6)
