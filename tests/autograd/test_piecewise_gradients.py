"""Gradients of the piecewise ops, as PyTorch's: rounding (``div`` with a ``rounding_mode``
too), ``sign`` and ``fill`` pass zeros
back (the result still requires grad); ``%``/``fmod`` pass ``g`` and ``-g * quotient``;
``frexp``'s mantissa ``g / 2**exponent``; ``mode`` and ``nanmedian`` values to the element
picked."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

rng = np.random.default_rng(21)
X = rng.uniform(-3, 3, (3, 4))
Y = rng.uniform(0.5, 1.5, (3, 4)) * np.where(rng.random((3, 4)) < 0.5, -1, 1)

FLAT = {
    "floor": lambda t: dt.floor(t),
    "ceil": lambda t: t.ceil(),
    "trunc": lambda t: dt.trunc(t),
    "fix": lambda t: dt.fix(t),
    "round": lambda t: dt.round(t),
    "round_decimals": lambda t: dt.round(t, decimals=1),
    "sign": lambda t: dt.sign(t),
    "fill": lambda t: dt.fill(t, 2.0),
    "div_floor": lambda t: dt.div(t, 0.7, rounding_mode="floor"),
    "div_trunc": lambda t: t.div(dt.tensor(Y), rounding_mode="trunc"),
}


@pytest.mark.parametrize("name", list(FLAT))
def test_zero_gradient_reaches_the_input(name):
    x = dt.tensor(X, requires_grad=True)
    y = FLAT[name](x)
    assert y.requires_grad and y.grad_fn is not None
    (y * 3).sum().backward()
    assert x.grad is not None and np.array_equal(x.grad.numpy(), np.zeros((3, 4)))
    with dt.no_grad():
        assert not FLAT[name](x).requires_grad


def test_integer_rounding_has_no_graph():
    assert not dt.floor(dt.tensor([1, 2])).requires_grad


@pytest.mark.parametrize("op", ["fmod", "remainder", "%"])
def test_modulo_gradients(op):
    f = {"fmod": dt.fmod, "remainder": dt.remainder, "%": lambda a, b: a % b}[op]
    x = dt.tensor(X, requires_grad=True)
    y = dt.tensor(Y, requires_grad=True)
    assert gradcheck(f, (x, y))
    assert gradcheck(lambda a: f(a, 0.7), (x,))
    if op == "fmod":  # no number-first overload in PyTorch (remainder has one)
        with pytest.raises(TypeError, match="must be Tensor, not float"):
            f(2.5, y)
    else:
        assert gradcheck(lambda b: f(2.5, b), (y,))
    f(x, y).sum().backward()
    rounding = np.trunc if op == "fmod" else np.floor
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4)))
    np.testing.assert_array_equal(y.grad.numpy(), -rounding(X / Y))


def test_frexp_mantissa_gradient():
    x = dt.tensor(X * 100, requires_grad=True)
    assert gradcheck(lambda t: dt.frexp(t).mantissa, (x,))
    with pytest.raises(RuntimeError, match="only supports floating-point dtypes"):
        dt.frexp(dt.tensor([1, 2]))


def test_mode_and_nanmedian_values_pass_gradients_to_the_element_picked():
    x = dt.tensor([[1.0, 2.0, 2.0, 3.0], [5.0, 5.0, 4.0, 4.0]], requires_grad=True)
    values, indices = dt.mode(x, 1)
    values.sum().backward()
    expect = np.zeros((2, 4))
    expect[0, indices[0].item()] = expect[1, indices[1].item()] = 1
    np.testing.assert_array_equal(x.grad.numpy(), expect)
    z = dt.tensor([[3.0, np.nan, 1.0, 2.0], [np.nan, 7.0, 6.0, np.nan]], requires_grad=True)
    v, i = dt.nanmedian(z, 1, keepdim=True)
    assert v.shape == (2, 1) and i.tolist() == [[3], [2]]
    v.sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [[0, 0, 0, 1], [0, 0, 1, 0]])
    w = dt.tensor([4.0, np.nan, 1.0, 2.0], requires_grad=True)
    dt.nanmedian(w).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [0, 0, 0, 1])
    assert dt.nanmedian(dt.tensor([])).isnan().item()


@pytest.mark.parity
def test_gradients_match_pytorch(torch):
    cases = {
        "floor": lambda L, x, y: L.floor(x),
        "round": lambda L, x, y: L.round(x, decimals=1),
        "sign": lambda L, x, y: L.sign(x),
        "fmod": lambda L, x, y: L.fmod(x, y),
        "remainder": lambda L, x, y: L.remainder(x, y),
        "frexp": lambda L, x, y: L.frexp(x).mantissa,
        "mode": lambda L, x, y: L.mode(L.round(x.detach()).requires_grad_(), 0).values,
        "nanmedian": lambda L, x, y: L.nanmedian(x, 1).values,
        "fill": lambda L, x, y: L.fill(x, 1.5),
    }
    for name, f in cases.items():
        grads = []
        for L in (dt, torch):
            x, y = L.tensor(X, requires_grad=True), L.tensor(Y, requires_grad=True)
            out = f(L, x, y)
            out.backward(L.ones_like(out))
            grads.append([None if t.grad is None else t.grad.numpy() for t in (x, y)])
        for ours, theirs in zip(*grads):
            assert (ours is None) == (theirs is None), name
            if ours is not None:
                np.testing.assert_array_equal(ours, theirs, err_msg=name)
