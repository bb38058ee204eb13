"""A ``dim`` (or another integer argument) given as a bool or None: PyTorch's TypeError
where its parser refuses one (``x.sum(True)``, ``x.unsqueeze(None)``, ``x.max(None)``,
``x.topk(True)``), while NumPy integers and 0-d integer tensors stay accepted."""

import numpy as np
import pytest

import disttorch as dt

REFUSED = {
    "sum_true": lambda x: x.sum(True),
    "sum_bool_tuple": lambda x: x.sum((True,)),
    "softmax_none": lambda x: x.softmax(None),
    "cumsum_true": lambda x: x.cumsum(True),
    "prod_none": lambda x: x.prod(None),
    "max_none": lambda x: x.max(None),
    "min_none": lambda x: x.min(dim=None),
    "logsumexp_none": lambda x: x.logsumexp(None),
    "median_none": lambda x: x.median(None),
    "median_true": lambda x: x.median(True),
    "squeeze_true": lambda x: x.squeeze(True),
    "unsqueeze_false": lambda x: x.unsqueeze(False),
    "unsqueeze_none": lambda x: x.unsqueeze(None),
    "flip_true": lambda x: x.flip(True),
    "flip_none": lambda x: x.flip(None),
    "size_true": lambda x: x.size(True),
    "stride_false": lambda x: x.stride(False),
    "flatten_true": lambda x: x.flatten(True),
    "unbind_true": lambda x: x.unbind(True),
    "sort_true": lambda x: x.sort(True),
    "topk_true": lambda x: x.topk(True),
    "chunk_true": lambda x: x.chunk(True),
    "split_true": lambda x: x.split(True),
    "diff_true": lambda x: x.diff(True),
    "roll_true": lambda x: x.roll(True),
    "roll_dims_true": lambda x: x.roll(1, True),
    "movedim_true": lambda x: x.movedim(True, 0),
}


def _x(L):
    return L.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bool_or_none_dim_is_a_type_error(name):
    with pytest.raises(TypeError, match="must be"):
        REFUSED[name](_x(dt))


@pytest.mark.parity
def test_pytorch_refuses_the_same(torch):
    for name, call in REFUSED.items():
        with pytest.raises(TypeError):
            call(_x(torch))
            pytest.fail(name)


def test_integer_dims_that_are_not_int_are_taken():
    x = _x(dt)
    assert x.sum(np.int64(1)).tolist() == [3.0, 12.0]
    assert x.softmax(dt.tensor(1)).shape == (2, 3)
    assert x.unsqueeze(np.int32(0)).shape == (1, 2, 3)
    assert x.sum((0, True)).item() == 15.0  # (a bool after the first entry reads as an int)
    assert x.sum(None).item() == 15.0 and x.argmax(None).item() == 5
    assert x.size(None) == (2, 3)
