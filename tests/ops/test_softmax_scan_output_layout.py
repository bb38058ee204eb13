"""softmax, log_softmax, softmin and the running scans (cumsum, cumprod) give row-major
(contiguous) results for a channels-last or transposed input, as PyTorch's kernels do, so
that ``.view`` after them works as under PyTorch (it raised here for a channels-last input)."""

import numpy as np
import pytest

import disttorch as dt

OPS = {
    "softmax": lambda L, t: t.softmax(1),
    "log_softmax": lambda L, t: t.log_softmax(-1),
    "softmin": lambda L, t: L.nn.functional.softmin(t, 1),
    "cumsum": lambda L, t: t.cumsum(1),
    "cumprod": lambda L, t: t.cumprod(2),
}


def _inputs(L, dtype):
    base = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    x = L.tensor(base, dtype=dtype)
    return {
        "channels_last": x.to(memory_format=L.channels_last),
        "transposed": x.transpose(2, 3).contiguous().transpose(2, 3),
    }


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_output_is_row_major_and_views(name, dtype):
    for layout, x in _inputs(dt, getattr(dt, dtype)).items():
        out = OPS[name](dt, x)
        assert out.is_contiguous(), (name, layout, out.stride())
        assert out.view(2, -1).shape == (2, 60)
        want = OPS[name](dt, x.contiguous())
        assert dt.equal(out, want), (name, layout)


def test_softmax_gradient_of_a_channels_last_input():
    x = _inputs(dt, dt.float64)["channels_last"].requires_grad_()
    w = dt.arange(120, dtype=dt.float64).view(2, 60)
    (x.softmax(1).view(2, -1) * w).sum().backward()
    y = x.detach().contiguous().requires_grad_()
    (y.softmax(1).view(2, -1) * w).sum().backward()
    assert dt.allclose(x.grad, y.grad, rtol=1e-12, atol=0)
    assert dt.autograd.gradcheck(lambda t: t.softmax(1), (x.detach().contiguous().requires_grad_(),))


@pytest.mark.parity
def test_strides_match_pytorch(torch):
    for name, op in OPS.items():
        ours, theirs = _inputs(dt, dt.float32), _inputs(torch, torch.float32)
        for layout in ours:
            assert op(dt, ours[layout]).stride() == op(torch, theirs[layout]).stride(), (name, layout)
