"""``torch.types``: PyTorch's annotation aliases, importable and meaning disttorch's types."""

import typing

import pytest

import disttorch as dt
from disttorch import types


def test_aliases_name_disttorchs_types():
    assert typing.get_args(types.Number) == (int, float, bool) and isinstance(3, types._Number)
    assert dt.device in typing.get_args(types.Device) and type(None) in typing.get_args(types.Device)
    assert dt.Size in typing.get_args(types._size) and types._dtype is dt.dtype
    assert dt.Tensor in typing.get_args(types._TensorOrTensors)
    assert sorted(types.__all__) == ["Device", "FileLike", "Number", "Storage"]


@pytest.mark.parity
def test_same_names_as_pytorch(torch):
    import torch.types as theirs

    public = {n for n in dir(theirs) if not n.startswith("__") and n not in ("os", "TYPE_CHECKING")}
    typing_names = {"Any", "IO", "Self", "Sequence", "TypeAlias", "Union", "SymBool", "SymFloat", "SymInt"}
    typing_names |= {"Tensor", "Size", "DispatchKey"}  # imported into torch.types, not defined there
    assert public - typing_names <= set(dir(types))
