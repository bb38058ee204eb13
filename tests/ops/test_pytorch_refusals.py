"""Calls PyTorch refuses and disttorch once computed (or failed with an AttributeError):
a NumPy array, list or number as the ``input`` of a top-level function, ``torch.special``
kernels and LAPACK-backed ``torch.linalg`` functions on float16/bfloat16."""

import numpy as np
import pytest

import disttorch as dt


@pytest.mark.parametrize("fn", [dt.exp, dt.sum, dt.abs, dt.matmul, dt.max, dt.digamma, dt.logit, dt.i0])
@pytest.mark.parametrize(
    "value", [np.ones(2), [1.0, 2.0], 1.5, np.float64(1.5)], ids=["ndarray", "list", "float", "np"]
)
def test_non_tensor_input_is_a_type_error(fn, value):
    with pytest.raises(TypeError, match=r"argument 'input' \(position 1\) must be Tensor, not"):
        fn(value) if fn is not dt.matmul else fn(value, value)


def test_numbers_where_pytorch_takes_them():
    t = dt.ones(2)
    assert dt.add(2, t).tolist() == [3.0, 3.0]  # add/sub/mul/div take a number as input
    assert dt.mul(2, 3).item() == 6
    assert dt.pow(2, t).tolist() == [2.0, 2.0]  # number-first overloads
    assert dt.bitwise_and(True, dt.tensor([True, False])).tolist() == [True, False]
    assert dt.exp(input=t).tolist() == pytest.approx([np.e, np.e])
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        dt.pow(2, 2)
    with pytest.raises(TypeError, match="must be Tensor, not numpy.ndarray"):
        dt.add(np.ones(2), t)


@pytest.mark.parametrize("name", ["ndtri", "log_ndtr", "erfcx", "bessel_j0", "modified_bessel_k1", "airy_ai"])
@pytest.mark.parametrize("dtype, scalar", [(dt.float16, "Half"), (dt.bfloat16, "BFloat16")])
def test_special_kernels_without_16_bit_loops(name, dtype, scalar):
    with pytest.raises(NotImplementedError, match=f"\"{name}_cpu\" not implemented for '{scalar}'"):
        getattr(dt.special, name)(dt.tensor([0.5], dtype=dtype))


def test_special_16_bit_refusals_follow_the_result_dtype():
    half = dt.tensor([1.0, 2.0], dtype=dt.float16)
    with pytest.raises(NotImplementedError, match="\"zeta_cpu\" not implemented for 'Half'"):
        dt.special.zeta(2.0, half)
    with pytest.raises(NotImplementedError, match="chebyshev_polynomial_t_cpu"):
        dt.special.chebyshev_polynomial_t(half, 2)
    out = dt.special.chebyshev_polynomial_t(dt.tensor([0.5, 0.3]), half)  # float32 result
    assert out.dtype == dt.float32 and out.tolist() == pytest.approx([0.5, 2 * 0.3 * 0.3 - 1])
    assert dt.special.erf(half).dtype == dt.float16  # kernels with a 16-bit loop compute


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda m: dt.linalg.inv(m),
            RuntimeError,
            "linalg.inv: Low precision dtypes not supported. Got Half",
        ),
        (lambda m: dt.linalg.inv_ex(m), RuntimeError, "linalg.inv: Low precision dtypes not supported"),
        (lambda m: dt.logdet(m), RuntimeError, "logdet: Low precision dtypes not supported. Got Half"),
        (lambda m: dt.linalg.det(m), NotImplementedError, "\"lu_cpu\" not implemented for 'Half'"),
        (lambda m: dt.linalg.solve(m, m), NotImplementedError, '"lu_cpu"'),
        (lambda m: dt.linalg.cholesky(m), NotImplementedError, '"cholesky_cpu"'),
        (lambda m: dt.cholesky_solve(m, m), NotImplementedError, '"cholesky_solve_cpu"'),
        (lambda m: dt.linalg.qr(m), NotImplementedError, '"geqrf_cpu"'),
        (lambda m: dt.linalg.eigvalsh(m), NotImplementedError, '"linalg_eigh_cpu"'),
        (lambda m: dt.linalg.eig(m), NotImplementedError, '"linalg_eig_out_cpu"'),
        (lambda m: dt.linalg.svdvals(m), NotImplementedError, '"linalg_svd_cpu"'),
        (lambda m: dt.linalg.cond(m), NotImplementedError, '"linalg_svd_cpu"'),
        (lambda m: dt.linalg.cond(m, "fro"), RuntimeError, "linalg.inv: Low precision"),
        (lambda m: dt.linalg.matrix_norm(m, "nuc"), RuntimeError, "linalg.matrix_norm: Low precision"),
        (lambda m: dt.norm(m, "nuc"), RuntimeError, "linalg.matrix_norm: Low precision"),
        (lambda m: dt.linalg.pinv(m), RuntimeError, r"linalg.pinv\(Half\{\[2, 2\]\}\): expected a tensor"),
        (lambda m: dt.linalg.lstsq(m, m), RuntimeError, "doesn't handle types other than float and double"),
        (lambda m: dt.linalg.solve_triangular(m, m, upper=True), NotImplementedError, "triangular_solve_cpu"),
        (lambda m: dt.linalg.householder_product(m, m[0]), NotImplementedError, '"orgqr_cpu"'),
        (
            lambda m: dt.linalg.vander(m[0]),
            RuntimeError,
            "vander supports floating point, complex, and integer",
        ),
    ],
)
def test_linalg_16_bit_errors_name_pytorchs_kernel(call, error, message):
    with pytest.raises(error, match=message):
        call(dt.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=dt.float16))


def test_linalg_16_bit_functions_pytorch_computes(torch):
    m = np.array([[2.0, -1.0], [1.0, 3.0]])
    for dtype in ("float16", "bfloat16"):
        a, b = dt.tensor(m, dtype=getattr(dt, dtype)), torch.tensor(m, dtype=getattr(torch, dtype))
        for ord in ("fro", 1, -1, float("inf")):
            got, want = dt.linalg.matrix_norm(a, ord), torch.linalg.matrix_norm(b, ord)
            assert got.dtype == a.dtype and got.float().item() == want.float().item()
    e = dt.linalg.matrix_exp(dt.tensor(m * 0.1, dtype=dt.float16))  # (PyTorch's 16-bit loop overflows)
    assert e.dtype == dt.float16
    np.testing.assert_allclose(
        e.float().numpy(), torch.linalg.matrix_exp(torch.tensor(m * 0.1)).numpy(), rtol=2e-3
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.sum(0, 1),
        lambda x: dt.sum(x, 0, 1),
        lambda x: x.mean(0, keepdim=1),
        lambda x: x.amax(0, np.bool_(True)),
        lambda x: x.max(0, 1.0),
        lambda x: x.argmax(0, 1),
        lambda x: x.logsumexp(0, keepdims=1),
    ],
)
def test_keepdim_must_be_a_bool(call):
    with pytest.raises(TypeError, match="argument 'keepdim' must be bool, not"):
        call(dt.ones(2, 3))


def test_keepdim_bool_still_works():
    x = dt.ones(2, 3)
    assert x.sum(0, True).shape == (1, 3) and dt.amax(x, 1, keepdim=False).shape == (2,)


def test_var_mean_and_std_mean_name_themselves_for_integers():
    with pytest.raises(RuntimeError, match="^var_mean only support floating point and complex dtypes"):
        dt.var_mean(dt.ones(2, dtype=dt.int64))
    with pytest.raises(RuntimeError, match="^std_mean only support"):
        dt.std_mean(dt.ones(2, dtype=dt.int64))


def test_complex32_is_a_dtype_without_tensors():
    assert dt.chalf is dt.complex32 and repr(dt.complex32) == "disttorch.complex32"
    assert dt.complex32.is_complex and not dt.complex32.is_floating_point and dt.complex32.itemsize == 4
    assert dt.complex32.to_real() is dt.float16 and dt.float16.to_complex() is dt.complex32
    assert dt.promote_types(dt.float16, dt.complex32) is dt.complex32
    assert dt.promote_types(dt.int64, dt.complex32) is dt.complex32
    assert dt.promote_types(dt.complex32, dt.float32) is dt.complex64
    assert dt.promote_types(dt.float64, dt.complex32) is dt.complex128
    for make in (
        lambda: dt.zeros(2, dtype=dt.complex32),
        lambda: dt.ones(2).to(dt.complex32),
        lambda: dt.ones(2).chalf(),
    ):
        with pytest.raises(NotImplementedError, match=r"no complex32 \(ComplexHalf\) tensors.*use complex64"):
            make()


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.sum("N"),
        lambda x: x.amax(["N", "C"]),
        lambda x: x.squeeze("N"),
        lambda x: x.flip("N"),
        lambda x: x.std(dim=(0, 1.0)),
    ],
)
def test_dim_names_and_floats_are_type_errors(call):
    """No named tensors here: a name (or a float) as a dim is PyTorch's TypeError for a
    tensor without names, not a ValueError from int()."""
    with pytest.raises(TypeError, match="dim"):
        call(dt.ones(2, 3))


@pytest.mark.parametrize("fn", [dt.zeros_like, dt.ones_like, dt.empty_like, dt.rand_like, dt.randn_like])
def test_like_factories_take_tensors_only(fn):
    with pytest.raises(
        TypeError, match=r"_like\(\): argument 'input' \(position 1\) must be Tensor, not numpy.ndarray"
    ):
        fn(np.ones(2))
