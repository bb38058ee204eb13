"""Optimisers: closed-form updates, param groups, state_dict round trips, PyTorch parity."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import optim


def _param(values):
    p = dt.tensor(values, dtype=dt.float64, requires_grad=True)
    return p


def _set_grad(p, g):
    p.grad = dt.tensor(g, dtype=dt.float64)


def test_sgd_plain_step_is_lr_times_grad():
    p = _param([1.0, 2.0])
    opt = optim.SGD([p], lr=0.1)
    _set_grad(p, [0.5, -1.0])
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [0.95, 2.1])
    assert p.grad_fn is None and p.requires_grad


def test_sgd_momentum_nesterov_weight_decay_closed_form():
    p = _param([1.0])
    opt = optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
    x, buf = 1.0, None
    for g in [1.0, 2.0, -1.0]:
        _set_grad(p, [g])
        opt.step()
        d = g + 0.01 * x
        buf = d if buf is None else 0.9 * buf + d
        x -= 0.1 * (d + 0.9 * buf)
        assert p.item() == pytest.approx(x)


def test_adam_first_step_moves_by_lr_in_sign_direction():
    p = _param([1.0, -1.0])
    opt = optim.Adam([p], lr=0.01)
    _set_grad(p, [3.0, -0.2])
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [0.99, -0.99], rtol=1e-6)


def test_adamw_decays_weights_without_gradient_coupling():
    p = _param([2.0])
    opt = optim.AdamW([p], lr=0.1, weight_decay=0.5)
    _set_grad(p, [0.0])
    opt.step()
    assert p.item() == pytest.approx(2.0 * (1 - 0.05))


def test_param_groups_have_their_own_options_and_zero_grad():
    a, b = _param([1.0]), _param([1.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    _set_grad(a, [1.0])
    _set_grad(b, [1.0])
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.0)
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_duplicate_parameter_and_empty_list_are_rejected():
    a = _param([1.0])
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([a], lr=-1)


def test_closure_is_called_and_its_loss_returned():
    p = _param([3.0])
    opt = optim.SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == pytest.approx(9.0)
    assert p.item() == pytest.approx(3.0 - 0.1 * 6.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
        lambda ps: optim.Adam(ps, lr=0.01, amsgrad=True),
        lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
        lambda ps: optim.Adagrad(ps, lr=0.1),
    ],
)
def test_state_dict_round_trip_continues_identically(make, tmp_path):
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(4) for _ in range(6)]
    p1 = _param(rng.standard_normal(4))
    p2 = _param(p1.detach().numpy().copy())
    o1 = make([p1])
    for g in grads[:3]:
        _set_grad(p1, g)
        o1.step()
    dt.save(o1.state_dict(), tmp_path / "opt.pt")
    p2.data = dt.tensor(p1.detach().numpy().copy(), dtype=dt.float64)
    o2 = make([p2])
    o2.load_state_dict(dt.load(tmp_path / "opt.pt"))
    for g in grads[3:]:
        _set_grad(p1, g)
        o1.step()
        _set_grad(p2, g)
        o2.step()
    np.testing.assert_array_equal(p1.detach().numpy(), p2.detach().numpy())


OPTIMIZERS = [
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
]


@pytest.mark.parity
@pytest.mark.parametrize("name,kwargs", OPTIMIZERS)
def test_five_steps_match_pytorch(name, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((3, 2))
    grads = [rng.standard_normal((3, 2)) for _ in range(5)]
    ours = _param(x0.copy())
    theirs = torch.tensor(x0.copy(), requires_grad=True)
    o1 = getattr(optim, name)([ours], **kwargs)
    o2 = getattr(torch.optim, name)([theirs], **kwargs)
    for g in grads:
        _set_grad(ours, g)
        theirs.grad = torch.tensor(g)
        o1.step()
        o2.step()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("Adam", {"lr": 0.1}),
        ("AdamW", {"lr": 0.1, "amsgrad": True}),
        ("RMSprop", {"lr": 0.01}),
        ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9}),
    ],
)
def test_a_zero_dim_parameter_steps_like_a_one_element_one(name, kwargs):
    """A scalar parameter (``nn.Parameter(torch.tensor(0.5))``, a learnt temperature or
    gate) updates as a 1-element one does, and its state keeps its 0-d shape."""
    scalar, single = _param(0.5), _param([0.5])
    for p in (scalar, single):
        opt = getattr(optim, name)([p], **kwargs)
        for g in (0.3, -0.2, 0.7):
            _set_grad(p, np.reshape(g, p.shape))
            opt.step()
        assert all(v.shape == p.shape for k, v in opt.state[p].items() if k != "step")
    assert scalar.shape == () and scalar.item() == single.item()
