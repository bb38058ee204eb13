"""Answers to calls found by differential fuzzing against PyTorch: data inference of
``tensor`` from NumPy scalars, factories' ``dtype`` against ``out``, the nuclear norm of
``torch.norm``, the linear-algebra checks (``linalg.norm``'s orders and dims, ``solve``'s
shapes and singular matrices, a norm's ``dtype`` and ``out``), and the kernels PyTorch does
not have (``floor`` of bools, ``bitwise_not`` of floats, ``bincount`` of floats, ``cov`` of
bools, ``aminmax`` over nothing), einsum's sublist form and ``arange(end=n)``."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck


@pytest.mark.parametrize(
    "data, want",
    [
        ([np.float64(1.0)], dt.float64),
        ([np.float32(1.0), 2.0], dt.float32),
        ([np.int32(1), 2], dt.int64),
        ([np.int8(1), np.uint8(2)], dt.int16),
        ([[np.int8(1)], [2]], dt.int64),
        ([np.array([1, 2], dtype=np.int16)], dt.int16),
        ([np.float16(1.0), np.int64(3)], dt.float16),
        ([dt.tensor(1.0, dtype=dt.float64), 2.0], dt.float64),
        ([1, 2.5], dt.float32),
    ],
)
def test_tensor_infers_numpy_elements_dtypes(data, want):
    assert dt.tensor(data).dtype == want


def test_tensor_of_int_beyond_int64_is_the_parsers_error():
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        dt.tensor([2**63])


def test_full_reads_numpy_bool_as_float():
    assert dt.full((2,), np.True_).dtype == dt.float32


def test_factory_dtype_must_match_out():
    with pytest.raises(RuntimeError, match=r"dtype Long does not match dtype of out parameter \(Float\)"):
        dt.ones(3, out=dt.empty(3), dtype=dt.int64)
    assert dt.zeros(2, out=dt.empty(2), dtype=dt.float32).tolist() == [0.0, 0.0]


def test_norm_nuc(torch):
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(
        dt.norm(dt.tensor(x), p="nuc", dim=(1, 2)).numpy(),
        torch.norm(torch.tensor(x), p="nuc", dim=(1, 2)).numpy(),
    )
    assert tuple(dt.norm(dt.tensor(x), p="nuc", dim=(0, 2), keepdim=True).shape) == (1, 3, 1)
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple. Got 0 1 2"):
        dt.norm(dt.tensor(x), p="nuc")
    a = dt.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda t: dt.norm(t, p="nuc"), (a,))


def test_linalg_norm_orders_and_dims():
    x = dt.ones(2, 3, 3)
    with pytest.raises(
        RuntimeError, match="If dim is not specified but ord is, the input must be 1D or 2D. Got 3D"
    ):
        dt.linalg.norm(x, ord="fro")
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple. Got 1"):
        dt.linalg.norm(x, ord="nuc", dim=1)


def test_solve_shapes_and_singular_message():
    with pytest.raises(
        RuntimeError, match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 2x1\)"
    ):
        dt.linalg.solve(dt.eye(3), dt.ones(2))
    with pytest.raises(
        dt.linalg.LinAlgError, match=r"torch.linalg.solve: \(Batch element 1\): The solver failed"
    ):
        dt.linalg.solve(dt.stack([dt.eye(3), dt.zeros(3, 3)]), dt.ones(2, 3))


def test_norm_dtype_and_out_checks():
    with pytest.raises(RuntimeError, match=r"input \(Double\) should be convertible without narrowing"):
        dt.linalg.vector_norm(dt.ones(3, dtype=dt.float64), dtype=dt.float32)
    with pytest.raises(RuntimeError, match="dtype should be complex for complex inputs"):
        dt.linalg.vector_norm(dt.ones(3, dtype=dt.complex64), dtype=dt.float32)
    with pytest.raises(RuntimeError, match="dtype should be real for real inputs"):
        dt.norm(dt.ones(3), dtype=dt.complex64)
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        dt.norm(dt.ones(3, dtype=dt.int64), dtype=dt.float32)
    assert dt.norm(dt.ones(3, dtype=dt.float16), dtype=dt.float32).dtype == dt.float32
    with pytest.raises(RuntimeError, match="linalg.norm expected out tensor dtype Float but got: Double"):
        dt.linalg.norm(dt.ones(3), out=dt.empty(0, dtype=dt.float64))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double"):
        dt.linalg.vector_norm(dt.ones(3), out=dt.empty(0, dtype=dt.float64))


@pytest.mark.filterwarnings("ignore:Using torch.cross without specifying the dim")
def test_kernels_pytorch_does_not_have():
    b = dt.tensor([True, False])
    for fn, kernel in [(dt.floor, "floor_vml_cpu"), (dt.ceil, "ceil_vml_cpu"), (dt.trunc, "trunc_vml_cpu")]:
        with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Bool'"):
            fn(b)
    with pytest.raises(NotImplementedError, match="\"bitwise_not_cpu\" not implemented for 'Float'"):
        dt.bitwise_not(dt.ones(2))
    with pytest.raises(TypeError, match="only implemented on integer and Boolean-type tensors"):
        ~dt.ones(2)
    with pytest.raises(NotImplementedError, match="\"bincount_cpu\" not implemented for 'Float'"):
        dt.bincount(dt.ones(2))
    with pytest.raises(RuntimeError, match="cov\\(\\): bool dtype is not supported"):
        dt.corrcoef(b[None])
    with pytest.raises(RuntimeError, match="The `\\+` operator, on a bool tensor is not supported"):
        dt.positive(b)
    with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
        dt.cross(dt.ones(2), dt.ones(2))
    with pytest.raises(RuntimeError, match="cannot compute aminmax over an empty dimension"):
        dt.aminmax(dt.ones(0))
    assert dt.aminmax(dt.ones(0, 3), dim=1).min.shape == (0,)


def test_einsum_sublist_form(torch):
    x = np.arange(6.0).reshape(2, 3)
    for args in ([0, 1], [2, 1], [0, 2]), ([0, 1], [2, 1]):
        ours = dt.einsum(dt.tensor(x), args[0], dt.tensor(x), *args[1:])
        theirs = torch.einsum(torch.tensor(x), args[0], torch.tensor(x), *args[1:])
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    assert dt.einsum(dt.tensor(x), [..., 1], [...]).tolist() == [3.0, 12.0]
    a = dt.tensor(x, requires_grad=True)
    assert gradcheck(lambda t: dt.einsum(t, [0, 1], t, [2, 1], [0, 2]), (a,))


def test_arange_end_keyword():
    assert dt.arange(end=3).tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match="arange\\(\\) missing required argument 'end'"):
        dt.arange()


def test_div_trunc_of_complex_is_not_a_kernel():
    with pytest.raises(NotImplementedError, match="\"div_trunc_cpu\" not implemented for 'ComplexFloat'"):
        dt.div(dt.ones(2), 1j, rounding_mode="trunc")


def test_broadcast_errors_of_inplace_ops_lerp_and_copy():
    with pytest.raises(
        RuntimeError, match=r"size of tensor a \(2\) must match the size of tensor b \(4\) at non-singleton"
    ):
        dt.ones(2, 3).mul_(dt.ones(4, 3))
    with pytest.raises(RuntimeError, match=r"size of tensor a \(2\) must match the size of tensor b \(4\)"):
        dt.lerp(dt.ones(2, 3), dt.ones(2, 3), dt.ones(4, 1))
    with pytest.raises(RuntimeError, match=r"output with shape \[\] doesn't match the broadcast shape \[1\]"):
        dt.ones(()).copy_(dt.ones(1))
    assert dt.zeros(2, 3).copy_(dt.ones(3)).sum().item() == 6.0


def test_searchsorted_shape_checks_and_empty_rows(torch):
    for boundaries, values in [((2, 3), (3, 1)), ((2, 3), (2,))]:
        with pytest.raises(
            RuntimeError, match="the first N-1 dimensions of boundaries tensor and input value"
        ):
            dt.searchsorted(dt.ones(boundaries), dt.ones(values))
    with pytest.raises(
        RuntimeError, match="input value can be a scalar only when boundaries tensor dimension is 1"
    ):
        dt.searchsorted(dt.ones(2, 3), 1.0)
    with pytest.raises(RuntimeError, match="boundaries tensor should have positive dimension"):
        dt.searchsorted(dt.tensor(1.0), dt.ones(2))
    assert dt.searchsorted(dt.ones(2, 0), dt.ones(2, 3)).tolist() == [[0, 0, 0], [0, 0, 0]]
    seq, x = np.array([[1.0, 2], [3, 4]]), np.array([[1.5, 9], [3.5, 0]])
    ours = dt.searchsorted(dt.tensor(seq), dt.tensor(x), right=True)
    np.testing.assert_array_equal(
        ours.numpy(), torch.searchsorted(torch.tensor(seq), torch.tensor(x), right=True).numpy()
    )


def test_masked_scatter_needs_enough_source():
    mask = dt.tensor([[True, False], [False, True]])
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in mask"):
        dt.zeros(2, 2).masked_scatter(mask, dt.tensor([1.0]))
    assert dt.zeros(2, 2).masked_scatter(mask, dt.tensor([1.0, 2, 3])).tolist() == [[1.0, 0.0], [0.0, 2.0]]


def test_out_form_of_sum_prod_median_needs_dim():
    x = dt.ones(2, 3)
    for fn in (dt.sum, dt.prod):
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            fn(x, out=dt.empty(0))
    with pytest.raises(TypeError, match='median\\(\\) missing 1 required positional arguments: "dim"'):
        dt.median(x, out=(dt.empty(0), dt.empty(0, dtype=dt.long)))
    assert dt.sum(x, dim=None, out=dt.empty(0)).item() == 6.0


def test_complex_zero_to_a_tensor_zero_is_nan(torch):
    z, e = [0j, 1 + 1j, 0j], [0j, 0j, 2 + 0j]
    for ours, theirs in [
        (dt.tensor(z) ** dt.tensor(e), torch.tensor(z) ** torch.tensor(e)),
        (dt.pow(0j, dt.tensor(e)), torch.pow(0j, torch.tensor(e))),
        (dt.tensor(z) ** 0, torch.tensor(z) ** 0),  # a number exponent: 1, as PyTorch's
    ]:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_tensor_of_uninferable_data_names_the_element():
    for data, name in [([1, None], "NoneType"), ([[1], [None]], "NoneType"), ({1, 2}, "set")]:
        with pytest.raises(RuntimeError, match=f"Could not infer dtype of {name}"):
            dt.tensor(data)
    assert dt.tensor([np.complex128(1j), 1.0]).dtype == dt.complex128


def test_setitem_into_an_expanded_tensor():
    base = dt.zeros(2, 1)
    expanded = base.expand(2, 3)
    expanded[1, 0] = 5.0  # one element: one address, as PyTorch allows
    assert base.tolist() == [[0.0], [5.0]]
    expanded[dt.tensor([0])] = dt.tensor(2.0)  # an advanced index: PyTorch's index_put_
    assert base.tolist() == [[2.0], [5.0]]
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        expanded[0] = 1.0  # a row: three elements at one address


def test_dtypes_without_a_kernel():
    with pytest.raises(RuntimeError, match="Unsupported input type encountered for isin\\(\\): Bool"):
        dt.isin(dt.tensor([True, False]), dt.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="signbit is not implemented for complex tensors"):
        dt.signbit(dt.tensor([1j]))
    with pytest.raises(NotImplementedError, match="\"frac_cpu\" not implemented for 'ComplexFloat'"):
        dt.frac(dt.tensor([1j]))
    with pytest.raises(
        NotImplementedError, match="\"searchsorted_out_cpu\" not implemented for 'ComplexFloat'"
    ):
        dt.bucketize(dt.tensor([1.0]), dt.tensor([1j]))
    with pytest.raises(NotImplementedError, match="\"cdist\" not implemented for 'Half'"):
        dt.cdist(dt.ones(2, 2, dtype=dt.float16), dt.ones(2, 2, dtype=dt.float16))
    with pytest.raises(RuntimeError, match="cdist only supports floating-point dtypes, X1 got: Long"):
        dt.cdist(dt.ones(2, 2, dtype=dt.long), dt.ones(2, 2))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        dt.cdist(dt.ones(2, 2), dt.ones(2, 2, dtype=dt.float64))


def test_comparison_operators_leave_lists_to_python():
    t = dt.tensor([1, 2])
    assert (t == [1, 2]) is False and (t != [1, 2]) is True
    with pytest.raises(TypeError, match="'<' not supported between instances of 'Tensor' and 'list'"):
        t < [1, 2]  # noqa: B015


def test_solve_ex_of_a_singular_matrix_reports_info():
    """``solve_ex`` raises only with ``check_errors``; a singular matrix of a batch gets its
    first zero pivot as ``info`` (and NaN solutions), the others their solutions."""
    A = dt.stack([dt.zeros(2, 2, dtype=dt.float64), 2 * dt.eye(2, dtype=dt.float64)])
    got = dt.linalg.solve_ex(A, dt.ones(2, 2, 1, dtype=dt.float64))
    assert got.info.tolist() == [1, 0] and got.result[1].tolist() == [[0.5], [0.5]]
    assert bool(got.result[0].isnan().all())
    with pytest.raises(RuntimeError, match="singular"):
        dt.linalg.solve_ex(A, dt.ones(2, 2, dtype=dt.float64), check_errors=True)


def test_empty_matrices_lu_factor_ex_and_cond():
    e = dt.zeros(0, 0, dtype=dt.float64)
    lu = dt.linalg.lu_factor_ex(e)
    assert lu.LU.shape == (0, 0) and lu.pivots.shape == (0,) and lu.info.item() == 0
    assert dt.linalg.cond(e).item() == 0.0 and dt.linalg.cond(dt.zeros(2, 0, 0)).tolist() == [0.0, 0.0]


def test_creation_fuzz_findings():
    """arange checks its dtype before its bounds and refuses NaN/inf bounds and a fractional
    int64 step; linspace/logspace convert integer ends into the dtype first (wrapped, or
    PyTorch's overflow error) and take complex ends; a one-element tensor in a list is a
    number; a NumPy float64 fills a default-float tensor."""
    with pytest.raises(NotImplementedError, match="arange_cpu"):
        dt.arange(0, 1, 0, dtype=dt.bool)
    with pytest.raises(RuntimeError, match="unsupported range: 0 -> nan"):
        dt.arange(0, float("nan"))
    with pytest.raises(ValueError, match="step must be nonzero"):
        dt.arange(0, 1, 0.1, dtype=dt.int64)
    assert dt.linspace(-3, 3, 7, dtype=dt.uint8).tolist() == [253, 211, 169, 128, 86, 44, 3]
    assert dt.logspace(-3, 3, 7, base=2, dtype=dt.uint8).tolist() == [0, 0, 0, 0, 0, 0, 8]
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        dt.linspace(0, 300, 4, dtype=dt.int8)
    assert dt.linspace(0, 10, 1, dtype=dt.bool).tolist() == [False]
    z = dt.linspace(0, 1 + 1j, 3)
    assert z.dtype == dt.complex64 and z[1].item() == 0.5 + 0.5j
    assert dt.tensor([dt.tensor([1]), dt.tensor([2])]).shape == (2,)
    assert dt.full((1,), np.float64(2.5)).dtype == dt.float32
