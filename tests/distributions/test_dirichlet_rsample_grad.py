"""Dirichlet/Beta rsample gradients are PyTorch's ``_Dirichlet_backward``: each coordinate's
Beta-marginal implicit gradient (``torch._dirichlet_grad``), not the gamma-normalisation one."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.distributions.dirichlet import dirichlet_grad


def test_dirichlet_grad_closed_form_for_beta_a_1():
    # Beta(a, 1): I_x = x^a, so -(dI/da) / (pdf (1 - x)) = -x log(x) / (a (1 - x))
    x = np.array([0.01, 0.2, 0.5, 0.7, 0.99])
    for a in [0.3, 1.0, 4.0, 25.0]:
        np.testing.assert_allclose(
            dirichlet_grad(x, np.full_like(x, a), np.full_like(x, a + 1.0)),
            -x * np.log(x) / (a * (1 - x)),
            rtol=1e-10,
        )


@pytest.mark.parity
def test_dirichlet_grad_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for a, b in [(0.3, 0.7), (2.0, 3.0), (7.0, 13.0), (0.1, 0.2), (3.0, 97.0), (50.0, 1.0), (500.0, 10.0)]:
        x = np.clip(rng.beta(a, b, 100), 1e-9, 1 - 1e-9)
        expected = torch._dirichlet_grad(
            torch.tensor(x),
            torch.full((100,), a, dtype=torch.float64),
            torch.full((100,), a + b, dtype=torch.float64),
        ).numpy()
        # PyTorch approximates this quantity (rational / saddle-point forms, about 3e-3 in places)
        np.testing.assert_allclose(
            dirichlet_grad(x, np.full(100, a), np.full(100, a + b)), expected, rtol=5e-3
        )


@pytest.mark.parity
def test_dirichlet_and_beta_rsample_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    out = []
    for lib in (torch, dt):
        lib.manual_seed(0)
        c = lib.tensor([0.7, 2.0, 5.0, 1.3], dtype=lib.float64, requires_grad=True)
        d = lib.distributions.Dirichlet(c)
        x = d.rsample((5,))
        (x * lib.arange(4, dtype=lib.float64)).sum().backward()
        a = lib.tensor([2.0, 0.5], dtype=lib.float64, requires_grad=True)
        lib.distributions.Beta(a, lib.tensor([1.0, 3.0], dtype=lib.float64)).rsample((4,)).pow(
            2
        ).sum().backward()
        out.append((x.detach().numpy(), c.grad.numpy(), a.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-10)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=5e-3)
    np.testing.assert_allclose(out[1][2], out[0][2], rtol=5e-3)
