"""Hooks on graph nodes (``grad_fn.register_prehook`` / ``register_hook``, also on a leaf's
``AccumulateGrad``), ``Node.metadata``, and ``autograd.graph.register_multi_grad_hook``."""

from __future__ import annotations

import importlib

import pytest

import disttorch as dt


def _node_hooks(torch) -> list:
    log = []
    a = torch.ones(3, requires_grad=True)
    acc = a.view_as(a).grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: log.append(("acc pre", go[0].tolist())))
    acc.register_hook(lambda gi, go: log.append(("acc post", len(gi), go[0].tolist(), a.grad.tolist())))
    y = a * 2
    y.register_hook(lambda g: log.append(("tensor", g.tolist())))
    y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].tolist())))
    y.grad_fn.register_hook(
        lambda gi, go: log.append(("post", [None if g is None else g.tolist() for g in gi]))
    )
    y.sum().backward()
    y = a * 2
    y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
    y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, gi[1]))
    a.grad = None
    y.sum().backward()
    log.append(("replaced", a.grad.tolist()))
    y = a * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0, None)).remove()
    a.grad = None
    y.sum().backward()
    log.append(("removed", a.grad.tolist()))
    y = a * 2

    def bad(gi, go):
        return (gi[0],)

    y.grad_fn.register_hook(bad)
    try:
        y.sum().backward()
    except RuntimeError as e:
        log.append(str(e))
    y.grad_fn.metadata["k"] = 1
    log.append(y.grad_fn.metadata)
    return log


def _multi(torch) -> list:
    graph = importlib.import_module(f"{torch.__name__}.autograd.graph")
    got = []
    a, b = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    h = graph.register_multi_grad_hook((a, b), lambda grads: got.append([g is None for g in grads]))
    (a * 2).sum().backward()
    (a * b).sum().backward()
    h.remove()
    (a * b).sum().backward()
    h = graph.register_multi_grad_hook((a, b), lambda g: got.append(g.tolist()), mode="any")
    (a * b * 3).sum().backward()
    h.remove()
    try:
        graph.register_multi_grad_hook((a,), print, mode="some")
    except ValueError as e:
        got.append(str(e))
    return got


def test_node_hooks():
    assert _node_hooks(dt) == [
        ("tensor", [1.0, 1.0, 1.0]),
        ("pre", [1.0, 1.0, 1.0]),
        ("post", [[2.0, 2.0, 2.0], None]),
        ("acc pre", [2.0, 2.0, 2.0]),
        ("acc post", 0, [2.0, 2.0, 2.0], [2.0, 2.0, 2.0]),
        ("acc pre", [21.0, 21.0, 21.0]),
        ("acc post", 0, [21.0, 21.0, 21.0], [21.0, 21.0, 21.0]),
        ("replaced", [21.0, 21.0, 21.0]),
        ("acc pre", [2.0, 2.0, 2.0]),
        ("acc post", 0, [2.0, 2.0, 2.0], [2.0, 2.0, 2.0]),
        ("removed", [2.0, 2.0, 2.0]),
        "hook 'bad' has returned an incorrect number of values (got 1, but expected 2)",
        {"k": 1},
    ]


def test_multi_grad_hook():
    assert _multi(dt) == [
        [False, True],
        [False, False],
        [3.0, 3.0, 3.0],
        "Expects mode to be one of ('all', 'any') but got some",
    ]


@pytest.mark.parity
def test_node_hooks_as_pytorch(torch):
    assert _node_hooks(dt) == _node_hooks(torch)


@pytest.mark.parity
def test_multi_grad_hook_as_pytorch(torch):
    assert _multi(dt) == _multi(torch)


def _hook_calls_in_double_backward(L, op) -> list:
    """Which hooks of the node of ``op`` (an op whose derivative reads its result) fire in a
    backward with ``create_graph=True`` and in the backward of that gradient: PyTorch's formula
    reads the node's saved result, so the second pass reaches the node again."""
    a = L.tensor([0.5, 1.5], requires_grad=True)
    b = op(L, a)
    calls = []
    b.grad_fn.register_prehook(lambda g: calls.append("pre"))
    b.grad_fn.register_hook(lambda gi, go: calls.append("post"))
    (g,) = L.autograd.grad(b.sum(), a, create_graph=True)
    calls.append("|")
    g.sum().backward()
    return calls + [round(v, 5) for v in a.grad.tolist()]


RESULT_OPS = {
    "exp": lambda L, a: a.exp(),
    "tanh": lambda L, a: a.tanh(),
    "sqrt": lambda L, a: a.sqrt(),
    "erfcx": lambda L, a: L.special.erfcx(a),
}


@pytest.mark.parametrize("name", RESULT_OPS)
def test_node_hooks_fire_again_when_the_second_derivative_reads_the_saved_result(name):
    calls = _hook_calls_in_double_backward(dt, RESULT_OPS[name])
    assert calls[:5] == ["pre", "post", "|", "pre", "post"]


@pytest.mark.parity
@pytest.mark.parametrize("name", RESULT_OPS)
def test_node_hooks_in_double_backward_as_pytorch(torch, name):
    assert _hook_calls_in_double_backward(dt, RESULT_OPS[name]) == _hook_calls_in_double_backward(
        torch, RESULT_OPS[name]
    )
