"""Selection answers found by differential fuzzing against PyTorch: ``kthvalue`` of bfloat16
puts NaN last (as every dtype), checks ``k`` before refusing a dtype, and
``unique_consecutive(dim=)`` of a single slice."""

import math

import pytest

import disttorch as dt


def test_kthvalue_bfloat16_nan_is_the_largest():
    x = dt.tensor([math.nan, 3.0, 1.0, 0.0, 3.0, 2.0], dtype=dt.bfloat16)
    got = x.kthvalue(1)
    assert got.values.item() == 0.0 and got.indices.item() == 3
    assert math.isnan(x.kthvalue(6).values.item())
    cols = dt.tensor([[1.0, 0.0], [math.nan, 2.0], [1.0, 1.0]], dtype=dt.bfloat16).kthvalue(3, dim=0)
    assert math.isnan(cols.values[0].item()) and cols.values[1].item() == 2.0


def test_kthvalue_checks_k_before_the_dtype():
    with pytest.raises(RuntimeError, match="selected number k out of range"):
        dt.ones(3, dtype=dt.bool).kthvalue(0)
    with pytest.raises(NotImplementedError, match="kthvalue_cpu"):
        dt.ones(3, dtype=dt.bool).kthvalue(1)


def test_unique_consecutive_of_one_slice():
    vals, inverse, counts = dt.unique_consecutive(
        dt.tensor([[1.0, 2.0]]), dim=0, return_inverse=True, return_counts=True
    )
    assert vals.tolist() == [[1.0, 2.0]] and inverse.tolist() == [0] and counts.tolist() == [1]
    assert dt.unique_consecutive(dt.ones(1, 1, 4), dim=1).shape == (1, 1, 4)
