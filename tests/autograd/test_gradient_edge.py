"""``autograd.graph.get_gradient_edge`` / ``GradientEdge`` (an input of ``autograd.grad``),
``increment_version``, and the name PyTorch gives a leaf's ``AccumulateGrad`` node."""

from __future__ import annotations

import importlib

import pytest

import disttorch as dt


def _edges(torch) -> list:
    graph = importlib.import_module(f"{torch.__name__}.autograd.graph")
    a = torch.ones(2, requires_grad=True)
    h = a * 2
    edge = graph.get_gradient_edge(h)
    got = [type(edge).__name__, edge.node.name(), edge.output_nr, graph.get_gradient_edge(a).node.name()]
    try:
        graph.get_gradient_edge(torch.ones(2))
    except RuntimeError as e:
        got.append(str(e))
    graph.increment_version([a, a])
    graph.increment_version(a)
    got.append(a._version)
    got.append([g.tolist() for g in torch.autograd.grad((h * 3).sum(), [edge, a])])
    got.append(torch.autograd.grad((a * 3).sum(), graph.get_gradient_edge(a))[0].tolist())
    return got


def test_gradient_edges():
    assert _edges(dt) == [
        "GradientEdge",
        "MulBackward0",
        0,
        "torch::autograd::AccumulateGrad",
        "It is not possible to get the gradient edge for a Tensor that does not require gradients",
        3,
        [[3.0, 3.0], [6.0, 6.0]],
        [3.0, 3.0],
    ]


@pytest.mark.parity
def test_gradient_edges_as_pytorch(torch):
    assert _edges(dt) == _edges(torch)
