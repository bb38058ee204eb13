"""Elementwise ops: values against NumPy, float64 gradient checks, broadcasting, reflected
operators, dtype promotion, second derivatives and PyTorch's error messages."""
import math
import warnings

import numpy as np
import pytest

import disttorch as torch
from disttorch.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def leaf(arr, requires_grad=True):
    return torch.tensor(np.asarray(arr, dtype=np.float64), requires_grad=requires_grad)


POS = RNG.uniform(0.5, 2.0, (3, 4))      # domain of log, sqrt, ...
ANY = RNG.uniform(-2.0, 2.0, (3, 4))

UNARY = [  # name, NumPy reference, input domain
    ("neg", np.negative, ANY), ("abs", np.abs, ANY), ("exp", np.exp, ANY),
    ("expm1", np.expm1, ANY), ("log", np.log, POS), ("log1p", np.log1p, POS),
    ("log2", np.log2, POS), ("log10", np.log10, POS), ("sqrt", np.sqrt, POS),
    ("rsqrt", lambda x: 1 / np.sqrt(x), POS), ("square", np.square, ANY),
    ("reciprocal", np.reciprocal, POS), ("sin", np.sin, ANY), ("cos", np.cos, ANY),
    ("tan", np.tan, ANY * 0.5), ("tanh", np.tanh, ANY),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), ANY), ("relu", lambda x: np.maximum(x, 0), ANY),
    ("erf", np.vectorize(math.erf), ANY), ("sinh", np.sinh, ANY), ("cosh", np.cosh, ANY),
    ("asin", np.arcsin, ANY * 0.45), ("acos", np.arccos, ANY * 0.45), ("atan", np.arctan, ANY),
]


@pytest.mark.parametrize("name,ref,domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_values_function_and_method(name, ref, domain):
    x = torch.tensor(domain.astype(np.float32))
    expected = ref(domain.astype(np.float32))
    np.testing.assert_allclose(getattr(torch, name)(x).numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(getattr(x, name)().numpy(), expected, rtol=1e-5, atol=1e-6)
    assert getattr(torch, name)(x).dtype == torch.float32


@pytest.mark.parametrize("name,ref,domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradcheck(name, ref, domain):
    assert gradcheck(getattr(torch, name), (leaf(domain),))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "sin",
                                  "reciprocal", "expm1", "erf", "tan"])
def test_unary_second_derivative(name):
    x = leaf(POS[:1, :3])
    assert gradgradcheck(getattr(torch, name), (x,))


def test_unary_non_unit_upstream_gradient():
    x = leaf(ANY)
    g = RNG.normal(size=ANY.shape)
    torch.tanh(x).backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), g * (1 - np.tanh(ANY) ** 2))


def test_erf_matches_math_erf_across_ranges():
    xs = np.concatenate([np.linspace(-8, 8, 4001), [0.0, 1e-300, 2.4999999, 2.5, 40.0]])
    got = torch.erf(torch.tensor(xs, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got, [math.erf(v) for v in xs], rtol=1e-14, atol=1e-15)
    special = torch.erf(torch.tensor([np.inf, -np.inf, np.nan], dtype=torch.float64)).numpy()
    assert special[0] == 1 and special[1] == -1 and np.isnan(special[2])


def test_sigmoid_is_stable_for_large_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = torch.sigmoid(torch.tensor([-1000.0, 0.0, 1000.0])).numpy()
    np.testing.assert_allclose(out, [0.0, 0.5, 1.0])


# ---------------------------------------------------------------------- binary ops
BINARY = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
          ("pow", np.power), ("maximum", np.maximum), ("minimum", np.minimum),
          ("atan2", np.arctan2)]


@pytest.mark.parametrize("name,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary_values_with_broadcast(name, ref):
    a, b = POS.astype(np.float32), POS[0].astype(np.float32) + 0.25
    got = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), ref(a, b), rtol=1e-6)
    assert got.shape == torch.Size([3, 4])


@pytest.mark.parametrize("name", [b[0] for b in BINARY])
def test_binary_gradcheck_broadcast_operands(name):
    a, b = leaf(POS), leaf(POS[0] + 0.25)   # b broadcasts along dim 0: its grad is summed
    assert gradcheck(getattr(torch, name), (a, b))
    col = leaf(POS[:, :1] + 0.5)
    assert gradcheck(getattr(torch, name), (col, b))


@pytest.mark.parametrize("name", [b[0] for b in BINARY if b[0] not in ("maximum", "minimum")])
def test_binary_second_derivative(name):
    a, b = leaf(POS[:2, :2]), leaf(POS[2, :2] + 0.3)
    assert gradgradcheck(getattr(torch, name), (a, b))


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
    cases = [(lambda t: 1 - t, 1 - x, -np.ones(3)), (lambda t: 2 ** t, 2 ** x, 2 ** x * np.log(2)),
             (lambda t: 2 / t, 2 / x, -2 / x ** 2), (lambda t: 3 + t, 3 + x, np.ones(3)),
             (lambda t: 3 * t, 3 * x, np.full(3, 3.0)), (lambda t: t ** 3, x ** 3, 3 * x ** 2),
             (lambda t: -t, -x, -np.ones(3)), (lambda t: abs(-t), x, np.ones(3))]
    for fn, value, grad in cases:
        a.grad = None
        out = fn(a)
        np.testing.assert_allclose(out.detach().numpy(), value)
        out.sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), grad)


def test_reflected_pow_gradcheck():
    assert gradcheck(lambda t: 2 ** t, (leaf(ANY),))
    assert gradcheck(lambda t: 1 - t, (leaf(ANY),))
    assert gradcheck(lambda t: 2 / t, (leaf(POS),))


def test_lerp_and_arc_aliases():
    a, b = leaf([0.0, 1.0]), leaf([2.0, 3.0])
    np.testing.assert_allclose(torch.lerp(a, b, 0.25).detach().numpy(), [0.5, 1.5])
    assert gradcheck(lambda x, y, w: torch.lerp(x, y, w), (a, b, leaf([0.3, 0.6])))
    assert torch.arctan is torch.atan and torch.arcsin is torch.asin
    assert torch.atan2(torch.tensor([1, -1]), torch.tensor([0, 0])).dtype == torch.float32


def test_add_sub_alpha():
    a, b = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    np.testing.assert_allclose(torch.add(a, b, alpha=2).numpy(), [7.0, 10.0])
    np.testing.assert_allclose(a.sub(b, alpha=0.5).numpy(), [-0.5, 0.0])


# ---------------------------------------------------------------------- dtypes
def test_dtype_promotion_rules():
    i = torch.tensor([1, 2, 3])
    f = torch.tensor([1.0, 2.0, 3.0])
    assert (i + 2.5).dtype == torch.float32
    assert (2.5 + i).dtype == torch.float32
    assert (f * 2.5).dtype == torch.float32
    assert (i / i).dtype == torch.float32
    np.testing.assert_allclose((i / i).numpy(), [1.0, 1.0, 1.0])
    assert (i * 2).dtype == torch.int64
    assert (i + f).dtype == torch.float32
    assert (f + f.double()).dtype == torch.float64
    assert (i.int() + i).dtype == torch.int64
    assert (f + torch.tensor(2.0, dtype=torch.float64)).dtype == torch.float32  # 0-dim: scalar-like
    assert torch.exp(i).dtype == torch.float32 and torch.sqrt(torch.tensor([True])).dtype == torch.float32
    assert torch.abs(i).dtype == torch.int64 and torch.square(i).dtype == torch.int64
    assert torch.reciprocal(i).dtype == torch.float32
    assert (i ** 2).dtype == torch.int64 and (i ** 0.5).dtype == torch.float32
    assert (f.half() * 2.0).dtype == torch.float16


def test_integer_pow_and_bool_errors():
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        torch.tensor([1, 2]) ** -1
    b = torch.tensor([True, False])
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -b
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool"):
        b - b
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        torch.relu(b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("shape", [(3, 16384), (5, 7001), (40000,)])
def test_relu_of_large_tensors_matches_numpy(shape, dtype):
    # Large contiguous inputs go through the zero-row path: whole rows plus a tail.
    x = (RNG.standard_normal(shape) * 5).astype(dtype)
    if dtype != np.int64:
        x.reshape(-1)[[0, 17, -1]] = [np.nan, -0.0, -np.inf]
    for arr in (x, x.T):  # a transposed view takes the plain path
        t = torch.from_numpy(arr)
        assert torch.relu(t).dtype == t.dtype
        np.testing.assert_array_equal(torch.relu(t).numpy(), np.maximum(arr, 0))
    a = torch.tensor(x.astype(np.float64), requires_grad=True)
    torch.relu(a).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), (x > 0).astype(np.float64))


def test_broadcast_error_names_both_sizes():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 1"):
        torch.ones(2, 3) + torch.ones(2, 4)
    with pytest.raises(RuntimeError, match=r"tensor a \(2\) must match the size of tensor b \(5\)"):
        torch.ones(2) / torch.ones(5)


def test_div_rounding_modes():
    a = torch.tensor([-7.0, 7.0, 5.0])
    np.testing.assert_allclose(torch.div(a, 2, rounding_mode="floor").numpy(), [-4.0, 3.0, 2.0])
    np.testing.assert_allclose(torch.div(a, 2, rounding_mode="trunc").numpy(), [-3.0, 3.0, 2.0])
    i = torch.tensor([-7, 7])
    assert torch.div(i, 2, rounding_mode="trunc").tolist() == [-3, 3]
    assert torch.div(i, 2, rounding_mode="floor").tolist() == [-4, 3]
    with pytest.raises(ValueError, match="rounding_mode"):
        torch.div(a, 2, rounding_mode="round")


# ---------------------------------------------------------------------- clamp, max/min, where
def test_clamp_numbers_tensors_and_gradient_routing():
    x = leaf([-2.0, -1.0, 0.0, 1.0, 2.0])
    np.testing.assert_allclose(torch.clamp(x, -1, 1).detach().numpy(), [-1, -1, 0, 1, 1])
    np.testing.assert_allclose(x.clip(min=0).detach().numpy(), [0, 0, 0, 1, 2])
    np.testing.assert_allclose(x.clamp(max=0.5).detach().numpy(), [-2, -1, 0, 0.5, 0.5])
    torch.clamp(x, -1, 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, 1, 1, 1, 0])  # bounds themselves pass grad
    lo, hi = leaf(np.full(5, -0.5)), leaf(np.full(5, 0.5))
    assert gradcheck(lambda a, low, high: torch.clamp(a, low, high), (leaf([-2.0, -0.3, 0.1, 0.7, 2.0]), lo, hi))
    assert torch.clamp(torch.tensor([1, 5]), 0.5).dtype == torch.float32
    np.testing.assert_allclose(torch.clamp(torch.tensor([0.0, 3.0]), 2.0, 1.0).numpy(), [1.0, 1.0])
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        torch.clamp(x)


def test_maximum_minimum_split_ties_and_scalar_other():
    a, b = leaf([1.0, 2.0, 3.0]), leaf([3.0, 2.0, 1.0])
    torch.maximum(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 0.5, 0.0])
    np.testing.assert_allclose(torch.minimum(a, torch.tensor(2.0, dtype=torch.float64)).detach().numpy(),
                               [1.0, 2.0, 2.0])
    assert np.isnan(torch.maximum(torch.tensor([np.nan]), torch.tensor([1.0])).item())
    np.testing.assert_allclose(torch.max(a, b).detach().numpy(), [3.0, 2.0, 3.0])


def test_where_with_tensors_and_scalars():
    cond = torch.tensor([True, False, True])
    a, b = leaf([1.0, 2.0, 3.0]), leaf([10.0, 20.0, 30.0])
    out = torch.where(cond, a, b)
    np.testing.assert_allclose(out.detach().numpy(), [1.0, 20.0, 3.0])
    out.backward(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
    np.testing.assert_allclose(a.grad.numpy(), [1.0, 0.0, 3.0])
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 2.0, 0.0])
    assert torch.where(cond, 1.0, 0).dtype == torch.float32
    assert torch.where(cond, 1, 0).dtype == torch.int64
    assert torch.where(cond, torch.ones(3, dtype=torch.int32), 2.5).dtype == torch.float32
    np.testing.assert_allclose(a.where(cond, 0.0).detach().numpy(), [1.0, 0.0, 3.0])
    assert gradcheck(lambda x: torch.where(cond, x, 0.0) * x, (leaf([1.0, 2.0, 3.0]),))
    (idx,) = torch.where(cond)
    assert idx.tolist() == [0, 2]
    with pytest.raises(RuntimeError, match="boolean"):
        torch.where(torch.tensor([1, 0]), a, b)


def test_pow_gradients_at_zero_base_and_zero_exponent():
    base = leaf([0.0, 2.0])
    exponent = leaf([2.0, 3.0])
    (base ** exponent).sum().backward()
    np.testing.assert_allclose(exponent.grad.numpy(), [0.0, 8.0 * math.log(2.0)])
    np.testing.assert_allclose(base.grad.numpy(), [0.0, 12.0])
    x = leaf([0.0, 1.5])
    (x ** 0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])
    assert gradcheck(lambda a, b: a ** b, (leaf(POS), leaf(ANY)))


def test_cast_between_float_dtypes_passes_gradient():
    x = leaf([1.0, 2.0])
    y = x.float()
    assert y.dtype == torch.float32
    (y * 2).sum().backward()
    assert x.grad.dtype == torch.float64
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


@pytest.mark.parametrize("fn", [lambda a: torch.clamp(a, -0.5, 0.5) * a,
                                lambda a: torch.maximum(a, a * 0.3) * a,
                                lambda a: torch.where(a > 0, a * a, a), lambda a: torch.abs(a) * a,
                                lambda a: torch.relu(a) * a, lambda a: (a * a + 1) ** a],
                         ids=["clamp", "maximum", "where", "abs", "relu", "pow_tensor"])
def test_second_derivatives_through_masks(fn):
    assert gradgradcheck(fn, (leaf(ANY[:2, :3]),))


def test_numpy_scalars_and_arrays_on_the_left_give_tensors_with_gradients():
    x = leaf([1.0, 2.0])
    for out in (np.float64(0.5) * x, np.float32(2) + x, np.float64(3) - x, np.float64(2) / x,
                np.int64(2) ** x, np.ones(2) * x):
        assert isinstance(out, torch.Tensor) and out.grad_fn is not None
    y = np.float64(3.0) * torch.tensor([1.0, 2.0], requires_grad=True)
    assert y.dtype == torch.float32
