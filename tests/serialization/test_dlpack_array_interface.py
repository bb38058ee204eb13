"""Tensor.__array_interface__, __dlpack__/__dlpack_device__ and disttorch.from_dlpack share
memory with NumPy and PyTorch; load_state_dict accepts NumPy arrays and array-likes."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.utils.dlpack import to_dlpack


def test_array_interface_shares_memory():
    t = dt.arange(6.0).reshape(2, 3)
    a = np.asarray(t)
    assert a.__array_interface__["data"][0] == t.data_ptr()
    a[1, 2] = -1.0
    assert t[1, 2].item() == -1.0
    assert t.__array_interface__["shape"] == (2, 3) and t.__array_interface__["typestr"] == "<f4"


def test_dlpack_with_numpy():
    t = dt.arange(4)
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    a[0] = 9
    assert t[0].item() == 9
    u = dt.from_dlpack(np.arange(3.0))
    assert u.dtype == dt.float64 and u.tolist() == [0.0, 1.0, 2.0]
    assert dt.from_dlpack(t) is t
    source = np.arange(3.0)
    copied, shared = dt.from_dlpack(source, device="cpu", copy=True), dt.from_dlpack(source, copy=False)
    source[0] = 7.0
    assert copied[0].item() == 0.0 and shared[0].item() == 7.0
    assert dt.from_dlpack(t, copy=True) is not t and dt.from_dlpack(t, copy=True).tolist() == t.tolist()
    with pytest.raises(AssertionError, match="CUDA"):
        dt.from_dlpack(source, device="cuda")
    with pytest.raises(TypeError, match="__dlpack__"):
        dt.from_dlpack([1, 2])
    with pytest.raises(BufferError, match="stream"):
        t.__dlpack__(stream=1)
    assert type(to_dlpack(t)).__name__ == "PyCapsule"


@pytest.mark.parity
def test_dlpack_with_torch_both_ways():
    torch = pytest.importorskip("torch")
    t = dt.arange(6.0).reshape(2, 3)
    x = torch.from_dlpack(t)
    x[0, 1] = 100.0
    assert t[0, 1].item() == 100.0
    y = torch.arange(4, dtype=torch.int32)
    u = dt.from_dlpack(y)
    y[2] = -5
    assert u.dtype == dt.int32 and u[2].item() == -5


@pytest.mark.parity
def test_load_state_dict_accepts_arrays_and_array_likes():
    torch = pytest.importorskip("torch")
    m = dt.nn.Linear(3, 2)
    w = np.arange(6, dtype=np.float64).reshape(2, 3)
    m.load_state_dict({"weight": w, "bias": torch.tensor([1.0, 2.0])})
    np.testing.assert_array_equal(m.weight.detach().numpy(), w.astype(np.float32))
    assert m.weight.dtype == dt.float32 and m.bias.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="size mismatch"):
        m.load_state_dict({"weight": np.zeros((3, 3)), "bias": np.zeros(2)})


def test_bfloat16_tensors_convert_through_array():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    t = dt.Tensor._make(np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16))
    assert not hasattr(t, "__array_interface__")
    a = np.asarray(t)
    assert a.dtype == np.dtype(ml_dtypes.bfloat16) and a.astype(np.float32).tolist() == [1.5, -2.0]
