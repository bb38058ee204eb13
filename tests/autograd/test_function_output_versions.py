"""A user ``autograd.Function`` whose forward changes its output in place before saving and
returning it (transformers' ``XSoftmax`` zeroes masked probabilities): the output keeps the
version it had, so backward reads it, and a change after the call is still caught."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt


def _masked_softmax(lib):
    class MaskedSoftmax(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, mask):
            out = lib.softmax(x.masked_fill(~mask, -1e9), -1)
            out.masked_fill_(~mask, 0)
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return out * (g - (g * out).sum(-1, keepdim=True)), None

    return MaskedSoftmax


def _run(lib) -> list:
    f = _masked_softmax(lib)
    x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], dtype=lib.float64, requires_grad=True)
    mask = lib.tensor([[True, True, False], [True, False, True]])
    y = f.apply(x, mask)
    (y * lib.arange(3.0, dtype=lib.float64)).sum().backward()
    out = [y._version, x.grad.tolist(), lib.autograd.gradcheck(lambda t: f.apply(t, mask), (x,))]
    y2 = f.apply(x, mask)
    y2.add_(1)
    try:
        y2.sum().backward()
    except RuntimeError as e:
        out.append(str(e).split(":")[0])
    return out


def test_an_output_changed_in_forward_is_saved_as_it_is_returned():
    version, grad, ok, error = _run(dt)
    s = np.exp([0.5, -1.0]) / np.exp([0.5, -1.0]).sum()
    assert version == 1 and ok
    assert np.allclose(grad[0], [s[0] * (0 - s[1]), s[1] * (1 - s[1]), 0.0])
    assert (
        error
        == "one of the variables needed for gradient computation has been modified by an inplace operation"
    )


@pytest.mark.parity
def test_as_pytorch(torch):
    mine, theirs = _run(dt), _run(torch)
    assert np.allclose(mine[1], theirs[1], rtol=1e-12, atol=0)
    assert mine[:1] + mine[2:] == theirs[:1] + theirs[2:]
