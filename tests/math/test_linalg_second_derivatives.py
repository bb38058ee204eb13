"""Second derivatives of ``linalg.det`` at a singular matrix (PyTorch's adjugate from the SVD,
differentiable again) and of a wide ``linalg.qr`` (``m < n``), which a recorded backward
now composes from differentiable ops as PyTorch does."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradgradcheck

SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2, distinct s
BATCH = np.stack([SINGULAR, SINGULAR + np.eye(3)])  # a singular and an invertible matrix
WIDE = np.random.default_rng(4).standard_normal((2, 2, 3))


def test_det_differentiable_twice_at_a_singular_matrix():
    assert dt.linalg.det(dt.tensor(SINGULAR)).item() == 0
    for a in (SINGULAR, BATCH, np.array([[1.0, 2.0], [2.0, 4.0]])):
        assert gradgradcheck(dt.linalg.det, (dt.tensor(a, requires_grad=True),))


@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_wide_qr_differentiable_twice(mode):
    def f(a):
        q, r = dt.linalg.qr(a, mode=mode)
        return q.sin(), r  # (a loss of Q whose gauge does not matter: Q is unique given R's diagonal)

    assert gradgradcheck(f, (dt.tensor(WIDE, requires_grad=True),))


def _second_derivatives(T) -> list:
    out = []
    for a0 in (SINGULAR, BATCH):
        a = T.tensor(a0, requires_grad=True)
        (g,) = T.autograd.grad(T.linalg.det(a).sum(), a, create_graph=True)
        out += [g.detach(), *T.autograd.grad((g * g).sum(), a)]
    for mode in ("reduced", "complete"):
        a = T.tensor(WIDE, requires_grad=True)
        q, r = T.linalg.qr(a, mode=mode)
        (g,) = T.autograd.grad(q.sin().sum() + (r * r).sum(), a, create_graph=True)
        out += [g.detach(), *T.autograd.grad((g * g).sum(), a)]
    return [t.numpy() for t in out]


@pytest.mark.parity
def test_second_derivatives_as_pytorch(torch):
    for ours, theirs in zip(_second_derivatives(dt), _second_derivatives(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)
