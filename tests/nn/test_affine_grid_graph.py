"""``affine_grid``'s node keeps no saved tensors (as PyTorch's ``AffineGridGeneratorBackward0``):
a graph through one grid may be walked again after a backward; its gradients, first and second
order, in float64."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
import disttorch.nn.functional as F
from disttorch.autograd import gradcheck, gradgradcheck

THETA_2D = [[[0.9, 0.1, 0.05], [-0.1, 1.1, 0.0]], [[1.2, -0.3, 0.1], [0.2, 0.8, -0.2]]]


def _theta(lib, values=THETA_2D):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _two_backwards(lib) -> list:
    theta = _theta(lib)
    grid = lib.nn.functional.affine_grid(theta, (2, 1, 3, 4), align_corners=False)
    x = lib.arange(24.0, dtype=lib.float64).reshape(2, 1, 3, 4)
    grads = []
    for mode in ("bilinear", "bicubic"):
        out = lib.nn.functional.grid_sample(x, grid, mode=mode, align_corners=False)
        (g,) = lib.autograd.grad(out.pow(2).sum(), theta)
        grads.append(g.detach().numpy())
    return grads


def test_a_grid_can_be_backpropagated_through_twice():
    first, second = _two_backwards(dt)
    assert np.abs(first).sum() > 0 and np.abs(second).sum() > 0


def test_the_node_is_pytorchs_and_leads_to_theta():
    theta = _theta(dt)
    grid = F.affine_grid(theta, (2, 1, 3, 4), align_corners=True)
    assert grid.grad_fn.name() == "AffineGridGeneratorBackward0"
    assert type(grid.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"


@pytest.mark.parametrize("size", [(2, 1, 3, 4), (2, 2, 2, 3, 4)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_gradients_float64(size, align_corners):
    rng = np.random.default_rng(0)
    dims = len(size) - 2
    theta = dt.tensor(rng.standard_normal((2, dims, dims + 1)), requires_grad=True)

    def grid(t):
        return F.affine_grid(t, size, align_corners=align_corners).pow(2)

    assert gradcheck(grid, (theta,))
    assert gradgradcheck(grid, (theta,))


@pytest.mark.parity
def test_two_backwards_through_one_grid_match_pytorch():
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_two_backwards(dt), _two_backwards(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
