"""``grid_sample``'s bilinear (trilinear) backward is differentiable again, w.r.t. the input,
the grid and the incoming gradient, as PyTorch's ``grid_sampler_2d_backward``; forward-mode AD
raises PyTorch's ``NotImplementedError`` (it has no forward rule for ``grid_sampler_2d``)."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradgradcheck

rng = np.random.default_rng(9)
X2, G2 = rng.standard_normal((1, 2, 3, 3)), rng.uniform(-1.2, 1.2, (1, 2, 2, 2))
X3, G3 = rng.standard_normal((1, 1, 2, 3, 3)), rng.uniform(-1.2, 1.2, (1, 1, 2, 2, 3))
SMALL = {2: (X2[:, :1, :2], G2[:, :1]), 3: (X3[..., :2, :2], G3[:, :, :1])}
PADDINGS = ("zeros", "border", "reflection")


def _sample(T, padding: str, align: bool):
    return lambda x, g: T.nn.functional.grid_sample(x, g, padding_mode=padding, align_corners=align)


@pytest.mark.parametrize(
    "padding, align, d",
    [("zeros", False, 2), ("border", True, 2), ("reflection", False, 2), ("zeros", True, 3)],
)
def test_bilinear_gradgradcheck(padding, align, d):
    x, g = (dt.tensor(a, requires_grad=True) for a in SMALL[d])
    assert gradgradcheck(_sample(dt, padding, align), (x, g))


def test_forward_ad_raises_as_pytorch_has_no_forward_rule():
    x, g = dt.tensor(X2), dt.tensor(G2)
    with pytest.raises(NotImplementedError, match="forward AD with grid_sampler_2d"):
        dt.func.jacfwd(_sample(dt, "zeros", False), argnums=1)(x, g)


def _second_derivatives(T) -> list:
    out = []
    for padding in PADDINGS:
        for x0, g0 in ((X2, G2), (X3, G3)):
            x, g = T.tensor(x0, requires_grad=True), T.tensor(g0, requires_grad=True)
            gx, gg = T.autograd.grad(_sample(T, padding, False)(x, g).pow(2).sum(), (x, g), create_graph=True)
            out += [t.numpy() for t in T.autograd.grad((gx * gx).sum() + gg.sum(), (x, g))]
    return out


@pytest.mark.parity
def test_second_derivatives_as_pytorch(torch):
    for ours, theirs in zip(_second_derivatives(dt), _second_derivatives(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
