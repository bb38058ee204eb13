"""Ops on edge inputs (empty, 0-dim, NaN, infinities, non-contiguous views, small integer
dtypes) answer as PyTorch: the same values, dtypes, shapes and, for views, strides. Each
case is one that once differed (found by comparing the op surface with PyTorch's)."""

import numpy as np
import pytest

import disttorch as dt


def _nan(L):
    return L.tensor([float("nan"), -1.0, 0.0, 0.5])


CASES = {
    "where_0d": lambda L: L.where(L.tensor(2.0)),
    "trace_empty_half": lambda L: L.trace(L.ones(0, 3, dtype=L.float16)),
    "trapezoid_empty": lambda L: (L.trapz(L.ones(0)), L.trapezoid(L.ones(2, 0))),
    "cumulative_trapezoid_empty": lambda L: L.cumulative_trapezoid(L.ones(2, 0, dtype=L.int64)),
    "range_tensor_bounds": lambda L: L.range(L.tensor(1), 3),
    "repeat_interleave_int32": lambda L: L.repeat_interleave(L.tensor([1, 2], dtype=L.int32)),
    "sort_0d_bool": lambda L: L.tensor(True).sort(),
    "entr_nan": lambda L: L.special.entr(_nan(L)),
    "hardtanh_int": lambda L: (
        L.nn.functional.hardtanh(L.tensor([-3, 0, 2])),
        L.nn.functional.relu6(L.tensor([-3, 0, 9])),
    ),
    "normalize_complex": lambda L: L.nn.functional.normalize(L.tensor([3 + 4j, 1j, 2 - 1j]), dim=-1),
    # a 0-dim tensor of another dtype does not widen a dimensioned one; ints give floats
    "logaddexp2_dtypes": lambda L: [
        L.logaddexp2(L.tensor([1, 2]), L.tensor(2.0, dtype=L.float64)),
        L.logaddexp2(L.tensor([0.5, -2.0, float("inf")]).half(), L.tensor([3.0, 0.1, float("inf")]).half()),
    ],
    "xlogy_dtypes": lambda L: [
        L.xlogy(L.tensor([0.5, 2.0]), L.tensor(2.0, dtype=L.float64)),
        L.xlogy(L.tensor(2.0), L.tensor([0.5, 2.0]).half()),
        str(L.special.xlog1py(L.tensor([1, 2]), 2.5).dtype).split(".")[-1],
    ],
    # tiny and out-of-domain inputs (the composed log formulas gave 0 and inf)
    "inverse_hyperbolics": lambda L: [
        f(L.tensor([1e-30, -1e-30, 1.0, -1.0, -2.0, float("inf")], dtype=L.float64))
        for f in (L.asinh, L.acosh, L.atanh)
    ],
    # float32 and 16-bit: pi * x rounded to float32 first, as PyTorch's kernel (was float64)
    "sinc_in_float32": lambda L: [
        L.sinc(L.tensor([88.8, -3.0, 20.0, 100.0, 0.0]).to(d)) for d in (L.float32, L.float16, L.bfloat16)
    ],
    "nan_to_num_bfloat16": lambda L: L.nan_to_num(
        L.tensor([float("nan"), float("inf"), -float("inf"), 1.0], dtype=L.bfloat16)
    ),
    "bessel_nan_and_infinity": lambda L: [
        f(L.tensor([float("nan"), float("inf"), -float("inf"), 0.0], dtype=L.float64))
        for f in (
            L.special.bessel_j0,
            L.special.bessel_y1,
            L.special.airy_ai,
            L.special.scaled_modified_bessel_k0,
        )
    ],
    # a Python int beyond an integer tensor's dtype wraps into it (NumPy raised OverflowError or compared unwrapped)
    "int_scalar_wraps": lambda L: [
        f(L.tensor([0, 1, 200], dtype=L.uint8))
        for f in (
            lambda x: x >= -1,
            lambda x: x > 300,
            lambda x: x.clamp(-1),
            lambda x: x.clone().fill_(-1),
            lambda x: x.masked_fill(x > 0, -1),
            lambda x: L.full((2,), -1, dtype=L.uint8),
        )
    ],
    "complex_to_bool": lambda L: L.tensor([-0.0 + 0.5j, 0j, 1 + 0j]).bool(),
    "empty_strides": lambda L: [L.zeros(0, 3).stride(), L.zeros(0, 3, 2).stride(), L.zeros(3, 0).stride()],
    "heaviside_nan": lambda L: L.heaviside(
        L.tensor([float("nan"), 0.0, -1.0, 2.0]), L.tensor([0.5, 7.0, 1.0, 1.0])
    ),
    "igamma_infinite_a": lambda L: [
        f(
            L.tensor([float("inf")] * 4, dtype=L.float64),
            L.tensor([2.5, float("inf"), 0.0, float("nan")], dtype=L.float64),
        )
        for f in (L.igamma, L.igammac)
    ],
    "int_tensor_negative_powers": lambda L: L.tensor([2, -1, 1, 3, -1]) ** L.tensor([-1, -3, -2, 2, -2]),
    "celu_negative_alpha": lambda L: [
        L.celu(L.tensor([0.5, -1.5, 2.0, -2.5]), -1),
        L.nn.functional.celu(L.tensor([0.5, -1.5]), -0.5),
    ],
    "adaptive_max_pool1d_toplevel": lambda L: L.adaptive_max_pool1d(L.tensor([[[1.0, 3.0, 2.0, 0.5]]]), 2),
    "block_diag_dtypes": lambda L: [
        L.block_diag(L.ones(2, 2), L.tensor(2.5, dtype=L.float64)),
        L.block_diag(L.ones(2, 2, dtype=L.int32), L.tensor(True)),
        L.block_diag(),
    ],
    "pdist_nan_and_inf": lambda L: L.pdist(
        L.tensor([[float("nan"), 1.0], [0.0, 1.0], [float("inf"), 2.0], [float("inf"), 2.0]])
    ),
    "full_wraps_ints": lambda L: [L.full((2,), -1, dtype=L.uint8), L.full_like(L.ones(2, dtype=L.uint8), -1)],
    # 16-bit: log(y) rounded to the dtype, then the product (was computed in float64, rounded once)
    "xlogy_16_bit": lambda L: [
        f(L.tensor([0.5, -1.7, 2.9, 0.0, 3.3]).to(d), L.tensor([1.3, 2.6, 0.7, float("nan"), 5.1]).to(d))
        for f in (L.xlogy, L.special.xlog1py)
        for d in (L.bfloat16, L.float16)
    ],
    "rtruediv": lambda L: [0.7 / L.linspace(-3, 3, 61), 3 / L.tensor([1, 2, 0])],  # reciprocal, times
    "nanmean_dtype": lambda L: [
        L.nanmean(L.tensor([[1.5, float("nan")], [2.25, 3.0]]), 0, dtype=d) for d in (L.float16, L.float64)
    ],
    "logcumsumexp_16_bit": lambda L: [  # computed in float32, rounded once
        L.logcumsumexp(L.linspace(-3, 3, 40).reshape(2, 20).to(d), 1) for d in (L.bfloat16, L.float16)
    ],
    "ldexp_dtypes": lambda L: [
        L.ldexp(L.tensor(0.5, dtype=L.float64), L.tensor([1, -2, 3])),
        L.ldexp(L.tensor([1, 2]), L.tensor([1, 2])),
        L.ldexp(L.tensor([1.0, 2]).half(), L.tensor([1, 2])),
    ],
    "zeta_poles": lambda L: L.special.zeta(
        L.tensor([0.5, 2.0, 1.0, 2.0, 3.0]), L.tensor([-1.0, -1.0, -1.0, 1.0, -0.5])
    ),
    "flip_dims_as_arguments": lambda L: L.arange(6).reshape(2, 3).flip(0, 1),
    "count_nonzero_dims_as_arguments": lambda L: L.tensor([[[0, 1], [2, 0]], [[3, 0], [0, 0]]]).count_nonzero(
        0, 2
    ),
    "diag_embed_contiguous": lambda L: [
        L.diag_embed(L.arange(6.0).reshape(2, 3), offset=-1, dim1=0, dim2=2).stride(),
        L.diag_embed(L.arange(6.0).reshape(2, 3)).stride(),
    ],
    "index_empty_list": lambda L: L.arange(6).reshape(2, 3)[[]],
    "index_nested_list_is_a_tuple": lambda L: [
        L.arange(12).reshape(3, 4)[[[0, 1], [1, 2]]],
        L.arange(12).reshape(3, 4)[[L.tensor([0, 2]), slice(1, 3)]],
        L.arange(12).reshape(3, 4)[[0, 2]],
    ],
    "reductions_keepdim_without_dim": lambda L: [
        L.nansum(L.ones(2, 3), keepdim=True),
        L.nanmean(L.ones(2, 3), keepdim=True),
        *L.aminmax(L.arange(6.0).reshape(2, 3), keepdim=True),
    ],
    "any_all_over_no_dims": lambda L: [L.tensor([[0, 2]]).any(dim=()), L.ones(2, dtype=L.uint8).all(dim=())],
    "unsqueeze_strides": lambda L: [
        L.ones(3, 4).t().unsqueeze(-1).stride(),
        L.ones(3, 1).t().unsqueeze(1).stride(),
        L.ones(3, 1).t().unsqueeze(0).stride(),
        L.ones(2, 3, 4)[:, ::2].unsqueeze(2).stride(),
    ],
    # -0.0 keeps its sign (small, strided and large inputs); logsigmoid(inf) is +0.0
    "activations_of_negative_zero": lambda L: [
        [
            L.signbit(f(x))
            for x in (L.tensor([-0.0, 0.0, -1.0]), L.full((30,), -0.0)[::3], L.full((17000,), -0.0))
            for f in (
                L.relu,
                L.nn.functional.elu,
                L.nn.functional.selu,
                L.nn.functional.celu,
                lambda t: L.nn.functional.elu(t.double(), 2.0),
                lambda t: L.relu(t.half()),
            )
        ],
        L.signbit(L.nn.functional.logsigmoid(L.tensor([float("inf"), 0.0]))),
    ],
    "polygamma_infinities_and_poles": lambda L: [
        L.polygamma(n, L.tensor([float("inf"), -float("inf"), -0.0, -2.0, 1e300, -1e300], dtype=L.float64))
        for n in (1, 2, 3)
    ],
}


def _plain(out):
    if isinstance(out, (tuple, list)):
        return [_plain(o) for o in out]
    if hasattr(out, "dtype") and hasattr(out, "shape"):
        name = str(out.dtype).split(".")[-1]
        vals = out.detach().float() if name == "bfloat16" else out.detach()
        vals = vals.resolve_conj() if hasattr(vals, "resolve_conj") else vals
        return (name, tuple(out.shape), vals.numpy().tolist())
    return out


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_edge_inputs_match_pytorch(torch, name):
    ours, theirs = _plain(CASES[name](dt)), _plain(CASES[name](torch))
    np.testing.assert_equal(ours, theirs)


def test_complex_normalize_gradient_is_pytorchs_composite():
    z = dt.tensor([3 + 4j, 1j], dtype=dt.complex128, requires_grad=True)
    out = dt.nn.functional.normalize(z, dim=0)
    np.testing.assert_allclose(out.detach().abs().numpy(), np.abs([3 + 4j, 1j]) / np.sqrt(26))
    (out.abs() * dt.tensor([1.0, 2.0], dtype=dt.float64)).sum().backward()
    assert z.grad is not None and z.grad.dtype == dt.complex128


def test_integer_dtypes_refused_with_pytorchs_errors():
    with pytest.raises(
        RuntimeError, match="Optional dtype must be either a floating point or complex dtype. Got: Long"
    ):
        dt.ones(3).mean(dtype=dt.int64)
    with pytest.raises(RuntimeError, match="nanmean.*Got: Bool"):
        dt.nanmean(dt.ones(3), dtype=dt.bool)
    with pytest.raises(NotImplementedError, match="\"logcumsumexp_out_cpu\" not implemented for 'Long'"):
        dt.logcumsumexp(dt.tensor([1, 2]), 0)


ERRORS = {  # PyTorch's error type and message
    "mode_empty": lambda L: L.ones(0).mode(),
    "kthvalue_empty": lambda L: L.ones(2, 0).kthvalue(1),
    "repeat_negative": lambda L: L.ones(2).repeat(-1),
    "tile_negative": lambda L: L.ones(2).tile(2, -1),
    "nanmean_integer": lambda L: L.nanmean(L.tensor([1, 2], dtype=L.int8), dtype=L.float32),
    "histc_integer": lambda L: L.histc(L.tensor([1, 2], dtype=L.uint8), 4),
    "frac_integer": lambda L: L.frac(L.tensor([1, 2], dtype=L.int8)),
    "bincount_negative": lambda L: L.bincount(L.tensor([-1, 2], dtype=L.int8)),
    "zeros_float_size": lambda L: L.zeros(2.5),
    "ones_float_in_tuple": lambda L: L.ones((2, 2.0)),
    "view_float_size": lambda L: L.ones(6).view(2.0, 3),
    "linear_float_features": lambda L: L.nn.Linear(2.5, 3),
    "randn_float_tensor_size": lambda L: L.randn(L.tensor(2.0)),
    "setitem_basic_index_wrong_width": lambda L: L.zeros(5, 27).__setitem__(0, L.ones(1, 21)),
    "setitem_slice_too_many_dims": lambda L: L.zeros(5, 27).__setitem__((0, slice(None)), L.ones(2, 27)),
    "setitem_advanced_index_wrong_width": lambda L: L.zeros(5, 27).__setitem__([0], L.ones(1, 21)),
    "index_tensors_not_broadcastable": lambda L: L.ones(5, 4)[L.zeros(3, 2, dtype=L.long), L.arange(5)],
    "empty_float_first_in_tuple": lambda L: L.empty((2.0, 3)),  # a Conv2d of float channels
    "new_zeros_float_later": lambda L: L.ones(1).new_zeros(2, 3, 4.5),
    "zeros_float_size_keyword": lambda L: L.zeros(size=(2.0, 3)),
}
ERROR_TYPE_ONLY = {"view_float_size", "linear_float_features", "randn_float_tensor_size"}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_edge_input_errors_match_pytorch(torch, name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[name](dt)
    if name in ERROR_TYPE_ONLY:  # the gist: a size entry of the wrong type
        assert "tuple of ints" in str(ours.value) and "tuple of ints" in str(theirs.value)
    else:
        assert str(ours.value) == str(theirs.value)


def test_linalg_functions_without_complex_support_say_so():
    with pytest.raises(NotImplementedError, match="linalg.qr: complex inputs are not supported"):
        dt.linalg.qr(dt.ones(3, 2, dtype=dt.complex64))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        dt.linalg.qr(dt.ones(3, 2, dtype=dt.int64))


@pytest.mark.parity
@pytest.mark.parametrize("name", ["copysign", "nextafter"])
def test_gradients_of_both_operands_as_pytorch(torch, name):
    """``other`` gets zeros (not None: an optimizer would skip it), ``input`` PyTorch's."""
    grads = []
    for L in (dt, torch):
        x = L.tensor([[1.5, -2.0, 0.0]], dtype=L.float64, requires_grad=True)
        y = L.tensor([[-1.0], [3.0]], dtype=L.float64, requires_grad=True)
        out = getattr(L, name)(x, y)
        out.backward(L.ones_like(out))
        grads.append((out.detach().numpy().tolist(), x.grad.numpy().tolist(), y.grad.numpy().tolist()))
    assert grads[0] == grads[1]


def test_special_functions_refuse_unbroadcastable_shapes_with_pytorchs_error():
    with pytest.raises(
        RuntimeError, match="The size of tensor a \\(4\\) must match the size of tensor b \\(3\\)"
    ):
        dt.xlogy(dt.ones(4), dt.ones(4, 3))
