"""Indexing answers found by differential fuzzing against PyTorch: a later ``...`` stands
for no dims, a bool scalar beside integers and index tensors is a 0-d mask, a one-element
value written through one boolean mask takes any dtype (``masked_fill_``), and an index
PyTorch refuses is its IndexError before a dtype mismatch (an index past the end after)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck


def _x():
    return dt.arange(60.0).reshape(3, 4, 5)


def test_later_ellipses_stand_for_no_dims():
    x = _x()
    assert x[..., ...].shape == (3, 4, 5) and x[..., 0, ...].shape == (3, 4)
    assert x[..., None, ...].shape == (3, 4, 5, 1) and x[0, ..., ...].shape == (4, 5)
    y = x.clone()
    y[..., 0, ...] = -1.0
    assert (y[..., 0] == -1).all() and y.sum().item() == x.sum().item() - x[..., 0].sum().item() - 12


def test_bool_scalar_beside_integer_and_index_tensor():
    x, idx = _x(), dt.tensor([[0, 2], [1, 2]])
    got = x[dt.tensor(-1), True, idx]
    assert got.shape == (2, 2, 5)
    np.testing.assert_array_equal(got.numpy(), x[-1][idx].numpy())


def test_one_element_value_through_a_mask_takes_any_dtype():
    x = _x().half()
    x[x > 30] = dt.tensor([[3.5]], dtype=dt.float64)
    assert x.dtype == dt.float16 and int((x == 3.5).sum()) == 29
    x = _x().half()
    x[1:, dt.ones(4, dtype=dt.bool)] = dt.tensor(3, dtype=dt.int32)
    assert (x[1:] == 3).all()
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        x[dt.tensor([0, 1])] = dt.tensor(3, dtype=dt.int32)  # (an integer index: index_put)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        x[dt.tensor(True)] = dt.tensor(3, dtype=dt.int32)  # (a 0-d mask too)


def test_value_gradient_through_a_mask():
    v = dt.tensor([[0.5]], dtype=dt.float64, requires_grad=True)

    def fn(v):
        x = dt.arange(12.0, dtype=dt.float64).reshape(3, 4)
        x[x > 5] = v
        return x

    assert gradcheck(fn, (v,))


@pytest.mark.parametrize(
    "index, message",
    [
        ((dt.ones(3, 4, 5, dtype=dt.bool), 0), "too many indices"),
        ((dt.tensor([0, 1]), dt.tensor([0, 1, 2])), "shape mismatch"),
        ((dt.ones(4, dtype=dt.bool),), "The shape of the mask"),
    ],
)
def test_index_errors_come_before_the_dtype_check(index, message):
    with pytest.raises(IndexError, match=message):
        _x()[index] = dt.tensor([1.0], dtype=dt.float64).expand(5)
    with pytest.raises(RuntimeError, match="Index put requires"):  # (past the end: found later)
        _x()[dt.tensor([0, 3])] = dt.tensor(1.0, dtype=dt.float64).expand(5)
