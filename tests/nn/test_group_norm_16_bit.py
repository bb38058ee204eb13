"""``group_norm`` on bfloat16/float16 input and parameters: PyTorch's output and its gradients
from the statistics saved in the 16-bit dtype (``nn/functional/_group_norm_16_bit``)."""

import numpy as np
import pytest

import disttorch as dt


def _group_norm(lib, dtype_name, affine):
    lib.manual_seed(0)
    m = lib.nn.GroupNorm(3, 6, affine=affine).to(getattr(lib, dtype_name))
    g = np.random.default_rng(4)
    x = lib.tensor(g.standard_normal((2, 6, 5, 7)), dtype=lib.float32).to(getattr(lib, dtype_name))
    x.requires_grad_()
    out = m(x)
    out.backward(lib.tensor(g.standard_normal(out.shape), dtype=lib.float32).to(out.dtype))
    grads = [x.grad] + [p.grad for p in m.parameters()]
    return [t.detach().float().numpy() for t in [out, *grads]]


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_16_bit_bits_as_pytorch(torch, dtype_name, affine):
    ours, theirs = _group_norm(dt, dtype_name, affine), _group_norm(torch, dtype_name, affine)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if dtype_name == "bfloat16":
            np.testing.assert_array_equal(a, b)
        else:  # float16 keeps more bits: PyTorch's float32 sums in another order show on rare ones
            np.testing.assert_allclose(a, b, rtol=2**-10, atol=2**-24)
            assert np.mean(a != b) < 0.01
