"""Shape-changing in-place view ops (``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_``,
``swapdims_``, ``swapaxes_``): they change the tensor's shape and strides, not its values."""

import numpy as np
import pytest

import disttorch


def test_unsqueeze_changes_shape_in_place():
    t = disttorch.tensor([1, 2, 3])
    assert t.unsqueeze_(-1) is t
    assert t.shape == (3, 1)
    np.testing.assert_array_equal(t.numpy(), [[1], [2], [3]])
    t.squeeze_()
    assert t.shape == (3,)
    t.unsqueeze_(0).squeeze_(0)
    assert t.shape == (3,)


def test_transpose_and_t_are_views_of_the_same_memory():
    t = disttorch.arange(6.0).reshape(2, 3)
    t.t_()
    assert t.shape == (3, 2) and t.stride() == (1, 3) and not t.is_contiguous()
    t.transpose_(0, 1)
    assert t.shape == (2, 3) and t.is_contiguous()
    t.swapdims_(0, 1).swapaxes_(1, 0)
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3))


def test_on_a_view_keeps_the_base():
    base = disttorch.zeros(2, 3)
    row = base[0]
    row.unsqueeze_(0)
    assert row.shape == (1, 3) and row._base is base
    row.fill_(1.0)
    np.testing.assert_array_equal(base.numpy(), [[1, 1, 1], [0, 0, 0]])


def test_gradient_flows_through_a_recorded_restride():
    b = disttorch.arange(6.0, dtype=disttorch.float64).reshape(2, 3).requires_grad_()
    c = b * 2
    c.t_()
    assert c.shape == (3, 2) and c.grad_fn is not None
    (c * disttorch.tensor([1.0, 10.0], dtype=disttorch.float64)).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [[2, 2, 2], [20, 20, 20]])


def test_leaf_that_requires_grad_raises():
    a = disttorch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        a.unsqueeze_(0)
    with disttorch.no_grad():
        a.unsqueeze_(0)
    assert a.shape == (1, 3) and a.is_leaf


@pytest.mark.parity
def test_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.arange(24.0).reshape(2, 1, 3, 4)
    for name, args in [("unsqueeze_", (2,)), ("squeeze_", (1,)), ("squeeze_", ()), ("transpose_", (0, 3))]:
        ours, theirs = disttorch.tensor(x), torch.tensor(x)
        getattr(ours, name)(*args)
        getattr(theirs, name)(*args)
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
