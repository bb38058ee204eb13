"""Elementwise ops: values against NumPy, float64 gradient checks, broadcasting, reflected
operators, dtype promotion, second derivatives and PyTorch's error messages; logaddexp, hypot
and nan_to_num; parity with PyTorch (values, dtypes, gradients) when it is installed."""

import inspect
import itertools
import math
import re
import warnings

import numpy as np
import pytest
from parity_helpers import (
    INTS,
    PARITY_RNG,
    any_,
    assert_no_grad_op_matches,
    assert_values_and_gradients_match,
    pos,
)

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def leaf(arr, requires_grad=True):
    return dt.tensor(np.asarray(arr, dtype=np.float64), requires_grad=requires_grad)


POS = RNG.uniform(0.5, 2.0, (3, 4))  # domain of log, sqrt, ...
ANY = RNG.uniform(-2.0, 2.0, (3, 4))

UNARY = [  # name, NumPy reference, input domain
    ("neg", np.negative, ANY),
    ("abs", np.abs, ANY),
    ("exp", np.exp, ANY),
    ("expm1", np.expm1, ANY),
    ("log", np.log, POS),
    ("log1p", np.log1p, POS),
    ("log2", np.log2, POS),
    ("log10", np.log10, POS),
    ("sqrt", np.sqrt, POS),
    ("rsqrt", lambda x: 1 / np.sqrt(x), POS),
    ("square", np.square, ANY),
    ("reciprocal", np.reciprocal, POS),
    ("sin", np.sin, ANY),
    ("cos", np.cos, ANY),
    ("tan", np.tan, ANY * 0.5),
    ("tanh", np.tanh, ANY),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), ANY),
    ("relu", lambda x: np.maximum(x, 0), ANY),
    ("erf", np.vectorize(math.erf), ANY),
    ("sinh", np.sinh, ANY),
    ("cosh", np.cosh, ANY),
    ("asin", np.arcsin, ANY * 0.45),
    ("acos", np.arccos, ANY * 0.45),
    ("atan", np.arctan, ANY),
]


@pytest.mark.parametrize("name,ref,domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_values_function_and_method(name, ref, domain):
    x = dt.tensor(domain.astype(np.float32))
    expected = ref(domain.astype(np.float32))
    np.testing.assert_allclose(getattr(dt, name)(x).numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(getattr(x, name)().numpy(), expected, rtol=1e-5, atol=1e-6)
    assert getattr(dt, name)(x).dtype == dt.float32


@pytest.mark.parametrize("name,ref,domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradcheck(name, ref, domain):
    assert gradcheck(getattr(dt, name), (leaf(domain),))


@pytest.mark.parametrize(
    "name", ["exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "sin", "reciprocal", "expm1", "erf", "tan"]
)
def test_unary_second_derivative(name):
    x = leaf(POS[:1, :3])
    assert gradgradcheck(getattr(dt, name), (x,))


def test_unary_non_unit_upstream_gradient():
    x = leaf(ANY)
    g = RNG.normal(size=ANY.shape)
    dt.tanh(x).backward(dt.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), g * (1 - np.tanh(ANY) ** 2))


def test_erf_matches_math_erf_across_ranges():
    xs = np.concatenate([np.linspace(-8, 8, 4001), [0.0, 1e-300, 2.4999999, 2.5, 40.0]])
    got = dt.erf(dt.tensor(xs, dtype=dt.float64)).numpy()
    np.testing.assert_allclose(got, [math.erf(v) for v in xs], rtol=1e-14, atol=1e-15)
    special = dt.erf(dt.tensor([np.inf, -np.inf, np.nan], dtype=dt.float64)).numpy()
    assert special[0] == 1 and special[1] == -1 and np.isnan(special[2])


def test_sigmoid_is_stable_for_large_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = dt.sigmoid(dt.tensor([-1000.0, 0.0, 1000.0])).numpy()
    np.testing.assert_allclose(out, [0.0, 0.5, 1.0])


# ---------------------------------------------------------------------- binary ops
BINARY = [
    ("add", np.add),
    ("sub", np.subtract),
    ("mul", np.multiply),
    ("div", np.divide),
    ("pow", np.power),
    ("maximum", np.maximum),
    ("minimum", np.minimum),
    ("atan2", np.arctan2),
]


@pytest.mark.parametrize("name,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary_values_with_broadcast(name, ref):
    a, b = POS.astype(np.float32), POS[0].astype(np.float32) + 0.25
    got = getattr(dt, name)(dt.tensor(a), dt.tensor(b))
    np.testing.assert_allclose(got.numpy(), ref(a, b), rtol=1e-6)
    assert got.shape == dt.Size([3, 4])


@pytest.mark.parametrize("name", [b[0] for b in BINARY])
def test_binary_gradcheck_broadcast_operands(name):
    a, b = leaf(POS), leaf(POS[0] + 0.25)  # b broadcasts along dim 0: its grad is summed
    assert gradcheck(getattr(dt, name), (a, b))
    col = leaf(POS[:, :1] + 0.5)
    assert gradcheck(getattr(dt, name), (col, b))


@pytest.mark.parametrize("name", [b[0] for b in BINARY if b[0] not in ("maximum", "minimum")])
def test_binary_second_derivative(name):
    a, b = leaf(POS[:2, :2]), leaf(POS[2, :2] + 0.3)
    assert gradgradcheck(getattr(dt, name), (a, b))


def test_bias_gets_summed_gradient_and_tensor_used_twice():
    x = leaf(RNG.normal(size=(5, 3)))
    w = leaf(RNG.normal(size=(5, 3)))
    bias = leaf(np.zeros(3))
    (x * w + x + bias).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), w.detach().numpy() + 1)
    np.testing.assert_allclose(bias.grad.numpy(), np.full(3, 5.0))


def test_reflected_operators_values_and_gradients():
    a = leaf([0.5, 1.0, 2.0])
    x = a.detach().numpy()
    cases = [
        (lambda t: 1 - t, 1 - x, -np.ones(3)),
        (lambda t: 2**t, 2**x, 2**x * np.log(2)),
        (lambda t: 2 / t, 2 / x, -2 / x**2),
        (lambda t: 3 + t, 3 + x, np.ones(3)),
        (lambda t: 3 * t, 3 * x, np.full(3, 3.0)),
        (lambda t: t**3, x**3, 3 * x**2),
        (lambda t: -t, -x, -np.ones(3)),
        (lambda t: abs(-t), x, np.ones(3)),
    ]
    for fn, value, grad in cases:
        a.grad = None
        out = fn(a)
        np.testing.assert_allclose(out.detach().numpy(), value)
        out.sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), grad)


def test_reflected_pow_gradcheck():
    assert gradcheck(lambda t: 2**t, (leaf(ANY),))
    assert gradcheck(lambda t: 1 - t, (leaf(ANY),))
    assert gradcheck(lambda t: 2 / t, (leaf(POS),))


def test_operators_leave_other_operands_to_them_as_pytorch():
    """An operand that is no tensor, number or NumPy value gets NotImplemented: its own
    reflected method runs, or Python raises PyTorch's ``unsupported operand type(s)``."""

    class Other:
        def __radd__(self, t):
            return "Other.__radd__"

        def __rmatmul__(self, t):
            return "Other.__rmatmul__"

    t = dt.ones(2)
    assert t + Other() == "Other.__radd__" and t @ Other() == "Other.__rmatmul__"
    for fn, said in [
        (lambda: t + None, "+: 'Tensor' and 'NoneType'"),
        (lambda: None - t, "-: 'NoneType' and 'Tensor'"),
        (lambda: t - [1, 2], "-: 'Tensor' and 'list'"),
        (lambda: t & None, "&: 'Tensor' and 'NoneType'"),
        (lambda: None**t, "** or pow(): 'NoneType' and 'Tensor'"),
    ]:
        with pytest.raises(TypeError, match=re.escape(f"unsupported operand type(s) for {said}")):
            fn()
    assert (t + np.float32(1)).tolist() == [2.0, 2.0] and (t * True).tolist() == [1.0, 1.0]


def test_lerp_and_arc_aliases():
    a, b = leaf([0.0, 1.0]), leaf([2.0, 3.0])
    np.testing.assert_allclose(dt.lerp(a, b, 0.25).detach().numpy(), [0.5, 1.5])
    assert gradcheck(lambda x, y, w: dt.lerp(x, y, w), (a, b, leaf([0.3, 0.6])))
    # one implementation under both names (after ``import torch.fx`` each name is a
    # dispatching twin of its own, named as PyTorch names it: torch.arctan prints arctan)
    assert inspect.unwrap(dt.arctan) is inspect.unwrap(dt.atan)
    assert inspect.unwrap(dt.arcsin) is inspect.unwrap(dt.asin)
    assert dt.atan2(dt.tensor([1, -1]), dt.tensor([0, 0])).dtype == dt.float32


def test_add_sub_alpha():
    a, b = dt.tensor([1.0, 2.0]), dt.tensor([3.0, 4.0])
    np.testing.assert_allclose(dt.add(a, b, alpha=2).numpy(), [7.0, 10.0])
    np.testing.assert_allclose(a.sub(b, alpha=0.5).numpy(), [-0.5, 0.0])


# ---------------------------------------------------------------------- dtypes
def test_dtype_promotion_rules():
    i = dt.tensor([1, 2, 3])
    f = dt.tensor([1.0, 2.0, 3.0])
    assert (i + 2.5).dtype == dt.float32
    assert (2.5 + i).dtype == dt.float32
    assert (f * 2.5).dtype == dt.float32
    assert (i / i).dtype == dt.float32
    np.testing.assert_allclose((i / i).numpy(), [1.0, 1.0, 1.0])
    assert (i * 2).dtype == dt.int64
    assert (i + f).dtype == dt.float32
    assert (f + f.double()).dtype == dt.float64
    assert (i.int() + i).dtype == dt.int64
    assert (f + dt.tensor(2.0, dtype=dt.float64)).dtype == dt.float32  # 0-dim: scalar-like
    assert dt.exp(i).dtype == dt.float32 and dt.sqrt(dt.tensor([True])).dtype == dt.float32
    assert dt.abs(i).dtype == dt.int64 and dt.square(i).dtype == dt.int64
    assert dt.reciprocal(i).dtype == dt.float32
    assert (i**2).dtype == dt.int64 and (i**0.5).dtype == dt.float32
    assert (f.half() * 2.0).dtype == dt.float16


def test_integer_pow_and_bool_errors():
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        dt.tensor([1, 2]) ** -1
    b = dt.tensor([True, False])
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -b
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool"):
        b - b
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        dt.relu(b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("shape", [(3, 16384), (5, 7001), (40000,)])
def test_relu_of_large_tensors_matches_numpy(shape, dtype):
    # Large contiguous inputs go through the zero-row path: whole rows plus a tail.
    x = (RNG.standard_normal(shape) * 5).astype(dtype)
    if dtype != np.int64:
        x.reshape(-1)[[0, 17, -1]] = [np.nan, -0.0, -np.inf]
    for arr in (x, x.T):  # a transposed view takes the plain path
        t = dt.from_numpy(arr)
        assert dt.relu(t).dtype == t.dtype
        np.testing.assert_array_equal(dt.relu(t).numpy(), np.maximum(arr, 0))
    a = dt.tensor(x.astype(np.float64), requires_grad=True)
    dt.relu(a).sum().backward()
    # PyTorch's threshold_backward passes the gradient unless the output is <= 0: NaN passes
    np.testing.assert_array_equal(a.grad.numpy(), (~(x <= 0)).astype(np.float64))


@pytest.mark.parametrize("jit", ["1", "0"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_relu_gradient_is_plus_zero_where_the_unit_is_off(monkeypatch, dtype, jit):
    # a NaN or negative gradient of a unit that is off gives +0.0 (g * mask gave NaN and -0.0);
    # a NaN output passes its gradient; a -0.0 gradient of a unit that is on stays -0.0; the
    # compiled loop (the fast extra) and the NumPy passes alike
    monkeypatch.setenv("DISTTORCH_JIT", jit)
    x = [-1.0, 2.0, -3.0, 0.0, math.nan, -0.0, 5.0]
    g = [-5.0, 1.0, math.nan, -2.0, 3.0, -1.0, -0.0]
    want = np.array([0.0, 1.0, 0.0, 0.0, 3.0, 0.0, -0.0], dtype=np.float32)[:, None]
    for cols in (1, 9000):  # the second splits over the op's threads
        a = dt.tensor(np.repeat(np.array(x)[:, None], cols, 1), dtype=getattr(dt, dtype), requires_grad=True)
        dt.relu(a).backward(dt.tensor(np.repeat(np.array(g)[:, None], cols, 1), dtype=getattr(dt, dtype)))
        got = a.grad.float().numpy()
        np.testing.assert_array_equal(got, np.broadcast_to(want, got.shape))
        np.testing.assert_array_equal(np.signbit(got), np.broadcast_to(np.signbit(want), got.shape))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_gradient_of_the_compiled_loop_has_the_numpy_passes_bits(monkeypatch, dtype):
    from disttorch.kernels import relu

    rng = np.random.default_rng(0)
    g, out = rng.standard_normal((2, 10007)).astype(dtype)
    out[::7], out[::11], g[::5], g[::3] = np.nan, -0.0, np.nan, -0.0
    got = relu.relu_grad(g, out)
    monkeypatch.setenv("DISTTORCH_JIT", "0")
    assert got.tobytes() == relu.relu_grad(g, out).tobytes()


def test_relu_gradient_recorded_is_differentiable_again():
    a = leaf([-1.0, 2.0, 3.0])
    g = leaf([1.0, -2.0, math.nan])
    (ga,) = dt.autograd.grad(dt.relu(a), a, g, create_graph=True)
    ga.sum().backward()
    np.testing.assert_array_equal(ga.detach().numpy(), [0.0, -2.0, math.nan])
    np.testing.assert_array_equal(g.grad.numpy(), [0.0, 1.0, 1.0])
    assert gradgradcheck(dt.relu, (leaf([-1.5, 0.5, 2.0]),))


def test_broadcast_error_names_both_sizes():
    with pytest.raises(
        RuntimeError,
        match=r"The size of tensor a \(3\) must match the size of "
        r"tensor b \(4\) at non-singleton dimension 1",
    ):
        dt.ones(2, 3) + dt.ones(2, 4)
    with pytest.raises(RuntimeError, match=r"tensor a \(2\) must match the size of tensor b \(5\)"):
        dt.ones(2) / dt.ones(5)


def test_div_rounding_modes():
    a = dt.tensor([-7.0, 7.0, 5.0])
    np.testing.assert_allclose(dt.div(a, 2, rounding_mode="floor").numpy(), [-4.0, 3.0, 2.0])
    np.testing.assert_allclose(dt.div(a, 2, rounding_mode="trunc").numpy(), [-3.0, 3.0, 2.0])
    i = dt.tensor([-7, 7])
    assert dt.div(i, 2, rounding_mode="trunc").tolist() == [-3, 3]
    assert dt.div(i, 2, rounding_mode="floor").tolist() == [-4, 3]
    with pytest.raises(ValueError, match="rounding_mode"):
        dt.div(a, 2, rounding_mode="round")


# ---------------------------------------------------------------------- clamp, max/min, where
def test_clamp_numbers_tensors_and_gradient_routing():
    x = leaf([-2.0, -1.0, 0.0, 1.0, 2.0])
    np.testing.assert_allclose(dt.clamp(x, -1, 1).detach().numpy(), [-1, -1, 0, 1, 1])
    np.testing.assert_allclose(x.clip(min=0).detach().numpy(), [0, 0, 0, 1, 2])
    np.testing.assert_allclose(x.clamp(max=0.5).detach().numpy(), [-2, -1, 0, 0.5, 0.5])
    dt.clamp(x, -1, 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, 1, 1, 1, 0])  # bounds themselves pass grad
    lo, hi = leaf(np.full(5, -0.5)), leaf(np.full(5, 0.5))
    assert gradcheck(lambda a, low, high: dt.clamp(a, low, high), (leaf([-2.0, -0.3, 0.1, 0.7, 2.0]), lo, hi))
    assert dt.clamp(dt.tensor([1, 5]), 0.5).dtype == dt.float32
    np.testing.assert_allclose(dt.clamp(dt.tensor([0.0, 3.0]), 2.0, 1.0).numpy(), [1.0, 1.0])
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        dt.clamp(x)


def test_clamp_takes_a_0d_tensor_beside_a_number_as_a_number():
    """PyTorch's parser takes a 0-d tensor that needs no grad for a number (beta-VAE's
    ``clamp(c, 0, C_max.data[0])``); other tensors beside a number are refused."""
    c_max = dt.tensor([25.0])
    assert dt.clamp(dt.tensor([30.0, 1.0]), 0, c_max.data[0]).tolist() == [25.0, 1.0]
    assert dt.clamp(dt.tensor(3.0), dt.tensor(0.5), 2).item() == 2.0
    for bound in (dt.ones(3), dt.tensor(2.0, requires_grad=True)):
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            dt.clamp(dt.ones(3), 0, bound)


def test_maximum_minimum_split_ties_and_scalar_other():
    a, b = leaf([1.0, 2.0, 3.0]), leaf([3.0, 2.0, 1.0])
    dt.maximum(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 0.5, 0.0])
    np.testing.assert_allclose(
        dt.minimum(a, dt.tensor(2.0, dtype=dt.float64)).detach().numpy(), [1.0, 2.0, 2.0]
    )
    assert np.isnan(dt.maximum(dt.tensor([np.nan]), dt.tensor([1.0])).item())
    np.testing.assert_allclose(dt.max(a, b).detach().numpy(), [3.0, 2.0, 3.0])


def test_where_with_tensors_and_scalars():
    cond = dt.tensor([True, False, True])
    a, b = leaf([1.0, 2.0, 3.0]), leaf([10.0, 20.0, 30.0])
    out = dt.where(cond, a, b)
    np.testing.assert_allclose(out.detach().numpy(), [1.0, 20.0, 3.0])
    out.backward(dt.tensor([1.0, 2.0, 3.0], dtype=dt.float64))
    np.testing.assert_allclose(a.grad.numpy(), [1.0, 0.0, 3.0])
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 2.0, 0.0])
    assert dt.where(cond, 1.0, 0).dtype == dt.float32
    assert dt.where(cond, 1, 0).dtype == dt.int64
    assert dt.where(cond, dt.ones(3, dtype=dt.int32), 2.5).dtype == dt.float32
    np.testing.assert_allclose(a.where(cond, 0.0).detach().numpy(), [1.0, 0.0, 3.0])
    assert gradcheck(lambda x: dt.where(cond, x, 0.0) * x, (leaf([1.0, 2.0, 3.0]),))
    (idx,) = dt.where(cond)
    assert idx.tolist() == [0, 2]
    with pytest.raises(RuntimeError, match="boolean"):
        dt.where(dt.tensor([1, 0]), a, b)


def _where_broadcast_errors(lib) -> list:
    shapes = [((3,), (2,), (3,)), ((1,), (2,), (3,)), ((2, 3), (3,), (2, 1, 4)), ((2,), (3,), None)]
    seen = []
    for c, a, b in shapes:
        other = 1.0 if b is None else lib.ones(b)
        with pytest.raises(RuntimeError) as e:
            lib.where(lib.ones(c).bool(), lib.ones(a), other)
        seen.append(str(e.value))
    return seen


def test_where_shapes_that_do_not_broadcast_fail_as_pytorch(torch):
    # was "shape mismatch: condition [1], input [2] and other [3] do not broadcast"
    assert _where_broadcast_errors(dt) == _where_broadcast_errors(torch)


def test_pow_gradients_at_zero_base_and_zero_exponent():
    base = leaf([0.0, 2.0])
    exponent = leaf([2.0, 3.0])
    (base**exponent).sum().backward()
    np.testing.assert_allclose(exponent.grad.numpy(), [0.0, 8.0 * math.log(2.0)])
    np.testing.assert_allclose(base.grad.numpy(), [0.0, 12.0])
    x = leaf([0.0, 1.5])
    (x**0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])
    assert gradcheck(lambda a, b: a**b, (leaf(POS), leaf(ANY)))


def test_cast_between_float_dtypes_passes_gradient():
    x = leaf([1.0, 2.0])
    y = x.float()
    assert y.dtype == dt.float32
    (y * 2).sum().backward()
    assert x.grad.dtype == dt.float64
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


@pytest.mark.parametrize(
    "fn",
    [
        lambda a: dt.clamp(a, -0.5, 0.5) * a,
        lambda a: dt.maximum(a, a * 0.3) * a,
        lambda a: dt.where(a > 0, a * a, a),
        lambda a: dt.abs(a) * a,
        lambda a: dt.relu(a) * a,
        lambda a: (a * a + 1) ** a,
    ],
    ids=["clamp", "maximum", "where", "abs", "relu", "pow_tensor"],
)
def test_second_derivatives_through_masks(fn):
    assert gradgradcheck(fn, (leaf(ANY[:2, :3]),))


def test_numpy_scalars_and_arrays_on_the_left_give_tensors_with_gradients():
    x = leaf([1.0, 2.0])
    for out in (
        np.float64(0.5) * x,
        np.float32(2) + x,
        np.float64(3) - x,
        np.float64(2) / x,
        np.int64(2) ** x,
    ):
        assert isinstance(out, dt.Tensor) and out.grad_fn is not None
    y = np.float64(3.0) * dt.tensor([1.0, 2.0], requires_grad=True)
    assert y.dtype == dt.float32


NUMPY_OPERANDS = {
    "0d_f64": np.array(2.0),
    "0d_i32": np.array(2, dtype=np.int32),
    "0d_bool": np.array(True),
    "1d_f64": np.array([2.0]),
    "f64": np.float64(2.0),
    "f32": np.float32(2.0),
    "i64": np.int64(3),
    "i8": np.int8(3),
}
NUMPY_OPERATORS = {
    "add": lambda t, n: t + n,
    "radd": lambda t, n: n + t,
    "rsub": lambda t, n: n - t,
    "div": lambda t, n: t / n,
    "rdiv": lambda t, n: n / t,
    "pow": lambda t, n: t**n,
    "floordiv": lambda t, n: t // n,
    "and": lambda t, n: t & n,
    "lt": lambda t, n: t < n,
    "eq": lambda t, n: t == n,
    "iadd": lambda t, n: t.__iadd__(n),
    "matmul": lambda t, n: t @ np.ones(3, dtype=np.asarray(n).dtype),
}


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_numpy_operands_of_operators_as_pytorch(torch, dtype):
    """A NumPy array operand is NumPy's (its dtype rule; a tensor back, bool as uint8), a
    reflected one a TypeError; a NumPy scalar is a number (torch.add's dtype)."""

    def run(lib, op, n):
        try:
            out = op(lib.ones(3, dtype=getattr(lib, dtype)), n)
        except (TypeError, RuntimeError, NotImplementedError) as e:
            return type(e).__name__
        if not isinstance(out, lib.Tensor):
            return out
        return str(out.dtype).split(".")[1], out.tolist()

    for (on, op), (nn, n) in itertools.product(NUMPY_OPERATORS.items(), NUMPY_OPERANDS.items()):
        assert run(dt, op, n) == run(torch, op, n), (on, nn)
    with pytest.raises(RuntimeError, match="requires grad"):
        leaf([1.0, 2.0]) + np.array(2.0)


# ---------------------------------------------------------------------- parity with PyTorch
# name: (fn(lib, *float64 leaves), inputs) -- fn uses only API both libraries share
PS = (3, 4)
PARITY_GRAD = {
    "add": (lambda L, a, b: a + b, [any_(PS), any_((4,))]),
    "sub_reflected": (lambda L, a: 1 - a, [any_(PS)]),
    "mul": (lambda L, a, b: a * b, [any_(PS), any_((3, 1))]),
    "div": (lambda L, a, b: a / b, [any_(PS), pos(PS)]),
    "rdiv": (lambda L, a: 2 / a, [pos(PS)]),
    "pow": (lambda L, a, b: a**b, [pos(PS), any_(PS)]),
    "pow_scalar": (lambda L, a: a**3, [any_(PS)]),
    "rpow": (lambda L, a: 2**a, [any_(PS)]),
    "neg": (lambda L, a: -a, [any_(PS)]),
    "abs": (lambda L, a: L.abs(a), [any_(PS)]),
    "exp": (lambda L, a: L.exp(a), [any_(PS)]),
    "expm1": (lambda L, a: L.expm1(a), [any_(PS)]),
    "log": (lambda L, a: L.log(a), [pos(PS)]),
    "log1p": (lambda L, a: L.log1p(a), [pos(PS)]),
    "log2": (lambda L, a: L.log2(a), [pos(PS)]),
    "log10": (lambda L, a: L.log10(a), [pos(PS)]),
    "sqrt": (lambda L, a: L.sqrt(a), [pos(PS)]),
    "rsqrt": (lambda L, a: L.rsqrt(a), [pos(PS)]),
    "square": (lambda L, a: L.square(a), [any_(PS)]),
    "reciprocal": (lambda L, a: L.reciprocal(a), [pos(PS)]),
    "sin": (lambda L, a: L.sin(a), [any_(PS)]),
    "cos": (lambda L, a: L.cos(a), [any_(PS)]),
    "tan": (lambda L, a: L.tan(a), [any_(PS) / 2]),
    "tanh": (lambda L, a: L.tanh(a), [any_(PS)]),
    "sigmoid": (lambda L, a: L.sigmoid(a), [any_(PS) * 5]),
    "relu": (lambda L, a: L.relu(a), [any_(PS)]),
    "erf": (lambda L, a: L.erf(a), [any_(PS)]),
    "sinh": (lambda L, a: L.sinh(a), [any_(PS)]),
    "cosh": (lambda L, a: L.cosh(a), [any_(PS)]),
    "asin": (lambda L, a: L.asin(a), [any_(PS) / 2.5]),
    "acos": (lambda L, a: L.acos(a), [any_(PS) / 2.5]),
    "atan": (lambda L, a: L.atan(a), [any_(PS)]),
    "atan2": (lambda L, a, b: L.atan2(a, b), [any_(PS), any_((4,))]),
    "lerp": (lambda L, a, b, w: L.lerp(a, b, w), [any_(PS), any_(PS), any_((4,))]),
    "clamp": (lambda L, a: L.clamp(a, -0.5, 0.7), [any_(PS)]),
    "clamp_tensors": (lambda L, a, lo, hi: L.clamp(a, lo, hi), [any_(PS), any_((4,)) - 1, any_((4,)) + 1]),
    "maximum": (lambda L, a, b: L.maximum(a, b), [any_(PS), any_(PS)]),
    "minimum": (lambda L, a, b: L.minimum(a, b), [any_(PS), any_((4,))]),
    "where": (lambda L, a, b: L.where(a > 0, a, b), [any_(PS), any_((4,))]),
    "where_scalar": (lambda L, a: L.where(a > 0, a, 0.5), [any_(PS)]),
    "logaddexp": (
        lambda L, a, b: L.logaddexp(a, b),
        [PARITY_RNG.normal(size=(3, 4)), PARITY_RNG.normal(size=(4,))],
    ),
    "hypot": (lambda L, a, b: a.hypot(b), [PARITY_RNG.normal(size=(3, 4)), PARITY_RNG.normal(size=(3, 1))]),
    "nan_to_num": (lambda L, a: L.nan_to_num(a, posinf=3.0), [np.array([np.nan, np.inf, 1.0])]),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(PARITY_GRAD))
def test_values_and_gradients_match_torch(name):
    assert_values_and_gradients_match(*PARITY_GRAD[name])


PARITY_NO_GRAD = {  # compare values and dtypes on int64 inputs
    "invert": lambda L, a: ~a,
    "bit_and": lambda L, a: a & 3,
    "floordiv": lambda L, a: a // 2,
    "rfloordiv": lambda L, a: 7 // (a + 10),
    "mod": lambda L, a: a % 3,
    "fmod": lambda L, a: L.fmod(a, 3),
    "float_floordiv": lambda L, a: a.float() // 0.75,
    "float_mod": lambda L, a: a.float() % 0.75,
    "sign": lambda L, a: L.sign(a),
    "int_div": lambda L, a: a / 2,
    "int_plus_float": lambda L, a: a + 0.5,
    "int_float_tensors": lambda L, a: a + a.float(),
    "clamp_int_float": lambda L, a: L.clamp(a, 0.5),
    "exp_int": lambda L, a: L.exp(a),
    "abs_int": lambda L, a: L.abs(a),
    "where_scalars": lambda L, a: L.where(a > 0, 1.0, 0),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(PARITY_NO_GRAD))
def test_no_grad_ops_match_torch(name):
    assert_no_grad_op_matches(PARITY_NO_GRAD[name], INTS)


# ---------------------------------------------------------------------- logaddexp, hypot, nan_to_num
def test_logaddexp_values_and_stability():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4,))
    np.testing.assert_allclose(
        dt.logaddexp(dt.tensor(a), dt.tensor(b)).numpy(), np.logaddexp(a, b), rtol=1e-12
    )
    big = dt.logaddexp(dt.tensor([1000.0, -1000.0]), dt.tensor([1000.0, -1000.0]))
    np.testing.assert_allclose(big.numpy(), [1000 + math.log(2), -1000 + math.log(2)], rtol=1e-6)
    inf = dt.tensor([-math.inf])
    assert dt.logaddexp(inf, inf).item() == -math.inf
    assert dt.tensor([0.0]).logaddexp(dt.tensor([0.0])).item() == pytest.approx(math.log(2))


def test_hypot_values_and_stability():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 1))
    np.testing.assert_allclose(dt.hypot(dt.tensor(a), dt.tensor(b)).numpy(), np.hypot(a, b), rtol=1e-12)
    assert dt.hypot(dt.tensor([3.0]), dt.tensor([4.0])).item() == 5.0
    big = dt.hypot(dt.tensor([3e200], dtype=dt.float64), dt.tensor([4e200], dtype=dt.float64))
    assert big.item() == pytest.approx(5e200)
    assert dt.tensor([5.0]).hypot(dt.tensor([12.0])).item() == 13.0


def test_logaddexp_hypot_dtypes_and_errors():
    f32, f64 = dt.ones(2), dt.ones(2, dtype=dt.float64)
    assert dt.logaddexp(f32, f64).dtype == dt.float64
    assert dt.hypot(dt.tensor([1, 2]), dt.tensor([1.0, 2.0])).dtype == dt.float32
    for fn, name in ((dt.logaddexp, "logaddexp"), (dt.hypot, "hypot")):
        with pytest.raises(NotImplementedError, match=f"\"{name}_cpu\" not implemented for 'Long'"):
            fn(dt.tensor([1, 2]), dt.tensor([3, 4]))
        with pytest.raises(TypeError, match="argument 'other' \\(position 2\\) must be Tensor, not float"):
            fn(f32, 1.0)
        with pytest.raises(RuntimeError, match="must match the size"):
            fn(dt.ones(2, 3), dt.ones(4))


def test_logaddexp_hypot_gradcheck():
    a, b = leaf(RNG.normal(size=(3, 4))), leaf(RNG.normal(size=(4,)))
    for fn in (dt.logaddexp, dt.hypot):
        assert gradcheck(fn, (a, b))
        assert gradgradcheck(fn, (a, b))
    c = leaf(RNG.normal(size=(3, 4)))
    assert gradcheck(lambda u: dt.logaddexp(u, dt.tensor([0.5])), (c,))


def test_hypot_gradient_at_origin_is_nan_as_pytorch():
    a, b = leaf([0.0]), leaf([0.0])
    with np.errstate(invalid="ignore"):
        dt.hypot(a, b).sum().backward()
    assert math.isnan(a.grad.item()) and math.isnan(b.grad.item())


def test_nan_to_num_values():
    x = dt.tensor([math.nan, math.inf, -math.inf, 1.5])
    f32 = np.finfo(np.float32)
    assert dt.nan_to_num(x).tolist() == [0.0, float(f32.max), float(f32.min), 1.5]
    f64 = dt.nan_to_num(x.double())
    assert f64.dtype == dt.float64 and f64.tolist() == [
        0.0,
        np.finfo(np.float64).max,
        np.finfo(np.float64).min,
        1.5,
    ]
    assert dt.nan_to_num(x, nan=2.0, posinf=1.0, neginf=-1.0).tolist() == [2.0, 1.0, -1.0, 1.5]
    assert x.nan_to_num(1.0).tolist()[0] == 1.0
    assert dt.nan_to_num(x, posinf=1e300).tolist()[1] == math.inf  # beyond float32: inf
    ints = dt.tensor([1, 2])
    out = dt.nan_to_num(ints)
    assert out.tolist() == [1, 2] and out.dtype == dt.int64 and out._data is not ints._data
    assert math.isnan(x[0].item())  # the input is left alone


def test_nan_to_num_gradient_passes_where_finite():
    x = dt.tensor([math.nan, math.inf, -math.inf, 1.5], dtype=dt.float64, requires_grad=True)
    dt.nan_to_num(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 1.0]
    y = leaf(RNG.normal(size=(3, 4)))
    assert gradcheck(dt.nan_to_num, (y,))


def test_atan2_of_integers_is_the_float_angle():
    """Integer inputs give the angle in the default float dtype (it was cast back to the
    integers' dtype and truncated)."""
    y, x = dt.tensor([1, -1, 3, 0]), dt.tensor([2, 2, -1, -5])
    np.testing.assert_allclose(dt.atan2(y, x).numpy(), np.arctan2([1, -1, 3, 0], [2, 2, -1, -5]), rtol=1e-6)


ZERO_DIM_OPS = {  # ops whose NumPy ufunc gives a NumPy scalar for 0-d arrays
    "isnan": (0.3,), "isinf": (0.3,), "isfinite": (0.3,), "isposinf": (0.3,), "isneginf": (0.3,),
    "signbit": (0.3,), "logical_not": (0.3,), "sign": (0.3,), "floor": (0.3,), "ceil": (0.3,),
    "trunc": (0.3,), "round": (0.3,), "bitwise_not": (3,), "gcd": (4, 6), "lcm": (4, 6),
    "bitwise_left_shift": (3, 1), "bitwise_right_shift": (3, 1), "nextafter": (0.3, 1.0),
    "heaviside": (0.3, 0.5),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ZERO_DIM_OPS))
def test_zero_dim_results_are_tensors_of_arrays(name):
    args = [dt.tensor(v) for v in ZERO_DIM_OPS[name]]
    out = getattr(dt, name)(*args)
    assert isinstance(out._data, np.ndarray) and out.shape == ()
    like = dt.zeros_like(out)  # needs the result's array layout (it raised on a NumPy scalar)
    assert like.shape == () and like.dtype is out.dtype


def test_angle_of_negative_zero_is_zero():
    """A real tensor's angle is pi below zero only: -0.0 gives 0 (NumPy's angle gives pi),
    NaN stays NaN, as PyTorch answers."""
    out = dt.tensor([-2.0, -0.0, 0.0, 3.0, float("nan")]).angle().numpy()
    np.testing.assert_array_equal(out[:4], np.array([np.pi, 0.0, 0.0, 0.0], np.float32))
    assert np.isnan(out[4]) and not np.signbit(out[1])


def test_casting_non_finite_floats_to_integers_is_silent():
    """``(-inf).long()`` (x-transformers' relative-position buckets take ``log(0)``) gives
    PyTorch's undefined value without NumPy's RuntimeWarning."""
    x = dt.tensor([float("-inf"), float("nan"), 1e30, 2.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.long().tolist() == [-(2**63)] * 3 + [2]
        assert x.int().tolist() == [-(2**31)] * 3 + [2]


@pytest.mark.parity
def test_complex_logaddexp_values_infinities_and_gradients_as_pytorch(torch):
    inf = math.inf
    a = [1 + 2j, -3 + 1j, complex(-inf, 0), complex(inf, 1), complex(math.nan, 0)]
    b = [0.5 - 1j, 2 + 0j, complex(-inf, 2), complex(inf, 0), 1j]

    def run(L):
        x = L.tensor(a, dtype=L.complex128, requires_grad=True)
        r = L.logaddexp(x, L.tensor(b, dtype=L.complex128))
        r[:2].abs().sum().backward()
        return r.detach().numpy(), x.grad.numpy(), L.logaddexp(L.ones(2), L.ones(2, dtype=L.complex64)).dtype

    (r1, g1, d1), (r2, g2, d2) = run(dt), run(torch)
    np.testing.assert_allclose(r1, r2, rtol=1e-12)
    np.testing.assert_allclose(g1, g2, rtol=1e-12)
    assert str(d1).split(".")[-1] == str(d2).split(".")[-1] == "complex64"
    z = dt.tensor(RNG.normal(size=(3,)) + 1j * RNG.normal(size=(3,)), requires_grad=True)
    assert gradcheck(lambda u: dt.logaddexp(u, dt.tensor([0.5 - 1j], dtype=dt.complex128)), (z,))


def test_float_overflow_and_division_by_zero_do_not_warn_as_pytorch():
    """``z = (z / x) * y`` until it overflows (the autograd tutorial's profiler loop), ``exp``,
    sums and casts past float32's range give inf/nan silently, as PyTorch's kernels; a
    program's own NumPy calls still warn."""
    x = dt.tensor([3e38, -3e38, 1.0, 0.0])
    with warnings.catch_warnings(record=True) as caught:
        # (pytest drops the filter that importing disttorch installed during collection)
        dt._native_warnings.quiet_numpy_float_errors()
        (x / dt.tensor([1e-10, 1e-10, 0.0, 0.0])) * 10
        x.exp().sum()
        (x * x).mean()
        dt.tensor([1e300], dtype=dt.float64).float()
        x @ x
        assert not caught
        np.array([3e38], np.float32) * np.float32(10)
    assert [str(w.message) for w in caught] == ["overflow encountered in multiply"]


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
def test_rsqrt_16_bit_vector_and_scalar_loops_as_pytorch(torch, dtype_name):
    """PyTorch's vector loop rounds ``1 / sqrt`` once; its scalar loop (a tensor's last
    ``n % 32`` elements: all of an RMS norm's ``(rows, 1)`` statistics) rounds the root first."""
    x = np.abs(np.random.default_rng(0).standard_normal(1000)) * 3 + 1e-3
    for n in (8, 32, 1000):
        got = dt.tensor(x[:n], dtype=dt.float32).to(getattr(dt, dtype_name)).rsqrt()
        want = torch.tensor(x[:n], dtype=torch.float32).to(getattr(torch, dtype_name)).rsqrt()
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


REFUSED_OR_CONVERTED = {  # PyTorch's answers where its kernels or signatures differ from NumPy's
    "round_int_decimals": lambda L: L.tensor([15, 25]).round(decimals=-1),
    "round_int_decimals_0": lambda L: L.tensor([15, 25]).round(decimals=0),
    "round_int": lambda L: L.tensor([15, 25]).round(),
    "round_bool": lambda L: L.tensor([True]).round(),
    "round_bfloat16_decimals": lambda L: (L.tensor([1.0, -1.0, 2.0]).bfloat16() * 1.2345).round(decimals=2),
    "clamp_tensor_and_number": lambda L: L.ones(2).clamp(L.zeros(2), 1),
    "clip_number_and_tensor": lambda L: L.ones(2).clip(0, L.zeros(2)),
    "clamp_min_tensor_only": lambda L: L.ones(2).clamp(min=L.zeros(2)),
    "where_uint8_condition": lambda L: L.where(L.tensor([1, 0], dtype=L.uint8), 1.0, 0.0),
    "where_int8_condition": lambda L: L.where(L.tensor([1, 0], dtype=L.int8), 1.0, 0.0),
    "int_of_two_elements": lambda L: int(L.ones(2)),
    "float_of_no_elements": lambda L: float(L.ones(0)),
    "complex_of_two_elements": lambda L: complex(L.ones(2)),
    "searchsorted_bool": lambda L: L.searchsorted(L.tensor([False, True]), L.tensor([True])),
    "div_trunc_int8": lambda L: L.div(L.tensor([-128, 7, -7], dtype=L.int8), -2, rounding_mode="trunc"),
    "div_trunc_uint8_negative": lambda L: L.div(L.tensor([200, 7], dtype=L.uint8), -2, rounding_mode="trunc"),
    "div_trunc_bool": lambda L: L.div(L.tensor([True]), L.tensor([True]), rounding_mode="trunc"),
    "div_trunc_bool_number": lambda L: L.div(L.tensor([True]), -2, rounding_mode="trunc"),
    "abs_bool": lambda L: L.tensor([True]).abs(),
    "clamp_float16_bound_overflows": lambda L: L.ones(2, dtype=L.float16).clamp(max=1e6),
    "clamp_int8_bound_overflows": lambda L: L.ones(2, dtype=L.int8).clamp(max=1000),
    "clamp_uint8_minus_one": lambda L: L.ones(2, dtype=L.uint8).clamp(min=-1),
    "nan_to_num_complex": lambda L: L.tensor([complex(math.inf, math.nan)]).nan_to_num().real,
    "masked_scatter_widening_mask": lambda L: L.ones(3).masked_scatter(
        L.tensor([[True], [False]]), L.arange(6.0)
    ),
}


@pytest.mark.parity
def test_refusals_and_conversions_as_pytorch(torch):
    def answer(L, call):
        try:
            r = call(L)
        except (TypeError, ValueError, RuntimeError, NotImplementedError) as e:
            return type(e).__name__, str(e) if isinstance(e, NotImplementedError) else ""
        return (str(r.dtype).split(".")[1], r.float().tolist()) if isinstance(r, L.Tensor) else r

    for name, call in REFUSED_OR_CONVERTED.items():
        assert answer(dt, call) == answer(torch, call), name


def _unit_dim_strides(lib) -> list:
    image = np.arange(5 * 6 * 3, dtype=np.float32).reshape(5, 6, 3).transpose(2, 0, 1)
    x = lib.from_numpy(image).unsqueeze(0)  # (1, 3, 5, 6), N's stride 3: not channels-last
    mask = lib.ones(1, 1, 5, 6)
    y = x * mask
    conv = lib.nn.functional.conv2d(y, lib.ones(2, 3, 3, 3))
    return [y.stride(), (x - 1).stride(), (mask * x).stride(), conv.stride(), conv.view(1, -1).shape[1]]


def test_broadcast_results_place_size_one_dims_as_tensor_iterator():
    # NumPy put the N of an HWC image transposed and unsqueezed outermost, making it
    # channels-last: a convolution then kept NHWC and a later .view(N, -1) failed
    got = _unit_dim_strides(dt)
    assert got[:2] == [(3, 1, 18, 3), (3, 1, 18, 3)] and got[4] == 24


@pytest.mark.parity
def test_broadcast_result_strides_as_pytorch(torch):
    assert _unit_dim_strides(dt) == _unit_dim_strides(torch)


_LAYOUT_KEEPING = {
    "sigmoid": lambda lib, t: lib.sigmoid(t),
    "square": lambda lib, t: t**2,
    "cube": lambda lib, t: t**3,
    "inverse": lambda lib, t: t**-1,
    "elu": lambda lib, t: lib.nn.functional.elu(t),
    "selu": lambda lib, t: lib.nn.functional.selu(t),
    "silu": lambda lib, t: lib.nn.functional.silu(t),
    "gelu": lambda lib, t: lib.nn.functional.gelu(t),
    "gelu_tanh": lambda lib, t: lib.nn.functional.gelu(t, approximate="tanh"),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pointwise_kernels_keep_a_channels_last_layout(dtype):
    # their kernels walked the input flat in C order and returned C order: a dropout after
    # them then drew its mask in another order than PyTorch's (PixelSNAIL's ELU)
    x = dt.rand(2, 4, 3, 5, dtype=getattr(dt, dtype)).to(memory_format=dt.channels_last) + 0.1
    for name, op in _LAYOUT_KEEPING.items():
        out = op(dt, x)
        assert out.is_contiguous(memory_format=dt.channels_last), name
        # (float32 bits may differ: as PyTorch, vector blocks follow the memory order)
        np.testing.assert_allclose(out.numpy(), op(dt, x.contiguous()).numpy(), rtol=1e-6, err_msg=name)


@pytest.mark.parity
def test_pointwise_kernel_layouts_as_pytorch(torch):
    def strides(lib):
        x = lib.rand(2, 4, 3, 5).to(memory_format=lib.channels_last) + 0.1
        return [op(lib, x).stride() for op in _LAYOUT_KEEPING.values()]

    assert strides(dt) == strides(torch)


def test_numpy_ufunc_on_a_tensor_warns_as_pytorch(torch):
    """NumPy 2 warns about ``__array_wrap__``'s one-argument signature, which PyTorch's has
    (``tensor * ndarray``: vtrace programs print the warning); the result is a tensor."""

    def run(lib):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = lib.ones(2) * np.ones(2)
        return type(out).__name__, [(w.category, str(w.message)) for w in seen]

    assert run(dt) == run(torch)
    assert run(dt)[1][0][0] is DeprecationWarning
