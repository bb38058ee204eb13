"""First checks of the tensor/autograd core (fuller suites live in the family test files)."""
import numpy as np

import disttorch as torch


def test_mul_add_backward_matches_closed_form():
    a = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    b = torch.tensor([[0.5, -1.], [2., 3.]])
    (a * b + a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.numpy() + 1)


def test_broadcast_bias_gets_summed_gradient():
    x = torch.randn(3, 4)
    bias = torch.zeros(4, requires_grad=True)
    (x + bias).sum().backward()
    np.testing.assert_allclose(bias.grad.numpy(), np.full(4, 3.0))


def test_second_derivative_with_create_graph():
    x = torch.tensor([2.0], requires_grad=True)
    (g,) = torch.autograd.grad(x ** 3, x, create_graph=True)
    (g2,) = torch.autograd.grad(g, x)
    assert g.item() == 12.0 and g2.item() == 12.0
