"""Reading ``.grad`` of a non-leaf tensor warns as PyTorch does: backward never fills it."""

import warnings

import pytest

import disttorch as dt


def _warnings(lib, retain=False, after_backward=False):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    if retain:
        y.retain_grad()
    if after_backward:
        y.sum().backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.grad
        x.grad
        lib.ones(2).grad
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]  # the whole text


def test_non_leaf_grad_warns_once_per_read_and_leaves_do_not():
    [message] = _warnings(dt)
    assert message.startswith("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed.")
    assert _warnings(dt, retain=True) == []
    assert _warnings(dt, retain=True, after_backward=True) == []


@pytest.mark.parametrize(
    ("retain", "after_backward"), [(False, False), (False, True), (True, False), (True, True)]
)
def test_warnings_match_pytorch(torch, retain, after_backward):
    assert _warnings(dt, retain, after_backward) == _warnings(torch, retain, after_backward)
