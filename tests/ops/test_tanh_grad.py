"""tanh's gradient kernel: the compiled loop (the ``fast`` extra) and the NumPy form give the same
bits, and both give PyTorch's ``tanh`` backward bits."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch.kernels import jit, tanh_grad


def _inputs() -> tuple:
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [rng.standard_normal(4093) * 3, [0.0, -0.0, 1e-30, 20.0, -20.0, np.inf, -np.inf, np.nan]]
    )
    g = rng.standard_normal(x.size)
    return x.astype(np.float32), g.astype(np.float32)


def test_compiled_and_numpy_forms_agree_bit_for_bit():
    if jit.compiled(tanh_grad._load) is None:
        pytest.skip("numba (the fast extra) is not installed")
    x, g = _inputs()
    y = np.tanh(x)
    fast = tanh_grad.tanh_grad(g, y)
    plain = g * tanh_grad.one_minus_square(y)
    assert fast.dtype == np.float32
    assert np.array_equal(fast.view(np.uint32), plain.view(np.uint32))


def test_backward_bits_as_pytorchs(torch):
    x, g = _inputs()
    ours = dt.tensor(x, requires_grad=True)
    dt.tanh(ours).backward(dt.tensor(g))
    theirs = torch.tensor(x, requires_grad=True)
    torch.tanh(theirs).backward(torch.tensor(g))
    y_ours, y_theirs = dt.tanh(dt.tensor(x)).numpy(), torch.tanh(torch.tensor(x)).numpy()
    same_y = y_ours.view(np.uint32) == y_theirs.view(np.uint32)  # the grads follow the outputs
    a, b = ours.grad.numpy()[same_y], theirs.grad.numpy()[same_y]
    assert same_y.mean() > 0.5
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))
