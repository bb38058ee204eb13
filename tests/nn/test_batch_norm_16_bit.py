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


def _batch_norm(lib, shape, dtype):
    """Output, running statistics and gradients of a 16-bit batch norm in training mode (two
    steps), and its output in evaluation mode."""
    lib.manual_seed(0)
    cls = lib.nn.BatchNorm1d if len(shape) == 2 else lib.nn.BatchNorm2d
    m = cls(shape[1]).to(getattr(lib, dtype))
    g = np.random.default_rng(len(shape))
    out = []
    for _ in range(2):
        x = (
            lib.tensor(g.standard_normal(shape) * 2 + 1, dtype=lib.float32)
            .to(getattr(lib, dtype))
            .requires_grad_()
        )
        y = m(x)
        y.backward(lib.tensor(g.standard_normal(shape), dtype=lib.float32).to(y.dtype))
        out += [y, m.running_mean, m.running_var, x.grad, m.weight.grad, m.bias.grad]
    out.append(m.eval()(x))
    return [t.detach().float().numpy() for t in out]


# (N, C) takes PyTorch's channels-last kernel; 2 * 33 * 17 values per channel is not a
# bfloat16 number (the variance divides by the count rounded to it). float16's kernel keeps
# the variance and the running statistics' update in float32 (it was a few ulps off)
@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(32, 16), (2, 3, 33, 17)])
def test_16_bit_batch_norm_bits_as_pytorch(torch, shape, dtype):
    for ours, theirs in zip(_batch_norm(dt, shape, dtype), _batch_norm(torch, shape, dtype)):
        if dtype == "bfloat16":
            np.testing.assert_array_equal(ours, theirs)
        else:  # (the input gradient's float32 sums: an ulp off in rare elements)
            assert np.mean(ours != theirs) < 0.002
            np.testing.assert_allclose(ours, theirs, rtol=2**-10, atol=2**-24)


def _eval_grads(lib, dtype):
    g = np.random.default_rng(3)
    m = lib.nn.BatchNorm2d(16).to(getattr(lib, dtype)).eval()
    x = lib.tensor(g.standard_normal((8, 16, 6, 6)), dtype=lib.float32).to(getattr(lib, dtype))
    x.requires_grad_()
    m(x).backward(lib.tensor(g.standard_normal((8, 16, 6, 6)), dtype=lib.float32).to(x.dtype))
    return [t.float().numpy() for t in (x.grad, m.weight.grad, m.bias.grad)]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16_bit_batch_norm_eval_gradients_as_pytorch(torch, dtype):
    """Evaluation mode: the bias gradient's sum in float32, rounded once (it was summed in the
    16-bit dtype: up to 2 ulps off in a third of the channels)."""
    for ours, theirs in zip(_eval_grads(dt, dtype), _eval_grads(torch, dtype)):
        np.testing.assert_array_equal(ours, theirs)
