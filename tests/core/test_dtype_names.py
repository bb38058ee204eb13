"""PyTorch's names of each dtype come from one table on the dtype (``_dtype._TYPE_NAMES``):
``dtype.scalar_name`` (messages), ``dtype.c_name`` (kernel messages), ``Tensor.type()``."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import _dtype

NAMES = {
    "float16": ("Half", "c10::Half"),
    "float32": ("Float", "float"),
    "float64": ("Double", "double"),
    "int8": ("Char", "signed char"),
    "int16": ("Short", "short int"),
    "int32": ("Int", "int"),
    "int64": ("Long", "long int"),
    "uint8": ("Byte", "unsigned char"),
    "bool": ("Bool", "bool"),
    "complex64": ("ComplexFloat", "c10::complex<float>"),
    "complex128": ("ComplexDouble", "c10::complex<double>"),
}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_dtype_carries_its_names(name):
    d = getattr(dt, name)
    assert (d.scalar_name, d.c_name) == NAMES[name]
    assert _dtype.scalar_type_name(d.numpy) == d.scalar_name and _dtype.c_type_name(d.numpy) == d.c_name
    assert dt.zeros(1, dtype=d).type() == f"torch.{d.scalar_name}Tensor"  # PyTorch's legacy type name


def test_unknown_numpy_dtype_falls_back_to_its_own_name():
    odd = np.dtype("datetime64[s]")  # no PyTorch name
    assert _dtype.scalar_type_name(odd) == odd.name
    assert _dtype.c_type_name(odd) == odd.name


def test_messages_use_the_table():
    with pytest.raises(RuntimeError, match=r"but got: double != float$"):
        dt.nn.functional.linear(dt.ones(2, 3, dtype=dt.float64), dt.ones(4, 3))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        dt.nn.functional.conv1d(dt.ones(1, 1, 4), dt.ones(1, 1, 2, dtype=dt.float64))


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(NAMES))
def test_names_match_pytorch(name):
    torch = pytest.importorskip("torch")
    x = torch.zeros(1, dtype=getattr(torch, name))
    assert dt.zeros(1, dtype=getattr(dt, name)).type() == x.type()
    if name in ("float16", "float32", "float64"):
        w = torch.ones(4, 3, dtype=torch.float32 if name != "float32" else torch.float64)
        with pytest.raises(RuntimeError) as theirs:
            torch.nn.functional.linear(torch.ones(2, 3, dtype=x.dtype), w)
        assert f"{NAMES[name][1]} != " in str(theirs.value)
