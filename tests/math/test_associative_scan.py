"""``torch._higher_order_ops.associative_scan`` (transformers' Mamba imports it): the
generic inclusive scan over a tensor or a pytree, forwards and backwards, compared with
PyTorch's eager generic scan."""

from __future__ import annotations

import pytest

import disttorch as dt
from disttorch._higher_order_ops.associative_scan import associative_scan
from disttorch.autograd import gradcheck


def _scans(lib, scan):
    x = lib.arange(1.0, 6.0).view(1, 5)
    pair = (lib.tensor([[1.0, 2, 3]]), lib.tensor([[1.0, 1, 2]]))
    return [
        scan(lambda a, b: a * b, x, 1, combine_mode="generic").tolist(),
        scan(lambda a, b: a + b, x, -1, reverse=True, combine_mode="generic").tolist(),
        [
            t.tolist()
            for t in scan(lambda a, b: (a[0] * b[0], b[0] * a[1] + b[1]), pair, 1, combine_mode="generic")
        ],
    ]


def test_scans_forward_backward_and_errors():
    assert _scans(dt, associative_scan) == [
        [[1.0, 2.0, 6.0, 24.0, 120.0]],
        [[15.0, 14.0, 12.0, 9.0, 5.0]],
        [[[1.0, 2.0, 6.0]], [[1.0, 3.0, 11.0]]],
    ]
    x = dt.rand(3, 4, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda t: associative_scan(lambda a, b: a * b + b, t, 0, combine_mode="generic"), (x,))
    with pytest.raises(ValueError, match="CUDA or XPU"):
        associative_scan(lambda a, b: a + b, dt.ones(3), 0)
    with pytest.raises(ValueError, match="Combine_mode"):
        associative_scan(lambda a, b: a + b, dt.ones(3), 0, combine_mode="fast")


@pytest.mark.parity
def test_scans_match_pytorch(torch):
    from torch._higher_order_ops.associative_scan import associative_scan as torch_scan

    assert _scans(dt, associative_scan) == _scans(torch, torch_scan)
