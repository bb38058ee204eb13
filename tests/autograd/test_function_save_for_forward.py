"""``ctx.save_for_forward`` in a user ``autograd.Function``: its ``jvp`` reads the tensors
as ``saved_tensors`` (forward-mode AD through a Function with ``jvp``)."""

from __future__ import annotations

import importlib

import pytest

import disttorch as dt


def _tangents(torch) -> list:
    fw = importlib.import_module(f"{torch.__name__}.autograd.forward_ad")

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x**3

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * t

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            ctx.save_for_forward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            (r,) = ctx.saved_tensors
            return g * r

        @staticmethod
        def jvp(ctx, t):
            (r,) = ctx.saved_tensors
            return t * r

    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    with fw.dual_level():
        d = fw.make_dual(x, torch.tensor([1.0, 0.5], dtype=torch.float64))
        return [[round(v, 10) for v in fw.unpack_dual(f.apply(d)).tangent.tolist()] for f in (Cube, Exp)]


def test_jvp_reads_what_save_for_forward_kept():
    assert _tangents(dt) == [[3.0, 6.0], [2.7182818285, 3.6945280495]]


@pytest.mark.parity
def test_save_for_forward_as_pytorch(torch):
    assert _tangents(dt) == _tangents(torch)


def _jvp_after_save_for_backward(torch) -> tuple:
    """A Function with only ``jvp`` that saved with ``save_for_backward``: its ``jvp`` reads an
    empty ``saved_tensors`` (those are backward's), so unpacking one tensor fails."""
    fw = importlib.import_module(f"{torch.__name__}.autograd.forward_ad")

    class Sin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.saved_tensors[0] if ctx.saved_tensors else t * 2

    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    with fw.dual_level():
        d = fw.make_dual(x, torch.ones_like(x))
        return tuple(fw.unpack_dual(Sin.apply(d)).tangent.tolist())


def test_jvp_does_not_read_what_save_for_backward_kept():
    assert _jvp_after_save_for_backward(dt) == (2.0, 2.0)


@pytest.mark.parity
def test_jvp_after_save_for_backward_as_pytorch(torch):
    assert _jvp_after_save_for_backward(dt) == _jvp_after_save_for_backward(torch)
