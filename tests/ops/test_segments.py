"""``torch._segment_reduce`` and the COO <-> CSR index conversions graph libraries call."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

REDUCES = ("sum", "mean", "max", "amin", "prod")


def _calls(lib):
    """(label, result) of each call, the same calls in either library."""
    x = lib.tensor([[1.0, 2.0], [3.0, -4.0], [5.0, 6.0], [7.0, 8.0], [0.5, 9.0]])
    for red in REDUCES:
        yield red, lib._segment_reduce(x, red, lengths=lib.tensor([2, 0, 3]))
        yield red + " offsets", lib._segment_reduce(x, red, offsets=lib.tensor([0, 2, 2, 5]))
        yield red + " initial", lib._segment_reduce(x, red, lengths=lib.tensor([2, 0, 3]), initial=1.5)
        yield red + " axis 1", lib._segment_reduce(x.t(), red, lengths=lib.tensor([[1, 4], [3, 2]]), axis=1)
    yield "coo->csr", lib._convert_indices_from_coo_to_csr(lib.tensor([0, 0, 2, 2, 2]), 4)
    yield "coo->csr int32", lib._convert_indices_from_coo_to_csr(lib.tensor([1, 3]), 5, out_int32=True)
    crow, col = lib.tensor([0, 2, 2, 5, 5]), lib.tensor([1, 3, 0, 1, 2])
    yield "csr->coo", lib._convert_indices_from_csr_to_coo(crow, col)
    yield "csr->coo t", lib._convert_indices_from_csr_to_coo(crow, col, transpose=True, out_int32=True)


def test_segments_reduce_runs_of_the_axis():
    x = dt.arange(10.0).reshape(5, 2)
    out = dt._segment_reduce(x, "sum", lengths=dt.tensor([2, 0, 3]))
    assert out.tolist() == [[2.0, 4.0], [0.0, 0.0], [18.0, 21.0]]
    assert dt._segment_reduce(x, "max", offsets=dt.tensor([0, 2, 2, 5])).tolist()[1] == [-np.inf, -np.inf]
    mean = dt._segment_reduce(x, "mean", lengths=dt.tensor([2, 0, 3]), initial=1.0)
    assert mean.tolist() == [[1.5, 2.5], [1.0, 1.0], [6.333333492279053, 7.333333492279053]]
    batched = dt._segment_reduce(x.t(), "min", lengths=dt.tensor([[1, 4], [4, 1]]), axis=1)
    assert batched.tolist() == [[0.0, 2.0], [1.0, 9.0]]


def test_index_conversions():
    assert dt._convert_indices_from_coo_to_csr(dt.tensor([0, 0, 2, 2, 2]), 4).tolist() == [0, 2, 2, 5, 5]
    ptr = dt._convert_indices_from_coo_to_csr(dt.tensor([1, 3], dtype=dt.int32), 4, out_int32=True)
    assert ptr.dtype == dt.int32 and ptr.tolist() == [0, 0, 1, 1, 2]
    coo = dt._convert_indices_from_csr_to_coo(dt.tensor([0, 2, 2, 3]), dt.tensor([4, 1, 0]))
    assert coo.dtype == dt.int64 and coo.tolist() == [[0, 0, 2], [4, 1, 0]]
    assert dt._convert_indices_from_csr_to_coo(
        dt.tensor([0, 1]), dt.tensor([3]), transpose=True
    ).tolist() == [[3], [0]]


@pytest.mark.parametrize("reduce", REDUCES)
def test_segment_reduce_gradcheck(reduce):
    x = (dt.rand(6, 3, dtype=dt.float64) + 0.5).requires_grad_()
    # (an empty segment is finite only with an initial value)
    for kw in ({"lengths": dt.tensor([2, 1, 3])}, {"offsets": dt.tensor([0, 0, 3, 6]), "initial": 0.7}):
        assert gradcheck(lambda t, kw=kw: dt._segment_reduce(t, reduce, **kw), (x,))
    rows = dt.tensor([[1, 5], [3, 3], [2, 4]])
    assert gradcheck(
        lambda t: dt._segment_reduce(t, reduce, lengths=rows, axis=1),
        (x.detach().t().contiguous().requires_grad_(),),
    )


def test_segment_ties_share_the_gradient():
    x = dt.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    dt._segment_reduce(x, "max", lengths=dt.tensor([3, 1])).sum().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 1.0]


def test_bad_segments_are_refused():
    x = dt.ones(5, 2)
    with pytest.raises(RuntimeError, match="Either lengths or offsets must be defined"):
        dt._segment_reduce(x, "sum")
    with pytest.raises(RuntimeError, match="sum to data.size"):
        dt._segment_reduce(x, "sum", lengths=dt.tensor([2, 2]))
    with pytest.raises(RuntimeError, match="must be either sum, prod, mean, amax or amin, got median"):
        dt._segment_reduce(x, "median", lengths=dt.tensor([5]))
    with pytest.raises(NotImplementedError, match="integer"):
        dt._segment_reduce(x, "sum", lengths=dt.tensor([2.0, 3.0]))
    with pytest.raises(NotImplementedError, match="floating"):
        dt._segment_reduce(dt.ones(3, dtype=dt.int64), "sum", lengths=dt.tensor([3]))
    with pytest.raises(RuntimeError, match="supposed to be a vector"):
        dt._convert_indices_from_coo_to_csr(dt.tensor([[0, 1]]), 3)


@pytest.mark.parity
def test_segments_as_pytorch(torch):
    for (label, ours), (_, theirs) in zip(_calls(dt), _calls(torch), strict=True):
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], label
        np.testing.assert_allclose(
            np.asarray(ours.tolist()), np.asarray(theirs.tolist()), rtol=1e-6, err_msg=label
        )
    for reduce in REDUCES:
        grads = []
        for lib in (dt, torch):
            x = lib.tensor([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]], requires_grad=True)
            lib._segment_reduce(x, reduce, lengths=lib.tensor([[2, 1], [1, 2]]), axis=1).sum().backward()
            grads.append(x.grad.tolist())
        assert grads[0] == grads[1], reduce
