"""``Module.register_backward_hook`` (the deprecated, non-full hook): called with the
gradients of the graph node that made the module's output, what it returns replaces them
(guided backprop on ReLUs), PyTorch's deprecation warnings; one module holds one kind."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import disttorch as dt


def _guided(torch) -> tuple:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.ReLU(inplace=True), torch.nn.Conv2d(3, 2, 3))
    seen = {}

    def first(module, grad_in, grad_out):
        seen["first"] = grad_in[0]
        seen["n"] = (len(grad_in), len(grad_out))

    def relu(module, grad_in, grad_out):  # guided backprop: only positive gradients pass
        return (torch.clamp(grad_in[0], min=0.0),)

    net[0].register_backward_hook(first)
    handles = [net[1].register_backward_hook(relu)]
    x = torch.tensor(np.linspace(-1, 1, 50).reshape(1, 2, 5, 5), dtype=torch.float32, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = net(x)
    out.backward(
        torch.tensor(np.linspace(0.5, 1, 2).reshape(1, 2, 1, 1), dtype=torch.float32).expand(out.shape)
    )
    for h in handles:
        h.remove()
    return seen["first"].numpy(), x.grad.numpy(), seen["n"], [str(w.message)[:60] for w in caught]


def test_legacy_hooks_see_their_node_and_replace_its_gradients():
    first, x_grad, n, messages = _guided(dt)
    assert n == (3, 1)  # the convolution's node: input, weight and bias
    np.testing.assert_array_equal(first, x_grad)
    assert np.abs(x_grad).sum() > 0
    assert messages == ["Using a non-full backward hook when the forward contains mul"] * 2


@pytest.mark.parity
def test_legacy_hooks_as_pytorch(torch):
    ours, theirs = _guided(dt), _guided(torch)
    for a, b in zip(ours[:2], theirs[:2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert ours[2:] == theirs[2:]


def test_one_module_holds_one_kind_of_backward_hook():
    relu = dt.nn.ReLU()
    relu.register_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        relu.register_full_backward_hook(lambda *a: None)
    lin = dt.nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both"):
        lin.register_backward_hook(lambda *a: None)
