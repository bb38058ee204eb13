"""``torch.testing.make_tensor`` against PyTorch's: the same values from the same seed (the
generators agree), the same ranges, layouts and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch.testing import make_tensor

_DTYPES = ["float32", "float64", "int64", "uint8", "bool", "complex64", "bfloat16", "int8", "float16"]


def _draws(lib, make):
    lib.manual_seed(0)
    out = [make((2, 3), dtype=getattr(lib, name), device="cpu").tolist() for name in _DTYPES]
    t = make(2, 3, dtype=lib.float32, device="cpu", low=-1, high=1, noncontiguous=True, requires_grad=True)
    out.append((t.tolist(), t.is_contiguous(), t.stride(), t.requires_grad))
    out.append(make((4,), dtype=lib.int32, device="cpu", low=0, high=2, exclude_zero=True).tolist())
    out.append(make((2, 2, 2, 2), dtype=lib.float32, device="cpu", memory_format=lib.channels_last).stride())
    out.append(make((3,), dtype=lib.float32, device="cpu", low=-1e39, high=1e39).tolist())
    return out


def test_values_as_pytorchs(torch):
    from torch.testing import make_tensor as theirs

    assert _draws(dt, make_tensor) == _draws(torch, theirs)


def test_defaults_ranges_and_layouts():
    dt.manual_seed(1)
    f = make_tensor(1000, dtype=dt.float32, device="cpu")
    assert f.dtype == dt.float32 and -9 <= f.min().item() and f.max().item() < 9
    i = make_tensor((1000,), dtype=dt.uint8, device="cpu").numpy()
    assert i.min() >= 0 and i.max() <= 9
    t = make_tensor(3, 4, dtype=dt.float64, device="cpu", noncontiguous=True)
    assert t.shape == (3, 4) and not t.is_contiguous()
    assert (
        make_tensor(200, dtype=dt.int64, device="cpu", low=-1, high=1, exclude_zero=True).numpy() != 0
    ).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"low": 2, "high": 1}, ValueError, "`low` must be less than `high`, but got 2 >= 1"),
        ({"low": float("nan")}, ValueError, "cannot be NaN"),
        ({"dtype": dt.int64, "requires_grad": True}, ValueError, "not supported for boolean and integral"),
        ({"dtype": dt.uint8, "low": 300, "high": 400}, ValueError, r"only supports \[0, 256\)"),
        ({"noncontiguous": True, "memory_format": dt.channels_last}, ValueError, "mutually exclusive"),
    ],
)
def test_refusals(kwargs, error, match):
    kwargs.setdefault("dtype", dt.float32)
    with pytest.raises(error, match=match):
        make_tensor((2,), device="cpu", **kwargs)


def test_equal_bounds_are_deprecated_for_floats():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert np.array_equal(
            make_tensor((2,), dtype=dt.float32, device="cpu", low=1, high=1).numpy(), [1, 1]
        )
    assert [w.category for w in caught] == [FutureWarning]
