"""A user ``autograd.Function`` whose forward returns an input, or a view, gives a view of that
tensor (its memory and version counter), which may not be modified in place while recording,
as in PyTorch (the in-place logic of views would bypass the Function's backward)."""

from __future__ import annotations

import disttorch as dt


def _functions(torch) -> tuple:
    class Same(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class First(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[0]

        @staticmethod
        def backward(ctx, g):
            return torch.zeros(3, dtype=g.dtype).index_put((torch.tensor([0]),), g)

    return Same, First


def _run(torch) -> list:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    seen = []
    for fn in _functions(torch):
        z = fn.apply(y)
        seen.append((z._base is y, z.grad_fn.name()))
        for target in (z, z.view(-1)[:1]):  # the output, and a view of it
            try:
                target.mul_(2)
            except RuntimeError as e:
                seen.append(str(e))
        with torch.no_grad():
            fn.apply(y).mul_(1)  # allowed outside the graph, and y's version moves
    seen.append(y._version)
    z = _functions(torch)[0].apply(y)
    (z * 3).sum().backward()
    return [*seen, x.grad.tolist()]


def test_custom_function_view_outputs_refuse_in_place_changes(torch):
    assert _run(dt) == _run(torch)
