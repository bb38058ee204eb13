"""Operands in the forms PyTorch's argument parser reads its own way: NumPy scalars (an
``np.bool_`` or ``np.complex64`` counts as a Python float), NumPy arrays refused by the
function and method forms of the binary ops, a number named ``self``, and ``unique``'s
refusals of a 0-d input and of empty dimensions it does not select."""

import numpy as np
import pytest

import disttorch as dt

SCALARS = [
    np.True_,
    np.int8(3),
    np.uint8(3),
    np.int64(2),
    np.float16(1.5),
    np.float32(1.5),
    np.complex64(1 + 1j),
]
DTYPES = ["bool", "uint8", "int32", "float16", "float32"]
FORMS = {
    "add": lambda L, t, s: t + s,
    "radd": lambda L, t, s: s + t,
    "mul": lambda L, t, s: L.mul(t, s),
    "sub": lambda L, t, s: t - s,
    "div": lambda L, t, s: t / s,
    "pow": lambda L, t, s: t**s,
    "eq": lambda L, t, s: t == s,
    "clamp": lambda L, t, s: t.clamp(min=s),
    "where": lambda L, t, s: L.where(t > 0, t, s),
}
pytestmark = pytest.mark.filterwarnings("ignore:Casting complex values")


def _outcome(lib, dtype, scalar, name):
    t = lib.tensor([1, 0]).to(getattr(lib, dtype))
    try:
        r = FORMS[name](lib, t, scalar)
    except (RuntimeError, TypeError) as e:
        return type(e).__name__
    return str(r.dtype).split(".")[-1], r.tolist()


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_scalars_as_pytorch(torch, dtype):
    for scalar in SCALARS:
        for name in FORMS:
            assert _outcome(dt, dtype, scalar, name) == _outcome(torch, dtype, scalar, name), (scalar, name)


def test_numpy_bool_is_a_float_operand():
    r = dt.tensor([1, 2]) + np.bool_(True)
    assert r.dtype == dt.float32 and r.tolist() == [2.0, 3.0]
    assert (dt.tensor([True, False]) * np.True_).dtype == dt.float32
    with pytest.raises(RuntimeError, match="can't be cast"):
        t = dt.tensor([1, 2])
        t += np.True_
    t = dt.tensor([1.0, 2.0])
    t += np.complex64(1 + 1j)  # the real part, as PyTorch's parser reads it
    assert t.tolist() == [2.0, 3.0]


def test_functions_and_methods_refuse_arrays():
    t, a = dt.tensor([1.0, 2.0]), np.array([1.0, 2.0])
    with pytest.raises(
        TypeError, match=r"add\(\): argument 'other' \(position 2\) must be Tensor, not numpy.ndarray"
    ):
        dt.add(t, a)
    with pytest.raises(TypeError, match=r"mul\(\): argument 'input' \(position 1\) must be Tensor"):
        dt.mul(a, t)
    with pytest.raises(TypeError, match=r"add\(\): argument 'other' \(position 1\)"):
        t.add(a)
    for call in (lambda: dt.pow(t, a), lambda: t.eq(a), lambda: dt.where(t > 1, t, a), lambda: t.maximum(a)):
        with pytest.raises(TypeError, match="must be Tensor, not numpy.ndarray"):
            call()
    assert (t + a).dtype == dt.float64  # an operator leaves the array to NumPy's rule, as PyTorch


def test_number_named_self():
    t = dt.tensor([1.0, 2.0])
    assert dt.pow(self=2, exponent=t).tolist() == [2.0, 4.0]
    assert dt.float_power(self=2, exponent=t).dtype == dt.float64
    assert dt.remainder(self=3, other=t).tolist() == [0.0, 1.0]
    assert dt.xlogy(self=2, other=t).tolist() == dt.xlogy(2, t).tolist()
    assert dt.special.zeta(self=2, other=t).tolist() == dt.special.zeta(2, t).tolist()
    with pytest.raises(TypeError, match="'self' must be a number"):
        dt.pow(self=t, exponent=2)


def test_unique_refusals(torch):
    for lib in (dt, torch):
        with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
            lib.unique(lib.tensor(3.0), dim=0)
        with pytest.raises(RuntimeError, match="0 sized dimensions, and they aren't selected"):
            lib.unique(lib.zeros(2, 0), dim=0)
        with pytest.raises(RuntimeError, match="0 sized dimensions, and they aren't selected"):
            lib.unique_consecutive(lib.zeros(2, 0), dim=0)


def test_unique_nan_rows_and_unsorted(torch):
    nan = float("nan")
    for args, kw in [
        ([[1.0, nan], [1.0, nan], [0.0, 1.0]], dict(dim=0, return_inverse=True, return_counts=True)),
        ([2.0, nan, 1.0, nan, 2.0], dict(sorted=False, return_inverse=True, return_counts=True)),
        ([[3, 1], [1, 2], [3, 1]], dict(dim=0, sorted=False, return_inverse=True, return_counts=True)),
    ]:
        ours, theirs = dt.unique(dt.tensor(args), **kw), torch.unique(torch.tensor(args), **kw)
        for o, p in zip(ours, theirs):
            np.testing.assert_array_equal(o.numpy(), p.numpy())


def test_tensor_only_methods_refuse_numbers():
    t = dt.tensor([1.0, 2.0])
    for call, name in [
        (lambda: t.atan2(2), "atan2"),
        (lambda: t.clone().atan2_(2), "atan2_"),
        (lambda: t.maximum(0), "maximum"),
    ]:
        with pytest.raises(
            TypeError, match=rf"{name}\(\): argument 'other' \(position 1\) must be Tensor, not int"
        ):
            call()
    assert t.clone().logical_and_(t > 1).tolist() == [0.0, 1.0]
