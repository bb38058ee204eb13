"""Calling graph nodes directly: a Python Function's node's ``apply`` is its backward, a
built-in op's node is callable on its output gradients, as PyTorch's nodes."""

from __future__ import annotations

import pytest

import disttorch as dt


def _answers(torch) -> list:
    class MulAdd(torch.autograd.Function):
        @staticmethod
        def forward(ctx, w, x, b):
            ctx.save_for_backward(w, x)
            return w * x + b

        @staticmethod
        def backward(ctx, g):
            w, x = ctx.saved_tensors
            return g * x, g * w, g * 1

    w = torch.tensor([0.5], requires_grad=True)
    b = torch.tensor([0.25], requires_grad=True)
    z = MulAdd.apply(w, torch.tensor([3.0]), b)
    grads = z.grad_fn.apply(torch.ones(1))  # the node's backward, on any gradient
    out = [[g.tolist() for g in grads], grads[1].requires_grad, w.grad is None]
    with pytest.raises(TypeError, match="object is not callable"):
        z.grad_fn(torch.ones(1))
    a = torch.arange(6.0).view(2, 3).requires_grad_()
    v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (a * v).relu().sum(0)
    out.append(y.grad_fn(torch.ones(3)).tolist())  # one input: one tensor
    mul = y.grad_fn.next_functions[0][0].next_functions[0][0]
    ga, gv = mul(torch.ones(2, 3))  # the broadcast input's gradient is not reduced
    out += [ga.tolist(), gv.shape, type(mul).__name__]
    return out


@pytest.mark.parity
def test_node_calls_match_pytorch(torch):
    assert _answers(dt) == _answers(torch)


def test_node_calls():
    got = _answers(dt)
    assert got[0] == [[3.0], [0.5], [1.0]] and got[1] and got[2]
    assert got[3] == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]  # sum(0)'s node expands its gradient
    assert got[4] == [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]] and tuple(got[5]) == (2, 3)
