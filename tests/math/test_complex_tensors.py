"""Complex dtypes and tensors: names, promotion, creation, printing, the parts and the
complex-only ops, and the errors PyTorch gives for ordering complex numbers."""

import numpy as np
import pytest

import disttorch as dt


def test_dtype_attributes():
    assert dt.cfloat is dt.complex64 and dt.cdouble is dt.complex128
    assert dt.complex64.is_complex and not dt.float32.is_complex
    assert not dt.complex64.is_floating_point and dt.complex64.is_signed
    assert dt.complex64.itemsize == 8 and dt.complex128.itemsize == 16
    assert dt.complex64.to_real() is dt.float32 and dt.complex128.to_real() is dt.float64
    assert dt.float32.to_complex() is dt.complex64 and dt.float64.to_complex() is dt.complex128
    assert dt.float32.to_real() is dt.float32 and dt.complex64.to_complex() is dt.complex64
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for Long"):
        dt.int64.to_complex()
    assert repr(dt.complex64) == "disttorch.complex64"


def test_promotion_rules():
    f32, f64 = dt.ones(2), dt.ones(2, dtype=dt.float64)
    i64 = dt.ones(2, dtype=dt.int64)
    c64, c128 = dt.tensor(1j, dtype=dt.complex64), dt.tensor(1j, dtype=dt.complex128)
    assert (f32 + c128).dtype == dt.complex64  # a 0-dim complex keeps the float's precision
    assert (f64 + c64).dtype == dt.complex128
    assert (i64 + c64).dtype == dt.complex64
    assert (f32 * 1j).dtype == dt.complex64 and (f64 * 1j).dtype == dt.complex128
    assert (i64 * 1j).dtype == dt.complex64
    assert (dt.ones(2, dtype=dt.complex64) + f64).dtype == dt.complex128
    assert (dt.ones(2, dtype=dt.complex64) + dt.tensor(1.0, dtype=dt.float64)).dtype == dt.complex64
    assert dt.promote_types(dt.float64, dt.complex64) is dt.complex128
    assert dt.promote_types(dt.float16, dt.complex64) is dt.complex64
    assert dt.result_type(dt.tensor([1.0]), 1j) is dt.complex64
    assert dt.result_type(dt.tensor([1]), 2.0) is dt.float32
    assert dt.result_type(1, 2.5) is dt.float32


def test_creation():
    assert dt.tensor(1 + 2j).dtype == dt.complex64
    assert dt.tensor([1, 2j]).dtype == dt.complex64
    assert dt.zeros(3, dtype=dt.complex128).dtype == dt.complex128
    dt.set_default_dtype(dt.float64)
    try:
        assert dt.tensor(1j).dtype == dt.complex128
    finally:
        dt.set_default_dtype(dt.float32)
    assert dt.from_numpy(np.array([1 + 1j])).dtype == dt.complex128
    dt.manual_seed(0)
    z = dt.randn(200_000, dtype=dt.cfloat)
    assert z.dtype == dt.complex64
    # standard complex normal: real and imaginary parts each of variance 1/2
    assert abs(z.real.var().item() - 0.5) < 0.01 and abs(z.imag.var().item() - 0.5) < 0.01
    u = dt.rand(1000, dtype=dt.complex128)
    assert u.dtype == dt.complex128 and 0 <= u.real.min().item() and u.imag.max().item() < 1
    assert dt.ones(2).cfloat().dtype == dt.complex64 and dt.ones(2).cdouble().dtype == dt.complex128


def test_printing_matches_pytorch():
    assert repr(dt.tensor(1 + 2j)) == "tensor(1.+2.j)"
    assert repr(dt.tensor([1 + 2j, 3.5 - 1j])) == "tensor([1.0000+2.j, 3.5000-1.j])"
    assert repr(dt.tensor([[1 + 2j, 3.5 - 1j], [1e-5 + 3j, 100j]], dtype=dt.cdouble)) == (
        "tensor([[1.0000e+00+2.j, 3.5000e+00-1.j],\n"
        "        [1.0000e-05+3.j, 0.0000e+00+100.j]], dtype=disttorch.complex128)"
    )


def test_real_and_imag_are_writable_views():
    z = dt.zeros(3, dtype=dt.complex64)
    z.real[0] = 5
    z.imag.add_(2)
    z.imag = dt.tensor([1.0, 2.0, 3.0])
    assert z.tolist() == [5 + 1j, 2j, 3j]
    r = dt.tensor([1.0, 2.0])
    assert dt.real(r) is r
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        r.imag


def test_view_as_real_and_complex_share_memory():
    z = dt.tensor([1 + 2j, 3 - 4j])
    v = dt.view_as_real(z)
    assert v.shape == (2, 2) and v.dtype == dt.float32 and v.tolist() == [[1, 2], [3, -4]]
    v[0, 1] = 7
    assert z[0].item() == 1 + 7j
    x = dt.arange(6, dtype=dt.float64).reshape(3, 2)
    c = dt.view_as_complex(x)
    assert c.dtype == dt.complex128 and c.tolist() == [1j, 2 + 3j, 4 + 5j]
    c[0] = 9
    assert x[0, 0].item() == 9
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        dt.view_as_complex(dt.ones(3, 3))
    with pytest.raises(RuntimeError, match="last dimension with stride 1"):
        dt.view_as_complex(dt.ones(2, 4).t())
    with pytest.raises(RuntimeError, match="only supported for float and double tensors"):
        dt.view_as_complex(dt.ones(3, 2, dtype=dt.int32))
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        dt.view_as_real(dt.ones(2))


def test_complex_polar_conj_angle_sgn():
    re, im = dt.tensor([1.0, -2.0]), dt.tensor([3.0, 0.5])
    assert dt.complex(re, im).tolist() == [1 + 3j, -2 + 0.5j]
    with pytest.raises(RuntimeError, match="Expected object of scalar type Float"):
        dt.complex(re, im.double())
    p = dt.polar(dt.tensor([2.0], dtype=dt.float64), dt.tensor([np.pi / 2], dtype=dt.float64))
    np.testing.assert_allclose(p.numpy(), [2j], atol=1e-12)
    z = dt.tensor([3 + 4j, 0j, -1j])
    assert z.conj().tolist() == [3 - 4j, 0j, 1j] and dt.conj_physical(z).tolist() == [3 - 4j, 0j, 1j]
    w = z.clone()
    w.conj_physical_()
    assert w.tolist() == [3 - 4j, 0j, 1j]
    assert not z.conj().is_conj() and not dt.is_neg(z) and dt.resolve_conj(z) is z and dt.resolve_neg(z) is z
    np.testing.assert_allclose(z.angle().numpy(), [np.arctan2(4, 3), 0, -np.pi / 2], rtol=1e-6)
    np.testing.assert_allclose(dt.tensor([-1.0, 0.0, 2.0, np.nan]).angle().numpy(), [np.pi, 0, 0, np.nan])
    np.testing.assert_allclose(z.sgn().numpy(), [0.6 + 0.8j, 0, -1j], rtol=1e-6)
    np.testing.assert_allclose(z.abs().numpy(), [5, 0, 1])
    assert dt.tensor([-2.0, 3.0]).sgn().tolist() == [-1, 1]
    assert dt.isreal(dt.tensor([1 + 0j, 1j])).tolist() == [True, False]
    assert dt.isreal(dt.tensor([1.0])).tolist() == [True]
    assert dt.is_complex(z) and z.is_complex() and not dt.ones(1).is_complex()


def test_arithmetic_and_reductions():
    a = np.array([[1 + 2j, -0.5 + 1j], [3 - 1j, 2j]])
    b = np.array([[2 - 1j, 1j], [0.5 + 0.5j, -1 + 0j]])
    ta, tb = dt.tensor(a), dt.tensor(b)
    for got, want in [
        (ta + tb, a + b),
        (ta * tb, a * b),
        (ta / tb, a / b),
        (ta**2, a**2),
        (ta @ tb, a @ b),
        (ta.exp(), np.exp(a)),
        (ta.log(), np.log(a)),
        (ta.sqrt(), np.sqrt(a)),
        (ta.sin(), np.sin(a)),
        (ta.tanh(), np.tanh(a)),
        (ta.sum(0), a.sum(0)),
        (ta.mean(), a.mean()),
        (ta.mH, a.conj().T),
    ]:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    assert (ta * 2.0).dtype == dt.complex128 and (ta.to(dt.complex64) * 2.0).dtype == dt.complex64
    np.testing.assert_allclose(ta.norm().item(), np.linalg.norm(a), rtol=1e-6)
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert ta.float().tolist() == [[1, -0.5], [3, 0]]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Float"):
        dt.ones(2).add_(ta[0])


@pytest.mark.parametrize(
    "op, err, msg",
    [
        (lambda z: z < z, NotImplementedError, "\"lt_cpu\" not implemented for 'ComplexFloat'"),
        (lambda z: z >= 1, NotImplementedError, '"ge_cpu" not implemented'),
        (lambda z: z.max(), NotImplementedError, '"max_all" not implemented'),
        (lambda z: z.min(0), RuntimeError, "min\\(\\): does not support complex input"),
        (lambda z: z.argmax(), RuntimeError, "argmax\\(\\): does not support complex input"),
        (lambda z: z.sort(), RuntimeError, "Sort does not support complex dtypes on CPU"),
        (lambda z: z.topk(1), RuntimeError, "topk does not support complex dtypes on CPU"),
        (lambda z: dt.maximum(z, z), RuntimeError, "maximum not implemented for complex tensors"),
        (lambda z: z.clamp(0, 1), NotImplementedError, "clamp is not supported for complex types"),
        (lambda z: z.amax(), NotImplementedError, "max_values_cpu"),
        (lambda z: z.relu(), NotImplementedError, "clamp is not supported for complex types"),
        (lambda z: z.floor(), NotImplementedError, "floor is not supported for complex inputs"),
        (lambda z: z.sign(), NotImplementedError, "Please use torch.sgn instead"),
        (lambda z: dt.erf(z), NotImplementedError, "erf_vml_cpu"),
        (lambda z: dt.special.erfc(z), NotImplementedError, "\"erfc\" not implemented for 'ComplexFloat'"),
        (lambda z: dt.lgamma(z), NotImplementedError, "lgamma"),
        (lambda z: z.round(), NotImplementedError, "round_vml_cpu"),
        (lambda z: z.median(), NotImplementedError, "median_cpu"),
        (lambda z: dt.nansum(z), RuntimeError, "nansum on CPU does not support complex inputs"),
        (lambda z: dt.deg2rad(z), RuntimeError, "deg2rad is not supported for complex tensors"),
        (lambda z: dt.histc(z), NotImplementedError, "aminmax_cpu"),
        (lambda z: dt.unique(z), NotImplementedError, '"unique" not implemented'),
    ],
)
def test_ordering_complex_raises_as_pytorch(op, err, msg):
    with pytest.raises(err, match=msg):
        op(dt.tensor([1 + 1j, 2j]))


@pytest.mark.parity
def test_complex_math_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    z = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    for name in ("asinh", "acosh", "atanh", "exp2", "sinc", "cov", "corrcoef", "sigmoid", "tanh", "log1p"):
        ours, theirs = getattr(dt, name)(dt.tensor(z)), getattr(torch, name)(torch.tensor(z))
        assert str(ours.dtype)[10:] == str(theirs.dtype)[6:], name
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)
    np.testing.assert_allclose(
        dt.logsumexp(dt.tensor(z), 1).numpy(), torch.logsumexp(torch.tensor(z), 1).numpy(), rtol=1e-5
    )


def test_equality_still_works():
    z = dt.tensor([1 + 1j, 2j])
    assert (z == z).tolist() == [True, True] and (z != 1 + 1j).tolist() == [False, True]


def test_finfo_of_complex_is_of_its_real_type():
    assert dt.finfo(dt.complex64) == dt.finfo(dt.float32)
    assert dt.finfo(dt.complex128).eps == dt.finfo(dt.float64).eps


@pytest.mark.parity
def test_printing_and_ops_match_pytorch():
    torch = pytest.importorskip("torch")
    a = np.array([[1 + 2j, -0.5 + 1j], [3 - 1j, 1e-3j]], dtype=np.complex64)
    assert repr(dt.tensor(a)).replace("disttorch", "torch") == repr(torch.tensor(a))
    assert repr(dt.tensor(a).angle()) == repr(torch.tensor(a).angle())


def test_save_load_round_trip(tmp_path):
    z = dt.tensor([1 + 2j, -3j], dtype=dt.complex128)
    dt.save({"z": z}, tmp_path / "z.pt")
    back = dt.load(tmp_path / "z.pt")["z"]
    assert back.dtype == dt.complex128 and back.tolist() == z.tolist()


@pytest.mark.parity
def test_files_cross_with_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    theirs = torch.tensor([0.5 + 1j, 2 - 1j], dtype=torch.complex64)
    torch.save(theirs, tmp_path / "t.pt")
    ours = dt.load(tmp_path / "t.pt")
    assert ours.dtype == dt.complex64 and ours.tolist() == theirs.tolist()
    dt.save(ours * 2, tmp_path / "d.pt")
    assert torch.load(tmp_path / "d.pt").tolist() == (theirs * 2).tolist()


def test_python_number_conversions():
    assert float(dt.tensor(2 + 0j)) == 2.0 and complex(dt.tensor(1 + 1j)) == 1 + 1j
    assert complex(dt.tensor(2.0)) == 2 + 0j
    with pytest.raises(RuntimeError, match="value cannot be converted to type double without overflow"):
        float(dt.tensor(1 + 1j))
    with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t"):
        int(dt.tensor(1j))


def test_random_fills_and_init_of_complex_tensors():
    dt.manual_seed(0)
    z = dt.zeros(100_000, dtype=dt.cfloat).normal_(5, 2)
    for part in (z.real, z.imag):  # each part N(mean, std**2 / 2), as PyTorch
        assert abs(part.mean().item() - 5) < 0.02 and abs(part.std().item() - 2**0.5) < 0.02
    u = dt.zeros(1000, dtype=dt.cdouble).uniform_(1, 3)
    assert 1 <= u.real.min().item() and u.imag.max().item() < 3 and u.imag.std().item() > 0.1
    w = dt.nn.Linear(3, 2, dtype=dt.cfloat).weight
    assert w.dtype == dt.complex64 and w.imag.abs().sum().item() > 0


def test_assert_close_reports_real_differences_for_complex():
    a = dt.tensor([1 + 1j, 2j])
    dt.testing.assert_close(a, a.clone())
    with pytest.raises(AssertionError, match=r"Greatest relative difference: 0\.0070357\d* at index \(0,\)"):
        dt.testing.assert_close(a, a + 1e-2j)


def test_to_python_types_as_pytorch():
    x = dt.tensor([1, 2])
    assert x.to(complex).dtype == dt.complex128 and x.to(dtype=complex).dtype == dt.complex128
    assert (
        x.to(float).dtype == dt.float64
        and x.to(bool).dtype == dt.bool
        and x.float().to(int).dtype == dt.int64
    )


def test_sgn_of_bool_is_the_bool_tensor():
    b = dt.tensor([True, False])
    assert dt.sgn(b).dtype == dt.bool and dt.sgn(b).tolist() == [True, False]
    assert b.clone().sgn_().tolist() == [True, False]
