"""nn.init: bounds and statistics of every scheme, gains, fans, in-place behaviour."""

import math

import numpy as np
import pytest

import disttorch as torch
from disttorch.nn import init


def big(*shape):
    return torch.empty(*shape)


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("tanh") == 5 / 3
    assert init.calculate_gain("selu") == 0.75
    assert init.calculate_gain("leaky_relu") == math.sqrt(2 / (1 + 0.01**2))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == math.sqrt(2 / 6)
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope"):
        init.calculate_gain("leaky_relu", "x")


def test_fans():
    assert init._calculate_fan_in_and_fan_out(big(3, 4)) == (4, 3)
    assert init._calculate_fan_in_and_fan_out(big(8, 2, 3, 3)) == (18, 72)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(big(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(big(3, 4), mode="fan_avg")


def test_fill_functions_work_in_place_and_return_tensor():
    t = big(2, 3)
    v0 = t._version
    assert init.constant_(t, 2.5) is t and (t.numpy() == 2.5).all()
    assert t._version > v0
    assert (init.ones_(t).numpy() == 1).all() and (init.zeros_(t).numpy() == 0).all()
    np.testing.assert_array_equal(init.eye_(big(2, 3)).numpy(), np.eye(2, 3))
    w = init.dirac_(big(4, 2, 3, 3), groups=2)
    assert w.numpy()[0, 0, 1, 1] == 1 and w.numpy()[2, 0, 1, 1] == 1 and w.numpy().sum() == 4


def test_parameters_stay_leaves_after_init():
    from disttorch import nn

    p = nn.Parameter(torch.empty(10, 10))
    init.normal_(p)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_uniform_normal_trunc_normal_statistics():
    torch.manual_seed(0)
    u = init.uniform_(big(200, 200), -2, 3).numpy()
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.05
    n = init.normal_(big(200, 200), 1.0, 2.0).numpy()
    assert abs(n.mean() - 1.0) < 0.05 and abs(n.std() - 2.0) < 0.05
    tn = init.trunc_normal_(big(200, 200), 0.0, 1.0, -0.5, 1.0).numpy()
    assert tn.min() >= -0.5 and tn.max() <= 1.0 and tn.std() > 0.3


def test_xavier_and_kaiming_bounds_and_std():
    torch.manual_seed(0)
    fan_in, fan_out = 300, 200
    a = math.sqrt(6 / (fan_in + fan_out))
    xu = init.xavier_uniform_(big(fan_out, fan_in), gain=2.0).numpy()
    assert np.abs(xu).max() <= 2 * a and np.abs(xu).max() > 1.9 * a
    xn = init.xavier_normal_(big(fan_out, fan_in)).numpy()
    assert abs(xn.std() - math.sqrt(2 / (fan_in + fan_out))) < 0.003
    bound = math.sqrt(3) * math.sqrt(2) / math.sqrt(fan_in)
    ku = init.kaiming_uniform_(big(fan_out, fan_in), nonlinearity="relu").numpy()
    assert np.abs(ku).max() <= bound and np.abs(ku).max() > 0.99 * bound
    kn = init.kaiming_normal_(big(fan_out, fan_in), mode="fan_out", nonlinearity="relu").numpy()
    assert abs(kn.std() - math.sqrt(2 / fan_out)) < 0.003


def test_generator_makes_draws_reproducible():
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    a = init.uniform_(big(5), generator=g1).numpy().copy()
    b = init.uniform_(big(5), generator=g2).numpy()
    np.testing.assert_array_equal(a, b)


def test_orthogonal():
    torch.manual_seed(0)
    q = init.orthogonal_(big(3, 5), gain=2.0).numpy()
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(3), atol=1e-5)
    q = init.orthogonal_(big(6, 4)).numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-5)


def test_private_no_grad_fillers_are_the_initialisers():
    w = torch.empty(3, 4, requires_grad=True)
    torch.manual_seed(0)
    init._no_grad_uniform_(w, -0.5, 0.5)
    torch.manual_seed(0)
    assert w.tolist() == init.uniform_(torch.empty(3, 4), -0.5, 0.5).tolist() and w.grad_fn is None
    assert init._no_grad_fill_(w, 2.0).tolist() == [[2.0] * 4] * 3 and not init._no_grad_zero_(w).any()
    assert (
        init._no_grad_normal_(w, 0.0, 1.0) is w
        and init._no_grad_trunc_normal_(w, 0, 1, -1, 1).abs().max() <= 1
    )
