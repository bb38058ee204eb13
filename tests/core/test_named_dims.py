"""Named tensors: PyTorch 2.13 has none (``names=`` is an unexpected keyword, ``Tensor.names``,
``refine_names``, ``rename``, ``align_to`` do not exist), and neither has disttorch; a dim given
by name is refused with PyTorch's ``TypeError`` saying so (it was a bare comparison error)."""

from __future__ import annotations

import pytest

import disttorch as dt

NAMED_API = ("names", "rename", "rename_", "refine_names", "align_to", "align_as", "has_names")


def test_there_are_no_named_tensors_as_in_pytorch_2_13():
    with pytest.raises(TypeError, match="unexpected keyword argument 'names'"):
        dt.zeros(2, 3, names=("N", "C"))
    assert [n for n in NAMED_API if hasattr(dt.Tensor, n)] == []


@pytest.mark.parity
def test_pytorch_has_no_named_tensor_api_either(torch):
    assert [n for n in NAMED_API if hasattr(torch.Tensor, n)] == []


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda x: x.size("C"), "int"),
        (lambda x: x.transpose("N", "C"), "int"),
        (lambda x: dt.cat([x, x], "C"), "int"),
        (lambda x: x.sum("C"), "int or tuple of ints"),
        (lambda x: x.mean(["N", "C"]), "int or tuple of ints"),
    ],
    ids=["size", "transpose", "cat", "sum", "mean"],
)
def test_a_dim_given_by_name_is_refused_saying_so(call, expected):
    with pytest.raises(TypeError) as raised:
        call(dt.ones(2, 3))
    assert str(raised.value).startswith(f"argument 'dim' must be {expected}, not ")
    assert "PyTorch 2.13 has no named tensors" in str(raised.value)
