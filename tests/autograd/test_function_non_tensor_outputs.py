"""A user ``autograd.Function`` may return objects that are not tensors: they come back as
they are (not wrapped), and its backward gets None for them, as in PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt


def _run(torch) -> list:
    seen = []

    class Mixed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, n):
            return a * 2, n * 2, "label", np.ones(2)

        @staticmethod
        def backward(ctx, g, g_n, g_label, g_array):
            seen.append([type(g).__name__, g_n, g_label, g_array])
            return g * 2, None

    class Number(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return 3

        @staticmethod
        def backward(ctx, g):
            return g

    a = torch.ones(2, requires_grad=True)
    out = Mixed.apply(a, 4)
    got = [[type(o).__name__ for o in out], out[1], out[2]]
    out[0].sum().backward()
    with torch.no_grad():
        got.append([type(o).__name__ for o in Mixed.apply(a, 4)])
    got += [Number.apply(a), seen, a.grad.tolist()]
    return got


def test_non_tensor_outputs_pass_through():
    assert _run(dt) == [
        ["Tensor", "int", "str", "ndarray"],
        8,
        "label",
        ["Tensor", "int", "str", "ndarray"],
        3,
        [["Tensor", None, None, None]],
        [2.0, 2.0],
    ]


@pytest.mark.parity
def test_non_tensor_outputs_as_pytorch(torch):
    assert _run(dt) == _run(torch)
