"""``Tensor.view(dtype)``: the same bytes read as another dtype (never a conversion)."""

import numpy as np
import pytest

import disttorch as dt

ONE_AS_BYTES = [0, 0, 128, 63]  # 1.0 in float32, little-endian


def test_bytes_reinterpreted_and_memory_shared():
    u = dt.tensor(ONE_AS_BYTES * 2, dtype=dt.uint8)
    f = u.view(dt.float32)
    assert f.dtype is dt.float32 and f.tolist() == [1.0, 1.0]
    f.add_(1)  # 2.0 is [0, 0, 0, 64]: the write is seen through the bytes
    assert u.tolist()[:4] == [0, 0, 0, 64] and u._version == f._version == 1
    assert u.view(dtype=dt.float32).tolist() == [2.0, 2.0]
    assert dt.ones(2, 3).view(dt.int16).shape == (2, 6)
    assert dt.ones(4, dtype=dt.float32).view(dt.float64).shape == (2,)
    assert dt.zeros(2, dtype=dt.complex64).view(dt.float32).shape == (4,)
    assert dt.tensor([1.0]).view(dt.int32).item() == 1065353216


def test_not_differentiable_like_pytorch():
    x = dt.ones(2, requires_grad=True)
    v = (x * 2).view(dt.int32)
    assert not v.requires_grad and v.grad_fn is None


@pytest.mark.parametrize(
    "make, dtype, message",
    [
        (lambda: dt.tensor(1.0), dt.uint8, "self.dim\\(\\) cannot be 0 to view Float as Byte"),
        (lambda: dt.zeros(3, 4).t(), dt.uint8, "self.stride\\(-1\\) must be 1 to view Float as Byte"),
        (lambda: dt.zeros(3, 6, dtype=dt.uint8), dt.float32, "self.size\\(-1\\) must be divisible by 4"),
        (
            lambda: dt.zeros(3, 5, dtype=dt.uint8)[:, :4],
            dt.int32,
            "self.stride\\(0\\) must be divisible by 4",
        ),
        (
            lambda: dt.zeros(9, dtype=dt.uint8)[1:],
            dt.int32,
            "self.storage_offset\\(\\) must be divisible by 4",
        ),
    ],
)
def test_layouts_that_cannot_be_reread_raise(make, dtype, message):
    with pytest.raises(RuntimeError, match=message):
        make().view(dtype)


def test_dtype_and_shape_together_is_a_type_error():
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        dt.ones(2).view(2, dtype=dt.int32)


@pytest.mark.parity
@pytest.mark.parametrize(
    "src, dst",
    [
        ("uint8", "float32"),
        ("float32", "int32"),
        ("float32", "uint8"),
        ("float64", "float16"),
        ("complex64", "float64"),
        ("uint8", "bool"),
        ("float32", "bfloat16"),
        ("int16", "int64"),
    ],
)
def test_view_dtype_matches_pytorch(torch, src, dst):
    data = np.random.default_rng(0).integers(0, 2, size=(3, 8)).astype(np.uint8)
    outs = []
    for lib in (dt, torch):
        t = lib.tensor(data).view(getattr(lib, src)) if src != "uint8" else lib.tensor(data)
        v = t.view(getattr(lib, dst))
        outs.append((tuple(v.shape), v.view(lib.uint8).numpy().tobytes() if v.dim() else None))
    assert outs[0] == outs[1]
