"""``torch.utils.flop_counter.FlopCounterMode`` counts products and convolutions as PyTorch."""

from __future__ import annotations

import pytest

import disttorch as dt
from disttorch.utils.flop_counter import FlopCounterMode


def _count(torch, counter_cls) -> tuple:
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 5))
    with torch.no_grad(), counter_cls(display=False) as c:
        m(torch.randn(2, 3, 8, 8))
        torch.randn(2, 3, 4) @ torch.randn(4, 5)
        torch.mm(torch.randn(2, 3), torch.randn(3, 4))
        torch.bmm(torch.randn(2, 3, 4), torch.randn(2, 4, 5))
    return c.get_total_flops(), sorted((str(k), v) for k, v in c.get_flop_counts()["Global"].items())


def test_counts_and_stops_counting_on_exit():
    total, per_op = _count(dt, FlopCounterMode)
    assert per_op == [("aten.addmm", 2880), ("aten.bmm", 240), ("aten.convolution", 15552), ("aten.mm", 288)]
    assert total == 2880 + 240 + 15552 + 288
    from disttorch.autograd import function

    assert function._observers == []


@pytest.mark.parity
def test_same_counts_as_pytorch(torch):
    from torch.utils.flop_counter import FlopCounterMode as Theirs

    assert _count(dt, FlopCounterMode) == _count(torch, Theirs)


def _per_module(torch, counter_cls) -> dict:
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU())
            self.head = torch.nn.Linear(8, 2)

        def forward(self, x):
            return self.head(self.enc(x)) + self.head(self.enc(x))  # a module entered twice

    with torch.no_grad(), counter_cls(display=False) as c:
        Net()(torch.randn(3, 4))
    return {name: {str(op): n for op, n in ops.items()} for name, ops in c.get_flop_counts().items()}


def test_counts_per_module_by_dotted_name():
    counts = _per_module(dt, FlopCounterMode)
    assert counts["Net"] == counts["Global"] == {"aten.addmm": 2 * (2 * 3 * 4 * 8 + 2 * 3 * 8 * 2)}
    assert counts["Net.enc"] == counts["Net.enc.0"] == {"aten.addmm": 2 * 2 * 3 * 4 * 8}
    assert counts["Net.head"] == {"aten.addmm": 2 * 2 * 3 * 8 * 2}
    from disttorch.nn.modules import module

    assert not module._global_forward_pre_hooks and not module._global_forward_hooks


def test_same_counts_per_module_as_pytorch(torch):
    from torch.utils.flop_counter import FlopCounterMode as TorchCounter

    assert _per_module(dt, FlopCounterMode) == _per_module(torch, TorchCounter)
