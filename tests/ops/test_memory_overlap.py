"""PyTorch's refusal to write into memory an input partly shares: in-place ops and ``out=``
(``x[1:].add_(x[:-1])``), while the same memory seen the same way, strided slices and the
functions PyTorch does not check (reductions, matrix products) still compute."""

import pytest

import disttorch as dt

MSG = "some elements of the input tensor and the written-to tensor refer to a single memory location"


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x[1:].add_(x[:-1]),
        lambda x: x[:-1].sub_(x[1:], alpha=2),
        lambda x: x[1:].mul_(x[:-1]),
        lambda x: x[1:].copy_(x[:-1]),
        lambda x: x[1:].addcmul_(x[:-1], x[:-1]),
        lambda x: x[1:].lerp_(x[:-1], 0.5),
        lambda x: x[1:].clamp_(min=x[:-1]),
        lambda x: x.view(2, 3).add_(x.view(3, 2).t()),  # same range, another order
        lambda x: x.__setitem__(slice(1, None), x[:-1]),
        lambda x: dt.add(x[1:], x[:-1], out=x[:-1]),
        lambda x: dt.exp(x[1:], out=x[:-1]),
        lambda x: dt.cat([x[:2], x[2:4]], out=x[1:5]),
        lambda x: dt.cumsum(x[:-1], 0, out=x[1:]),
        lambda x: dt.sort(x[1:], out=(x[:-1], dt.empty(5, dtype=dt.int64))),
    ],
)
def test_partial_overlap_is_refused(call):
    x = dt.arange(6.0)
    with pytest.raises(RuntimeError, match=MSG):
        call(x)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # refused before writing


def test_allowed_overlaps():
    x = dt.arange(6.0)
    x.add_(x)  # the same memory, the same way
    x[1:].mul_(x[1:])
    assert x.tolist() == [0.0, 4.0, 16.0, 36.0, 64.0, 100.0]
    x[::2].add_(x[1::2])  # not dense: PyTorch does not check
    assert x.tolist() == [4.0, 4.0, 52.0, 36.0, 164.0, 100.0]
    y = dt.arange(6.0)
    dt.sum(y.view(2, 3), 0, out=y[3:])  # reductions are not checked (no partial overlap there)
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0, 5.0, 7.0]
    z = dt.ones(3, requires_grad=True).clone()
    z[1:].add_(z[:2].detach().clone())  # a clone is memory of its own
    z.sum().backward()


def test_overlap_check_while_recording():
    w = dt.ones(4, requires_grad=True)
    x = w * 2
    with pytest.raises(RuntimeError, match=MSG):
        x[1:].add_(x[:-1])
