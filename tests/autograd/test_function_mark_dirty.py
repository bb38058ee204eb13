"""``ctx.mark_dirty`` in a user ``autograd.Function``: the input changed in place is returned
as itself, its version bumped, rebased onto the Function's node, as PyTorch does."""

from __future__ import annotations

import pytest

import disttorch as dt


def _mul_in_place(torch):
    class MulInPlace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            ctx.k = k
            return x.mul_(k)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors  # saved after the change: still readable
            return g * ctx.k, None

    return MulInPlace


def _run(torch) -> list:
    MulInPlace = _mul_in_place(torch)
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a.clone()
    y = MulInPlace.apply(b, 3.0)
    got = [y is b, y.grad_fn.name(), b._version, y.tolist()]
    y.sum().backward()
    got.append(a.grad.tolist())
    with torch.no_grad():
        c = torch.ones(2)
        got += [MulInPlace.apply(c, 2.0) is c, c._version]
    for bad in (lambda: MulInPlace.apply(torch.ones(2, requires_grad=True), 2.0),):
        try:
            bad()
        except RuntimeError as e:
            got.append(str(e))

    class NotReturned(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            x.add_(1)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    try:
        NotReturned.apply(torch.ones(2, requires_grad=True).clone())
    except RuntimeError as e:
        got.append(str(e))
    return got


def test_mark_dirty_rebases_the_input():
    assert _run(dt) == [
        True,
        "MulInPlaceBackward",
        2,
        [3.0, 6.0, 9.0],
        [3.0, 3.0, 3.0],
        True,
        2,
        "a leaf Variable that requires grad has been used in an in-place operation.",
        "Some elements marked as dirty during the forward method were not returned as output. "
        "The inputs that are modified inplace must all be outputs of the Function.",
    ]


@pytest.mark.parity
def test_mark_dirty_as_pytorch(torch):
    assert _run(dt) == _run(torch)


def test_is_view_names_views():
    a = dt.ones(2, 2)
    assert a.view(4)._is_view() and a[0]._is_view() and not a._is_view() and not a.clone()._is_view()
