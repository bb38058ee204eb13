"""Ops along a dim of size 0 (an empty batch): results of the right shape, no error and no
NumPy warning (softmax and its kin once raised: NumPy's maximum of nothing has no value)."""

import warnings

import numpy as np
import pytest

import disttorch as dt
import disttorch.nn.functional as F

CASES = {
    "softmax": lambda L, x: L.softmax(x, 0),
    "log_softmax": lambda L, x: L.log_softmax(x, 0),
    "softmax_rows": lambda L, x: L.softmax(x, 1),
    "logcumsumexp": lambda L, x: L.logcumsumexp(x, 0),
    "split": lambda L, x: L.split(x, 2),
    "chunk": lambda L, x: L.chunk(x, 2),
    "mse_loss": lambda L, x: L.nn.functional.mse_loss(x, x),
    "cross_entropy": lambda L, x: L.nn.functional.cross_entropy(x, L.zeros(0, dtype=L.long)),
    "logsumexp": lambda L, x: L.logsumexp(x, 1),
}


def _facts(L, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = CASES[name](L, L.zeros(0, 3))
    outs = out if isinstance(out, tuple) else (out,)
    return [(tuple(o.shape), bool(np.isnan(o.item())) if o.ndim == 0 else None) for o in outs]


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_empty_dim_gives_an_empty_result(name):
    assert all(0 in shape or nan for shape, nan in _facts(dt, name))  # empty, or a mean of nothing: NaN


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_an_empty_dim_as_pytorch(torch, name):
    assert _facts(dt, name) == _facts(torch, name)


def test_gradients_through_an_empty_softmax():
    x = dt.zeros(0, 3, requires_grad=True)
    (F.log_softmax(x, 0).sum() + F.softmax(x, 0).sum() + dt.logcumsumexp(x, 0).sum()).backward()
    assert x.grad.shape == (0, 3)
