"""``torch.uint16/32/64``: stored, created and converted; promoting them with another dtype
raises, as in PyTorch."""

from __future__ import annotations

import pytest

import disttorch as dt


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_wide_unsigned_dtypes(name):
    d = getattr(dt, name)
    t = dt.tensor([1, 2], dtype=d)
    assert t.dtype is d and (t * 2).tolist() == [2, 4] and (t * 2).dtype is d
    assert t.to(dt.int64).tolist() == [1, 2] and not d.is_signed and not d.is_floating_point
    assert dt.iinfo(d).max == 2 ** (8 * d.itemsize) - 1
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not supported"):
        t + dt.tensor([1], dtype=dt.int32)


@pytest.mark.parity
def test_as_pytorch(torch):
    for name in ("uint16", "uint32", "uint64"):
        ours, theirs = getattr(dt, name), getattr(torch, name)
        assert (ours.itemsize, ours.is_signed) == (theirs.itemsize, theirs.is_signed)
        assert dt.iinfo(ours).max == torch.iinfo(theirs).max
        with pytest.raises(RuntimeError) as a:
            dt.ones(1, dtype=ours) + dt.ones(1, dtype=dt.int32)
        with pytest.raises(RuntimeError) as b:
            torch.ones(1, dtype=theirs) + torch.ones(1, dtype=torch.int32)
        assert str(a.value) == str(b.value)
