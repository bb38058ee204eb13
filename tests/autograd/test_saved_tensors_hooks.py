"""``torch.autograd.graph``: saved-tensor hooks see what the graph saves and backward uses
what they give back (built-in ops, user Functions, ``torch.library`` operators alike)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck
from disttorch.autograd.graph import (
    save_on_cpu,
    saved_tensors_hooks,
)


def _scaled_exp_grad(lib):
    """d/da sum(exp(a*a)) with every saved tensor packed as 4x and unpacked as /2."""
    packed = []
    a = lib.ones(3, requires_grad=True)

    def pack(t):
        packed.append(tuple(t.shape))
        return t * 4

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t / 2):
        y = (a * a).exp().sum()
    assert packed, "pack_hook never called"
    y.backward()
    return a.grad.tolist()


@pytest.mark.parity
def test_backward_uses_what_unpack_returns_as_pytorch(torch):
    # every saved value doubles, so the gradient is 2 * 2 * 2 * e * ... as PyTorch's
    assert _scaled_exp_grad(dt) == pytest.approx(_scaled_exp_grad(torch), rel=1e-6)


def test_hooks_are_not_used_outside_the_block_and_unpack_runs_at_backward():
    calls = []
    a = dt.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: calls.append("pack") or t, lambda t: calls.append("unpack") or t):
        y = a.sin()
    assert calls and set(calls) == {"pack"}
    z = a.cos().sum()  # recorded outside the block: no hooks
    n = len(calls)
    z.backward()
    assert len(calls) == n
    y.sum().backward()
    assert calls.count("unpack") == calls.count("pack")
    assert a.grad.tolist() == pytest.approx((a.detach().cos() - a.detach().sin()).tolist())


def test_user_function_saved_tensors_go_through_the_hooks():
    class Cube(dt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.kept = x * 1  # a plain attribute: not a saved tensor, never packed
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    seen = []
    x = dt.tensor([1.0, 2.0], dtype=dt.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: seen.append(t) or ("box", t), lambda p: p[1]):
        y = Cube.apply(x)
    assert any(t is x for t in seen)  # the input itself, as PyTorch hands it over
    assert y.grad_fn.kept is not None and not any(t is y.grad_fn.kept for t in seen)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]


def test_gradients_under_save_on_cpu_pass_gradcheck():
    x = dt.randn(3, 4, dtype=dt.float64, requires_grad=True)
    w = dt.randn(4, 2, dtype=dt.float64, requires_grad=True)

    def f(x, w):
        with save_on_cpu(pin_memory=True):
            return (x @ w).tanh().softmax(-1)

    assert gradcheck(f, (x, w))


def test_backward_twice_without_retain_graph_raises_after_packing():
    a = dt.ones(2, requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = (a * a).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert a.grad.tolist() == [4.0, 4.0]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


@pytest.mark.parity
def test_disable_saved_tensors_hooks_raises_its_message(torch):
    for lib in (dt, torch):
        with lib.autograd.graph.disable_saved_tensors_hooks("hooks are off here"):
            with pytest.raises(RuntimeError, match="hooks are off here"):
                with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass  # allowed again after the block


def test_hooks_belong_to_the_thread_that_installed_them():
    packed = []
    a = dt.ones(2, requires_grad=True)
    out = []
    with saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        worker = threading.Thread(target=lambda: out.append((a * a).sum()))
        worker.start()
        worker.join(30)
    assert not packed
    out[0].backward()


def test_recorded_nodes_are_graph_nodes():
    y = dt.ones(2, requires_grad=True) * 2
    assert isinstance(y.grad_fn, dt.autograd.graph.Node)


_PACK_ORDER_CASES = {
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / b,
    "mm": lambda L, a, b: a.mm(b),
    "pow": lambda L, a, b: a**b,
    "addcmul": lambda L, a, b: L.addcmul(a, a, b),
    "atan2": lambda L, a, b: L.atan2(a, b),
    "hypot": lambda L, a, b: L.hypot(a, b),
}


def _pack_order(lib, case):
    """The order in which the pack and unpack hooks see ``a`` and ``b`` (others as ``r``)."""
    a = lib.ones(2, 2, requires_grad=True) * 2
    b = lib.full((2, 2), 3.0, requires_grad=True)
    names = {id(a): "a", id(b): "b"}
    seen = []

    def hook(tag):
        return lambda t: seen.append(tag + names.get(id(t), "r")) or t

    with lib.autograd.graph.saved_tensors_hooks(hook("P"), hook("U")):
        out = _PACK_ORDER_CASES[case](lib, a, b)
    out.sum().backward()
    return seen


@pytest.mark.parity
@pytest.mark.parametrize("case", sorted(_PACK_ORDER_CASES))
def test_hooks_see_saved_tensors_in_pytorch_order(torch, case):
    # the autograd tutorial prints its hooks: ``a * b`` packs b, then a, as PyTorch's MulBackward0
    assert _pack_order(dt, case) == _pack_order(torch, case)


def _linear_relu_softmax_packs(L) -> tuple:
    """The shapes a pack hook sees for ``softmax(relu(linear(x)))``, in order, and the
    gradients of backward through unpacked copies."""
    L.manual_seed(0)
    lin = L.nn.Linear(4, 3)
    x = L.randn(2, 4, requires_grad=True)
    shapes = []

    def pack(t):
        shapes.append(tuple(t.shape))
        return t.detach().clone()

    with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = L.softmax(L.relu(lin(x)), -1)
    (y * L.arange(3.0)).sum().backward()
    return shapes, [t.grad.numpy() for t in (x, lin.weight, lin.bias)]


def test_pack_hook_sees_pytorchs_saved_tensors_of_linear_relu_softmax():
    shapes, grads = _linear_relu_softmax_packs(dt)
    # addmm's input and W.t(), relu's result, softmax's result: as PyTorch's nodes save them
    assert shapes == [(2, 4), (4, 3), (2, 3), (2, 3)]
    dt.manual_seed(0)
    lin, x = dt.nn.Linear(4, 3), dt.randn(2, 4, requires_grad=True)
    (dt.softmax(dt.relu(lin(x)), -1) * dt.arange(3.0)).sum().backward()
    for got, expected in zip(grads, (x.grad, lin.weight.grad, lin.bias.grad)):
        np.testing.assert_allclose(got, expected.numpy(), rtol=1e-6)


@pytest.mark.parity
def test_pack_hook_counts_as_pytorch(torch):
    ours, theirs = _linear_relu_softmax_packs(dt), _linear_relu_softmax_packs(torch)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
