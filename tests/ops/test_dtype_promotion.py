"""PyTorch's type-promotion rules op by op: which ops promote mixed dtypes (and to what),
which refuse them, and with which error, over every pair of a set of dtypes; the in-place
forms keep their own dtype or refuse a result they cannot hold."""

import itertools

import numpy as np
import pytest

import disttorch as dt

DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64", "complex64"]
PAIRS = list(itertools.product(DTYPES, DTYPES))
I2 = (0, 1)  # an index of two positions


def _ones(lib, dtype, shape):
    return lib.ones(shape, dtype=getattr(lib, dtype))


# name -> fn(lib, a, b): ``a(shape)`` / ``b(shape)`` make tensors of the pair's two dtypes
OPS = {
    "outer": lambda L, a, b: L.outer(a(4), b(3)),
    "ger": lambda L, a, b: L.ger(a(4), b(3)),
    "addr": lambda L, a, b: L.addr(a((4, 3)), a(4), b(3)),
    "cross": lambda L, a, b: L.cross(a((2, 3)), b((2, 3)), dim=1),
    "linalg.cross": lambda L, a, b: L.linalg.cross(a((2, 3)), b((2, 3))),
    "kron": lambda L, a, b: L.kron(a((2, 2)), b((2, 2))),
    "tensordot": lambda L, a, b: L.tensordot(a((2, 3)), b((3, 2)), dims=1),
    "einsum": lambda L, a, b: L.einsum("ij,jk->ik", a((2, 3)), b((3, 2))),
    "addcmul": lambda L, a, b: L.addcmul(a(3), b(3), b(3)),
    "addcmul_mixed": lambda L, a, b: L.addcmul(a(3), a(3), b(3)),
    "addcdiv": lambda L, a, b: L.addcdiv(a(3), b(3), b(3)),
    "addcdiv_mixed": lambda L, a, b: L.addcdiv(a(3), a(3), b(3)),
    "lerp": lambda L, a, b: L.lerp(a(3), b(3), 0.5),
    "lerp_weight": lambda L, a, b: L.lerp(a(3), a(3), b(3)),
    "where": lambda L, a, b: L.where(L.ones(3, dtype=L.bool), a(3), b(3)),
    "index_add": lambda L, a, b: L.index_add(a(3), 0, L.tensor(I2), b(2)),
    "index_copy": lambda L, a, b: L.index_copy(a(3), 0, L.tensor(I2), b(2)),
    "index_put": lambda L, a, b: a(3).index_put((L.tensor([0]),), b(1)),
    "put": lambda L, a, b: a(3).put(L.tensor([0]), b(1)),
    "masked_scatter": lambda L, a, b: a(3).masked_scatter(L.ones(3, dtype=L.bool), b(3)),
    "scatter": lambda L, a, b: L.scatter(a(3), 0, L.tensor(I2), b(2)),
    "scatter_add": lambda L, a, b: L.scatter_add(a(3), 0, L.tensor(I2), b(2)),
    "cat": lambda L, a, b: L.cat([a(3), b(3)]),
    "stack": lambda L, a, b: L.stack([a(3), b(3)]),
    "hstack": lambda L, a, b: L.hstack([a(3), b(3)]),
    "eq": lambda L, a, b: L.eq(a(3), b(3)),
    "lt": lambda L, a, b: a(3) < b(3),
    "add": lambda L, a, b: a(3) + b(3),
    "sub": lambda L, a, b: a(3) - b(3),
    "sub_python_bool": lambda L, a, b: a(3) - True,
    "mul": lambda L, a, b: a(3) * b(3),
    "div": lambda L, a, b: a(3) / b(3),
    "maximum": lambda L, a, b: L.maximum(a(3), b(3)),
    # in-place forms: the result must fit ``self``'s dtype
    "add_": lambda L, a, b: a(3).add_(b(3)),
    "sub_": lambda L, a, b: a(3).sub_(b(3)),
    "mul_": lambda L, a, b: a(3).mul_(b(3)),
    "div_": lambda L, a, b: a(3).div_(b(3)),
    "itruediv": lambda L, a, b: a(3).__itruediv__(b(3)),
    "addcdiv_": lambda L, a, b: a(3).addcdiv_(b(3), b(3)),
    "addcmul_": lambda L, a, b: a(3).addcmul_(b(3), b(3)),
    "maximum_out": lambda L, a, b: L.maximum(b(3), b(3), out=a(3)),
    "lerp_": lambda L, a, b: a(3).lerp_(b(3), 0.5),
    "index_add_": lambda L, a, b: a(3).index_add_(0, L.tensor(I2), b(2)),
    "index_copy_": lambda L, a, b: a(3).index_copy_(0, L.tensor(I2), b(2)),
    "index_put_": lambda L, a, b: a(3).index_put_((L.tensor([0]),), b(1)),
    "masked_scatter_": lambda L, a, b: a(3).masked_scatter_(L.ones(3, dtype=L.bool), b(3)),
    "scatter_": lambda L, a, b: a(3).scatter_(0, L.tensor(I2), b(2)),
    "copy_": lambda L, a, b: a(3).copy_(b(3)),
    "eq_": lambda L, a, b: a(3).eq_(b(3)),
}
# kernels that promote but have no loop for some dtypes (``dtype_rules.KERNELS``), their
# in-place forms (which refuse a result they cannot hold first), and the ops with own rules
for _name in (
    "atan2 fmod remainder floor_divide bitwise_and bitwise_or bitwise_xor bitwise_left_shift "
    "bitwise_right_shift gcd lcm hypot logaddexp2 nextafter igamma igammac copysign xlogy heaviside "
    "pow fmax fmin"
).split():
    OPS[_name] = lambda L, a, b, n=_name: getattr(L, n)(a(3), b(3))
    if _name not in ("fmax", "fmin"):
        OPS[_name + "_"] = lambda L, a, b, n=_name: getattr(a(3), n + "_")(b(3))
OPS.update(
    {
        "float_power": lambda L, a, b: L.float_power(a(3), b(3)),
        "ldexp_complex": lambda L, a, b: L.ldexp(a(3), L.ones(3, dtype=L.complex64)),
        "float_power_": lambda L, a, b: a(3).float_power_(b(3)),
        "xlog1py": lambda L, a, b: L.special.xlog1py(a(3), b(3)),
        "mm": lambda L, a, b: L.mm(a((2, 2)), b((2, 2))),
        "matmul": lambda L, a, b: L.matmul(a((2, 2)), b((2, 2))),
        "bmm": lambda L, a, b: L.bmm(a((2, 2, 2)), b((2, 2, 2))),
        "dot": lambda L, a, b: L.dot(a(3), b(3)),
        "polar": lambda L, a, b: L.polar(a(3), b(3)),
        "complex": lambda L, a, b: L.complex(a(3), b(3)),
        "clamp": lambda L, a, b: L.clamp(a(3), b(3), b(3)),
        "clamp_": lambda L, a, b: a(3).clamp_(b(3), b(3)),
        "clamp_min_tensor": lambda L, a, b: L.clamp(a(3), min=b(3)),
        "clamp_scalar_bounds": lambda L, a, b: L.clamp(a(3), True, True),
        "mse_loss": lambda L, a, b: L.nn.functional.mse_loss(a(3), b(3)),
        "l1_loss": lambda L, a, b: L.nn.functional.l1_loss(a(3), b(3)),
        "huber_loss": lambda L, a, b: L.nn.functional.huber_loss(a(3), b(3)),
        "smooth_l1_loss": lambda L, a, b: L.nn.functional.smooth_l1_loss(a(3), b(3)),
    }
)


def _answer(lib, name, x, y):
    """The result's dtype name, or the error's type and message."""
    try:
        out = OPS[name](lib, lambda s: _ones(lib, x, s), lambda s: _ones(lib, y, s))
    except Exception as e:  # noqa: BLE001 - the error is the answer being compared
        return type(e).__name__, str(e).split("\n")[0]
    return str(out.dtype).split(".")[-1]


def test_losses_of_float_predictions_and_integer_targets_stay_float32():
    """``input - target`` follows PyTorch's promotion, not NumPy's (which gives float64)."""
    pred, target = dt.zeros(4, requires_grad=True), dt.arange(4)
    for loss in (dt.nn.functional.mse_loss, dt.nn.functional.l1_loss, dt.nn.functional.smooth_l1_loss):
        value = loss(pred, target)
        value.backward()
        assert value.dtype is dt.float32 and pred.grad.dtype is dt.float32


def test_outer_of_integers_and_floats_promotes():
    assert dt.outer(dt.arange(4), dt.ones(3)).dtype is dt.float32
    assert dt.outer(dt.arange(4), dt.ones(3)).tolist()[3] == [3.0, 3.0, 3.0]
    assert dt.cat([dt.ones(2), dt.ones(2, dtype=dt.complex64)]).dtype is dt.complex64


@pytest.mark.parametrize(
    "name, x, y, error, message",
    [
        ("cross", "float32", "float64", RuntimeError, "expected scalar type Float but found Double"),
        ("cross", "bool", "bool", NotImplementedError, "\"cross\" not implemented for 'Bool'"),
        ("einsum", "int64", "float32", RuntimeError, "expected scalar type Long but found Float"),
        ("lerp", "float32", "float64", RuntimeError, "expected dtype float for `end` but got dtype double"),
        ("lerp", "int64", "int64", NotImplementedError, "\"lerp_kernel_scalar\" not implemented for 'Long'"),
        ("addcdiv", "float32", "int64", RuntimeError, "Integer division with addcdiv is no longer supported"),
        (
            "index_add",
            "float32",
            "int64",
            RuntimeError,
            r"self \(Float\) and source \(Long\) must have the same",
        ),
        ("sub", "float32", "bool", RuntimeError, "Subtraction, the `-` operator, with a bool tensor"),
        ("fmod", "bool", "bool", NotImplementedError, "\"fmod_cpu\" not implemented for 'Bool'"),
        (
            "gcd_",
            "bool",
            "float32",
            RuntimeError,
            "result type Float can't be cast to the desired output type Bool",
        ),
        (
            "heaviside",
            "float32",
            "int64",
            RuntimeError,
            "not yet implemented for tensors with different dtypes",
        ),
        ("mse_loss", "int64", "int64", NotImplementedError, "\"mse_cpu\" not implemented for 'Long'"),
        (
            "div_",
            "float32",
            "complex64",
            RuntimeError,
            "result type ComplexFloat can't be cast to the desired",
        ),
    ],
)
def test_refusals_raise_pytorchs_error(name, x, y, error, message):
    with pytest.raises(error, match=message):
        OPS[name](dt, lambda s: _ones(dt, x, s), lambda s: _ones(dt, y, s))


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(OPS))
def test_promotion_matches_pytorch_over_dtype_pairs(torch, name):
    wrong = []
    for x, y in PAIRS:
        ours, theirs = _answer(dt, name, x, y), _answer(torch, name, x, y)
        if ours != theirs:
            wrong.append((x, y, ours, theirs))
    assert not wrong, wrong


@pytest.mark.parity
def test_mixed_operands_are_computed_in_the_result_dtype_as_pytorch(torch):
    """An integer tensor with a Python float, or a float32 tensor with a 0-d float64 tensor,
    is computed in float32 (not in float64 and rounded), bit for bit as PyTorch."""
    ints = np.arange(-40, 40)
    floats = np.linspace(-3, 3, 81).astype(np.float32)
    for op in ("__mul__", "__add__", "__sub__", "__rsub__", "__radd__"):
        for scalar in (0.05, 1.7, -3.3):
            mine = getattr(dt.tensor(ints), op)(scalar).numpy()
            ref = getattr(torch.tensor(ints), op)(scalar).numpy()
            assert mine.dtype == ref.dtype and np.array_equal(mine, ref), (op, scalar)
        mine = getattr(dt.tensor(floats), op)(dt.tensor(0.1, dtype=dt.float64)).numpy()
        ref = getattr(torch.tensor(floats), op)(torch.tensor(0.1, dtype=torch.float64)).numpy()
        assert mine.dtype == ref.dtype and np.array_equal(mine, ref), op


@pytest.mark.parity
def test_python_ints_wrap_into_small_integer_dtypes_as_pytorch(torch):
    """PyTorch casts a Python int to the tensor's integer dtype (wrapping); NumPy would raise."""
    for lib_ops in (
        lambda L, u: (u - 1, u * -1, u + 256, u.clone().add_(-1), u.clone().mul_(-3)),
        lambda L, u: (u.int() * 2**40, u.int() + 2**33),
    ):
        ours = lib_ops(dt, dt.tensor([0, 3, 255], dtype=dt.uint8))
        theirs = lib_ops(torch, torch.tensor([0, 3, 255], dtype=torch.uint8))
        for o, t in zip(ours, theirs):
            assert o.tolist() == t.tolist() and str(o.dtype)[-5:] == str(t.dtype)[-5:]


@pytest.mark.parity
def test_tensor_only_functions_gcd_and_ldexp_promote_and_refuse_as_pytorch(torch):
    calls = [  # numbers where PyTorch takes tensors only; 0-d operands of the same kind
        lambda L: L.maximum(L.ones(2), 0),
        lambda L: L.fmin(2, L.ones(2)),
        lambda L: L.arctan2(L.ones(2), 1.5),
        lambda L: L.heaviside(L.ones(2), 0.5),
        lambda L: L.gcd(L.tensor([200], dtype=L.uint8), L.tensor(-56, dtype=L.int8)),
        lambda L: L.lcm(L.tensor([100], dtype=L.int8), L.tensor(300)),
        lambda L: L.ldexp(L.ones(3, dtype=L.uint8), L.tensor(2j, dtype=L.complex128)),
        lambda L: L.ldexp(L.tensor(2 + 0j, dtype=L.complex128), L.ones(3, dtype=L.uint8)),
        lambda L: L.ldexp(L.ones(2), L.ones(2, dtype=L.bool)),
        lambda L: L.ldexp(L.ones(2, dtype=L.int64), L.ones(2, dtype=L.bool)),
    ]

    def answer(L, call):
        try:
            r = call(L)
        except (TypeError, NotImplementedError) as e:
            return type(e).__name__, str(e)
        return str(r.dtype).split(".")[-1], r.tolist()

    for i, call in enumerate(calls):
        assert answer(dt, call) == answer(torch, call), i
