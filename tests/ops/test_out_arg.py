"""``out=`` on the top-level functions PyTorch gives it: the result lands in the given tensor
(resized if needed), which is returned; PyTorch's casting and autograd refusals."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.ops.out_arg import OUT_FUNCTIONS

M = np.arange(6.0).reshape(2, 3) - 2.0

# name -> (call(lib, x, out), out maker(lib)); x is M as float32
CASES = {
    "add": (lambda L, x, o: L.add(x, x, alpha=2, out=o), lambda L: L.empty(2, 3)),
    "exp": (lambda L, x, o: L.exp(x, out=o), lambda L: L.empty(2, 3)),
    "clamp": (lambda L, x, o: L.clamp(x, -1, 1, out=o), lambda L: L.empty(2, 3)),
    "where": (lambda L, x, o: L.where(x > 0, x, -x, out=o), lambda L: L.empty(2, 3)),
    "maximum": (lambda L, x, o: L.maximum(x, x.flip(0), out=o), lambda L: L.empty(2, 3)),
    "matmul": (lambda L, x, o: L.matmul(x, x.T, out=o), lambda L: L.empty(2, 2)),
    "mm": (lambda L, x, o: L.mm(x, x.T, out=o), lambda L: L.empty(2, 2)),
    "sum_dim": (lambda L, x, o: L.sum(x, 1, out=o), lambda L: L.empty(2)),
    "mean_dim": (lambda L, x, o: L.mean(x, 0, out=o), lambda L: L.empty(3)),
    "cat": (lambda L, x, o: L.cat([x, x], 1, out=o), lambda L: L.empty(2, 6)),
    "stack": (lambda L, x, o: L.stack([x, x], out=o), lambda L: L.empty(2, 2, 3)),
    "cumsum": (lambda L, x, o: L.cumsum(x, 1, out=o), lambda L: L.empty(2, 3)),
    "gt_into_float": (lambda L, x, o: L.gt(x, 0, out=o), lambda L: L.empty(2, 3)),
    "resized_from_empty": (lambda L, x, o: L.mul(x, 3, out=o), lambda L: L.empty(0)),
    "max_dim": (lambda L, x, o: L.max(x, 1, out=o), lambda L: (L.empty(2), L.empty(2, dtype=L.int64))),
    "sort": (
        lambda L, x, o: L.sort(x, 1, descending=True, out=o),
        lambda L: (L.empty(2, 3), L.empty(2, 3, dtype=L.int64)),
    ),
    "zeros_int": (lambda L, x, o: L.zeros(2, 2, out=o), lambda L: L.empty(0, dtype=L.int64)),
    "arange": (lambda L, x, o: L.arange(5, out=o), lambda L: L.empty(5, dtype=L.float64)),
    "linspace": (lambda L, x, o: L.linspace(0, 1, 4, out=o), lambda L: L.empty(4)),
}


def _run(lib, name):
    call, make_out = CASES[name]
    out = make_out(lib)
    result = call(lib, lib.tensor(M, dtype=lib.float32), out)
    outs = out if isinstance(out, tuple) else (out,)
    results = result if isinstance(result, tuple) else (result,)
    assert all(r is o for r, o in zip(results, outs)), "the function returns the out tensors"
    return [(str(o.dtype).split(".")[-1], tuple(o.shape), o.numpy().tolist()) for o in outs]


@pytest.mark.parametrize("name", sorted(CASES))
def test_result_is_written_into_out(name):
    _run(dt, name)  # returns the out tensors themselves


def test_out_refuses_a_lossy_cast_and_inputs_that_require_grad():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        dt.add(dt.ones(2), 1, out=dt.empty(2, dtype=dt.int64))
    with pytest.raises(
        RuntimeError, match="exp\\(\\): functions with out=... arguments don't support automatic"
    ):
        dt.exp(dt.ones(2, requires_grad=True), out=dt.empty(2))
    with dt.no_grad():
        assert dt.exp(dt.zeros(2, requires_grad=True), out=dt.empty(2)).tolist() == [1.0, 1.0]


def test_out_of_another_shape_is_resized_with_pytorchs_warning():
    out = dt.empty(5)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        dt.add(dt.ones(2), 1, out=out)
    assert out.shape == (2,) and out.tolist() == [2.0, 2.0]


def test_every_listed_function_takes_out():
    for name in sorted(OUT_FUNCTIONS):
        fn = getattr(dt, name)
        assert getattr(fn, "__wrapped__", None) is not None, name


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_out_matches_pytorch(torch, name):
    for ours, theirs in zip(_run(dt, name), _run(torch, name)):
        assert ours[:2] == theirs[:2]
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)


def test_namespaces_write_into_a_declared_out():
    inverse = dt.empty(2, 2)
    assert dt.linalg.inv(dt.eye(2) * 2, out=inverse) is inverse and inverse.tolist() == [
        [0.5, 0.0],
        [0.0, 0.5],
    ]
    values = dt.empty(2)
    assert dt.special.xlogy(dt.ones(2), dt.ones(2), out=values) is values and values.tolist() == [0.0, 0.0]


OUT_DTYPE_CASES = {  # out= of another dtype: computed in it, refused exactly, or bool only
    "sum_into_long": lambda L: L.sum(L.tensor([0.5, 0.5, 1.5]), 0, out=L.empty((), dtype=L.int64)),
    "cumsum_into_long": lambda L: L.cumsum(L.tensor([0.5, 1.5]), 0, out=L.empty(2, dtype=L.int64)),
    "sum_into_double": lambda L: L.sum(L.tensor([0.1] * 3), 0, out=L.empty((), dtype=L.float64)),
    "mm_into_double": lambda L: L.mm(L.ones(2, 2), L.ones(2, 2), out=L.empty(2, 2, dtype=L.float64)),
    "argmax_into_float": lambda L: L.argmax(L.ones(2, 2), 0, out=L.empty(2)),
    "max_indices_float": lambda L: L.max(L.ones(2, 2), 0, out=(L.empty(2), L.empty(2))),
    "amax_into_double": lambda L: L.amax(L.ones(2, 2), 0, out=L.empty(2, dtype=L.float64)),
    "all_into_long": lambda L: L.all(L.ones(2, 2), 0, out=L.empty(2, dtype=L.int64)),
    "signbit_into_float": lambda L: L.signbit(L.ones(2), out=L.empty(2)),
    "index_select_into_long": lambda L: L.index_select(
        L.ones(2), 0, L.tensor([0]), out=L.empty(1, dtype=L.int64)
    ),
    "nonzero_into_float": lambda L: L.nonzero(L.ones(2), out=L.empty(2, 1)),
    "tensordot_into_double": lambda L: L.tensordot(
        L.ones(2, 2), L.ones(2, 2), out=L.empty((), dtype=L.float64)
    ),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(OUT_DTYPE_CASES))
def test_out_dtype_rules_match_pytorch(torch, name):
    def answer(L):
        try:
            out = OUT_DTYPE_CASES[name](L)
        except RuntimeError as e:
            return str(e)
        out = out if isinstance(out, tuple) else (out,)
        return [(str(o.dtype).split(".")[-1], o.tolist()) for o in out]

    assert answer(dt) == answer(torch)


MORE_OUT_DTYPE_CASES = {  # each tried with every dtype of OUT_DTYPES
    "mv": lambda L, o: L.mv(L.ones(2, 3), L.ones(3), out=o),
    "mv_long": lambda L, o: L.mv(L.ones(2, 3, dtype=L.int64), L.ones(3, dtype=L.int64), out=o),
    "addbmm": lambda L, o: L.addbmm(L.ones(2, 2), L.ones(3, 2, 4), L.ones(3, 4, 2), out=o),
    "cat": lambda L, o: L.cat([L.ones(2, dtype=L.int64), L.ones(3)], out=o),
    "stack_int": lambda L, o: L.stack([L.ones(2, dtype=L.int32), L.ones(2, dtype=L.int64)], out=o),
    "where_number": lambda L, o: L.where(L.ones(3, dtype=L.bool), L.ones(3), 2.5, out=o),
    "searchsorted": lambda L, o: L.searchsorted(L.arange(5.0), L.ones(3), out=o),
    "searchsorted_int32": lambda L, o: L.searchsorted(L.arange(5.0), L.ones(3), out_int32=True, out=o),
    "clamp_numbers": lambda L, o: L.clamp(L.ones(3, dtype=L.int64), 0.5, 1, out=o),
    "clamp_tensors": lambda L, o: L.clamp(L.ones(3, dtype=L.int64), L.zeros(3), L.ones(3), out=o),
    "clamp_min": lambda L, o: L.clamp_min(L.ones(3), 0.5, out=o),
    "lerp_tensor_weight": lambda L, o: L.lerp(L.ones(3), L.ones(3), L.ones(3), out=o),
    "lerp_number_weight": lambda L, o: L.lerp(L.ones(3), L.ones(3), 0.5, out=o),
    "round": lambda L, o: L.round(L.ones(3), out=o),
    "abs_long": lambda L, o: L.abs(L.ones(3, dtype=L.int64), out=o),
    "max_of_all": lambda L, o: L.max(L.ones(2, 3), out=o),
    "nan_to_num": lambda L, o: L.nan_to_num(L.ones(3), out=o),
    "take": lambda L, o: L.take(L.ones(3), L.tensor([0]), out=o),
    "narrow_copy": lambda L, o: L.narrow_copy(L.ones(3), 0, 0, 2, out=o),
    "histc": lambda L, o: L.histc(L.ones(3), 4, out=o),
    "float_power": lambda L, o: L.float_power(L.ones(3), 2, out=o),
    "all_dim": lambda L, o: L.all(L.ones(2, 3), 1, out=o),
    "cumsum": lambda L, o: L.cumsum(L.ones(3), 0, out=o),
    "arange": lambda L, o: L.arange(3, out=o),
    "median_values": lambda L, o: L.median(L.ones(2, 3), 1, out=(o, L.empty(0, dtype=L.int64))),
    "mode_indices": lambda L, o: L.mode(L.ones(2, 3), 1, out=(L.empty(0), o)),
    "frexp_mantissa": lambda L, o: L.frexp(L.ones(3), out=(o, L.empty(0, dtype=L.int32))),
    "aminmax": lambda L, o: L.aminmax(L.ones(3), out=(o, L.empty(0))),
}
OUT_DTYPES = ("float32", "float64", "int64", "int32", "bool", "uint8")


@pytest.mark.parity
def test_which_out_dtypes_each_function_takes_matches_pytorch(torch):
    def answer(L, case, dtype):
        out = L.empty(0, dtype=getattr(L, dtype))
        try:
            MORE_OUT_DTYPE_CASES[case](L, out)
        except (RuntimeError, TypeError, NotImplementedError) as e:
            return type(e).__name__, str(e)
        return str(out.dtype).split(".")[-1], out.tolist()

    for case in MORE_OUT_DTYPE_CASES:
        for dtype in OUT_DTYPES:
            assert answer(dt, case, dtype) == answer(torch, case, dtype), (case, dtype)
