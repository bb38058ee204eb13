"""Indexing answers found by differential fuzzing against PyTorch: a later ``...`` stands
for the dims left (none), a bool scalar beside integers and index tensors is a 0-d mask, a
one-element value written through one boolean mask takes any dtype (``masked_fill_``), a
value's leading 1s are dropped before it is written, and an index PyTorch refuses is its
IndexError before a dtype mismatch (an index past the end after)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck


def _x():
    return dt.arange(60.0).reshape(3, 4, 5)


def test_later_ellipses_stand_for_the_dims_left():
    """Each ``...`` stands for the dims the other entries leave: after the first, none are
    left, so a later one followed by an index is PyTorch's IndexError."""
    x = _x()
    with pytest.raises(IndexError):
        x[..., ..., 0]
    with pytest.raises(IndexError):
        x[..., ..., None]
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


def test_bool_scalar_after_an_integer_keeps_its_place():
    x = _x()
    assert x[0, :, True].shape == (4, 1, 5) and x[..., dt.tensor([0, 1, 2]), True].shape == (3, 4, 3)
    y = dt.arange(5.0)
    y[True, 0] = 7.0
    assert y.tolist() == [7.0, 1.0, 2.0, 3.0, 4.0]


def test_value_leading_ones_are_dropped():
    y = dt.arange(5.0)
    y[0] = dt.tensor([9.0])
    z = dt.zeros(2, 3)
    z[0, 1] = dt.tensor([[5.0]])
    assert y[0].item() == 9.0 and z[0, 1].item() == 5.0
