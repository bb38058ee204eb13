"""Training-mode batch norm with bfloat16/float16 input and parameters
(``nn/functional/_batch_norm_16_bit``): the running statistics update, and PyTorch's roundings
of the statistics, output and gradients."""

import numpy as np
import pytest

import disttorch as dt


def test_bfloat16_running_statistics_are_updated():
    m = dt.nn.BatchNorm1d(4).bfloat16()
    x = dt.tensor(np.random.default_rng(0).standard_normal((8, 4)) + 3.0, dtype=dt.float32)
    m(x.bfloat16())
    assert m.running_mean.dtype == dt.bfloat16
    np.testing.assert_allclose(m.running_mean.float().numpy(), 0.1 * x.mean(0).numpy(), rtol=0.02)
    assert not np.all(m.running_var.float().numpy() == 1.0)


def _batch_norm(lib, shape):
    """Output, running statistics and gradients of a bfloat16 batch norm in training mode."""
    lib.manual_seed(0)
    cls = lib.nn.BatchNorm1d if len(shape) == 2 else lib.nn.BatchNorm2d
    m = cls(shape[1]).bfloat16()
    g = np.random.default_rng(len(shape))
    x = lib.tensor(g.standard_normal(shape), dtype=lib.float32).bfloat16().requires_grad_()
    out = m(x)
    out.backward(lib.tensor(g.standard_normal(shape), dtype=lib.float32).bfloat16())
    tensors = (out, m.running_mean, m.running_var, x.grad, m.weight.grad, m.bias.grad)
    return [t.detach().float().numpy() for t in tensors]


# (N, C) takes PyTorch's channels-last kernel; 2 * 33 * 17 values per channel is not a
# bfloat16 number (the variance divides by the count rounded to it)
@pytest.mark.parity
@pytest.mark.parametrize("shape", [(32, 16), (2, 3, 33, 17)])
def test_bfloat16_batch_norm_bits_as_pytorch(torch, shape):
    for ours, theirs in zip(_batch_norm(dt, shape), _batch_norm(torch, shape)):
        np.testing.assert_array_equal(ours, theirs)
