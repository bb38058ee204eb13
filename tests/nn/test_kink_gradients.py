"""Gradients at kinks and ties as PyTorch's kernels give them (float64): hardtanh-style
activations pass none at their bounds, fmax/fmin give all of a tie to the first operand,
hinge_embedding_loss's clamp passes at 0, lp_pool's empty windows give 0, not NaN."""

import numpy as np
import pytest

import disttorch as dt

VALUES = [[0.0, -0.0, 1.0, -1.0], [0.5, 2.0, -3.0, 1.0]]

CASES = {
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "relu6": lambda L, x: L.nn.functional.relu6(x * 6),
    "hardsigmoid": lambda L, x: L.nn.functional.hardsigmoid(x * 3),
    "hardswish": lambda L, x: L.nn.functional.hardswish(x * 3),
    "fmax_ties": lambda L, x: L.fmax(x, L.zeros_like(x)),
    "fmin_ties": lambda L, x: L.fmin(x, x.flip(1).abs()),
    "hinge_boundary": lambda L, x: L.nn.functional.hinge_embedding_loss(x, -L.ones_like(x)),
    "lp_pool_zero_window": lambda L, x: L.nn.functional.lp_pool1d(x[None], 2, 2),
    "celu_negative_alpha": lambda L, x: L.nn.functional.celu(x, -1.0),
}


def _grad(L, name):
    x = L.tensor(VALUES, dtype=L.float64, requires_grad=True)
    y = CASES[name](L, x)
    y.backward(L.arange(1, y.numel() + 1, dtype=L.float64).reshape(y.shape))
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_at_kinks_as_pytorch(torch, name):
    (ty, tg), (dy, dg) = _grad(torch, name), _grad(dt, name)
    np.testing.assert_allclose(dy, ty, rtol=1e-12, atol=0)
    np.testing.assert_allclose(dg, tg, rtol=1e-7, atol=0)  # (PyTorch scales hardsigmoid by float32 1/6)
