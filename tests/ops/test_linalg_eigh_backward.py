"""linalg.eigh's backward projects V^T gV onto the skew-symmetric matrices (PyTorch's
linalg_eig_backward for Hermitian input), so a real symmetric input gets a symmetric gradient."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck


def _sym_input():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3))
    return dt.tensor(a @ a.T + 3 * np.eye(3), requires_grad=True)


def _loss(s):
    w, v = dt.linalg.eigh(s)
    return (v @ dt.diag(w) @ v.T).sum() + w.pow(2).sum() + (v[:, 0] * v[:, 1].abs()).sum()


def test_eigh_gradient_of_a_symmetric_input_is_symmetric():
    s = _sym_input()
    (g,) = dt.autograd.grad(_loss(s), s, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), g.detach().numpy().T, atol=1e-10)
    (g2,) = dt.autograd.grad(g[0, 1], s)
    np.testing.assert_allclose(g2.numpy(), g2.numpy().T, atol=1e-10)


def test_eigh_gradcheck_through_a_symmetrised_input():
    s = _sym_input()
    assert gradcheck(lambda x: _loss((x + x.T) / 2), (s,))
    assert gradgradcheck(lambda x: dt.linalg.eigh((x + x.T) / 2)[1].pow(3).sum(), (s,))


@pytest.mark.parity
def test_eigh_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    out = []
    for lib in (torch, dt):
        s = lib.tensor(_sym_input().detach().numpy(), requires_grad=True)
        w, v = lib.linalg.eigh(s)
        loss = (v @ lib.diag(w) @ v.T).sum() + w.pow(2).sum()
        (g,) = lib.autograd.grad(loss, s, create_graph=True)
        (g2,) = lib.autograd.grad(g[0, 1] + g[2, 0], s)
        out.append((g.detach().numpy(), g2.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6, atol=1e-8)
