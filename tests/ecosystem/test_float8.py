"""``torch.float8_*``: the 8-bit float dtypes (ml_dtypes' types, as bfloat16) are stored,
created, converted and reinterpreted; promoting them with another dtype raises, as in
PyTorch."""

from __future__ import annotations

import pytest

import disttorch as dt

pytest.importorskip("ml_dtypes")

NAMES = ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"]
VALUES = [0.3, 1.3, 2.7, 0.001, 100.0]  # inside every type's range (e8m0 has no zero), rounded


@pytest.mark.parametrize("name", NAMES)
def test_float8_dtype(name):
    d = getattr(dt, name)
    assert d.is_floating_point and d.itemsize == 1 and d.is_signed == (name != "float8_e8m0fnu")
    t = dt.tensor([0.5, 2.0], dtype=d)
    assert t.dtype is d and t.float().tolist() == [0.5, 2.0] and t.view(dt.uint8).dtype is dt.uint8
    assert (
        dt.zeros(2, dtype=d).dtype is d and dt.cat([t, t]).dtype is d and d.scalar_name.startswith("Float8_")
    )
    with pytest.raises(
        RuntimeError, match="Promotion for Float8 Types is not supported, attempted to promote"
    ):
        t + dt.ones(2)


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_as_pytorch(torch, name):
    ours, theirs = getattr(dt, name), getattr(torch, name)
    assert (ours.itemsize, ours.is_signed, ours.is_floating_point) == (
        theirs.itemsize,
        theirs.is_signed,
        theirs.is_floating_point,
    )
    assert repr(dt.finfo(ours))[: -len(name)] == repr(torch.finfo(theirs))[: -len(name)]
    a, b = dt.tensor(VALUES).to(ours), torch.tensor(VALUES).to(theirs)
    assert a.float().tolist() == b.float().tolist()
    assert a.view(dt.uint8).tolist() == b.view(torch.uint8).tolist()
    with pytest.raises(RuntimeError) as ea:
        dt.promote_types(ours, dt.float32)
    with pytest.raises(RuntimeError) as eb:
        torch.promote_types(theirs, torch.float32)
    assert str(ea.value) == str(eb.value)


EDGES = [470.0, 500.0, 1e4, -1e4, float("inf"), float("-inf"), float("nan"), 0.0, -0.0, -2.7, 1e-40, 3e38]


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_conversion_at_the_edges_as_pytorch(torch, name):
    """Out of range, infinities, zero and negative numbers convert as PyTorch converts them
    (e4m3fn saturates to +-448; e8m0fnu takes the magnitude, zero is 2**-127), by ``to``,
    ``tensor(dtype=)`` and ``zeros``."""
    ours, theirs = getattr(dt, name), getattr(torch, name)

    def values(t):  # nan compares equal to nan (its bit pattern may differ)
        return [repr(v) for v in t.float().tolist()]

    for src in ("float32", "float64", "bfloat16"):
        a = dt.tensor(EDGES, dtype=getattr(dt, src)).to(ours)
        b = torch.tensor(EDGES, dtype=getattr(torch, src)).to(theirs)
        assert values(a) == values(b), src
    assert values(dt.tensor(EDGES, dtype=ours)) == values(torch.tensor(EDGES, dtype=theirs))
    assert values(dt.zeros(2, dtype=ours)) == values(torch.zeros(2, dtype=theirs))
