"""``median``, ``nanmedian``, ``kthvalue`` and ``mode`` along a dim return, among equal values,
the index PyTorch's CPU kernels return: the median's k-th element in (value, index) order, the
one kthvalue's quickselect leaves at position k - 1 (``kernels/torch_select.py``), and the last
of the mode's run after the C++ library's unstable sort (with ``<``: NaNs unordered)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

TIES = np.array([[0.0, 0, 0, 0, 0, 0, 0], [1, 0, 1, 0, 1, 0, 1], [2, 2, 1, 1, 0, 0, 2]])


def test_tied_indices_are_pytorchs():
    x = dt.tensor(TIES)
    # PyTorch 2.13's answers for these rows
    assert x.kthvalue(3, 1).indices.tolist() == [5, 5, 2]
    assert x.kthvalue(5, 1).indices.tolist() == [2, 4, 0]
    assert x.median(1).indices.tolist() == [3, 0, 3]


def test_values_and_gradients_go_to_the_chosen_element():
    x = dt.tensor(TIES + np.arange(7) * 1e-3, requires_grad=True)  # (no ties: gradcheck)
    assert gradcheck(lambda t: t.kthvalue(3, 1, keepdim=True).values, (x,))
    y = dt.tensor(TIES, requires_grad=True)
    y.kthvalue(5, 1).values.sum().backward()
    assert np.argwhere(y.grad.numpy()).tolist() == [[0, 2], [1, 4], [2, 0]]
    with pytest.raises(RuntimeError, match="selected number k out of range"):
        y.kthvalue(8, 1)


@pytest.mark.parity
@pytest.mark.parametrize("op", ["median", "nanmedian", "kthvalue", "mode"])
def test_random_ties_as_pytorch(torch, op):
    rng = np.random.default_rng(7)
    for trial in range(60):
        n = int(rng.integers(1, 60 if op != "mode" else 200))
        a = rng.integers(0, 4, (3, n)).astype(np.float32)
        if trial % 3 == 0:  # (mode: NaNs are unordered in PyTorch's sort, each a run of its own)
            a[rng.random(a.shape) < 0.2] = np.nan
        k = int(rng.integers(1, n + 1))
        call = {
            "median": lambda t: t.median(1),
            "nanmedian": lambda t: t.nanmedian(1),
            "kthvalue": lambda t: t.kthvalue(k, 1),
            "mode": lambda t: t.mode(1),
        }[op]
        ours, theirs = call(dt.tensor(a)), call(torch.tensor(a))
        assert ours.indices.tolist() == theirs.indices.tolist(), (a, k)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
