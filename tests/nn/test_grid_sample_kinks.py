"""``affine_grid``/``grid_sample`` where the bilinear gradient jumps: grid points exactly on
pixel centres (an identity spatial transformer at the start of training) and on the
border of a clamped axis. PyTorch's gradient there depends on which side of the centre its
rounding puts the point and on its clamping rule; disttorch rounds and clamps the same."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch.nn import functional as DF

rng = np.random.default_rng(2)
IDENTITY_AND_STRETCH = [[[1.0, 0, 0], [0, 1.0, 0]], [[0.5, 0, 0.5], [0, 2.0, -1.0]]]


def test_border_points_get_no_gradient_and_nearest_gives_zeros():
    """A coordinate clamped onto the border, or lying on it, is outside for the gradient
    (PyTorch's rule; ``clamp`` would pass it); nearest sampling gives the grid zeros."""
    x = dt.tensor(
        rng.standard_normal((1, 1, 4, 4)), dtype=dt.float32
    )  # (the grid's dtype, as PyTorch requires)
    grid = dt.tensor([[[[-1.0, 0.3], [1.0, -0.2], [1.5, 0.1], [0.2, 0.4]]]], requires_grad=True)
    DF.grid_sample(x, grid, padding_mode="border", align_corners=True).sum().backward()
    g = grid.grad.numpy()[0, 0]
    assert g[0, 0] == 0 and g[1, 0] == 0 and g[2, 0] == 0 and g[3, 0] != 0
    grid.grad = None
    DF.grid_sample(x, grid, mode="nearest").sum().backward()
    assert grid.grad is not None and not grid.grad.numpy().any()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_spatial_transformer_gradients_match_pytorch(torch, dtype, padding, align_corners):
    for h, w in ((7, 9), (28, 28), (13, 6)):
        x = rng.standard_normal((2, 3, h, w)).astype(dtype)
        theta = np.array(IDENTITY_AND_STRETCH, dtype=dtype)
        weights = np.cos(np.arange(2 * 3 * h * w)).reshape(2, 3, h, w).astype(dtype)
        results = []
        for lib in (torch, dt):
            th = lib.tensor(theta, requires_grad=True)
            xi = lib.tensor(x, requires_grad=True)
            grid = lib.nn.functional.affine_grid(th, (2, 3, h, w), align_corners=align_corners)
            out = lib.nn.functional.grid_sample(xi, grid, padding_mode=padding, align_corners=align_corners)
            (out * lib.tensor(weights)).sum().backward()
            results.append((grid.detach().numpy(), out.detach().numpy(), xi.grad.numpy(), th.grad.numpy()))
        (grid_t, out_t, gx_t, gth_t), (grid_d, out_d, gx_d, gth_d) = results
        assert np.array_equal(grid_d, grid_t)  # the base grid is PyTorch's to the bit
        tol = 1e-4 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(out_d, out_t, rtol=tol, atol=tol)
        np.testing.assert_allclose(gx_d, gx_t, rtol=tol, atol=tol)
        np.testing.assert_allclose(gth_d, gth_t, rtol=tol, atol=tol * np.abs(gth_t).max())


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_volumetric_grid_gradients_match_pytorch(torch, padding):
    x = rng.standard_normal((2, 2, 5, 6, 7))
    theta = np.array([np.eye(3, 4), [[0.5, 0, 0, 0.5], [0, 2.0, 0, -1.0], [0, 0, 1.5, 0.2]]])
    grid = torch.nn.functional.affine_grid(torch.tensor(theta), (2, 2, 5, 6, 7), align_corners=False).numpy()
    grads = []
    for lib in (torch, dt):
        g = lib.tensor(grid, requires_grad=True)
        out = lib.nn.functional.grid_sample(lib.tensor(x), g, padding_mode=padding, align_corners=False)
        (out * lib.tensor(np.sin(np.arange(out.numel())).reshape(tuple(out.shape)))).sum().backward()
        grads.append(g.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-10)


def test_affine_grid_float32_points_are_pytorchs_small_bmm():
    """``affine_grid`` is PyTorch's ``bmm`` of the base grid by ``thetaᵀ``: for a small grid
    its plain float32 loop (``(x * t0 + y * t1) + t2``, each step rounded), so a point that
    lands just inside a pixel border in PyTorch lands there too (a rotated 5x5 grid: BLAS
    put 3 of its 50 coordinates an ulp away, and the gradient of ``theta`` changed sign)."""
    theta = np.array([[[1.0, 0.1, 0.2], [-0.1, 0.9, 0.0]]], np.float32)
    grid = DF.affine_grid(dt.tensor(theta), (1, 3, 5, 5), align_corners=False).numpy()
    c = ((np.arange(5, dtype=np.float32) * np.float32(0.5) - np.float32(1)) * np.float32(4)) / np.float32(5)
    x, y = np.meshgrid(c, c, indexing="xy")
    for j in range(2):
        want = (np.float32(0) + x * theta[0, j, 0]) + y * theta[0, j, 1]
        want = want + theta[0, j, 2]
        assert np.array_equal(grid[0, ..., j], want)


def test_affine_grid_then_border_sampling_gradient_matches_pytorch(torch):
    x = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    theta = np.array([[[1.0, 0.1, 0.2], [-0.1, 0.9, 0.0]]], np.float32)
    grads = []
    for lib in (dt, torch):
        th = lib.tensor(theta, requires_grad=True)
        g = lib.nn.functional.affine_grid(th, (1, 3, 5, 5), align_corners=False)
        lib.nn.functional.grid_sample(
            lib.tensor(x), g, padding_mode="border", align_corners=False
        ).sum().backward()
        grads.append(th.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5)
