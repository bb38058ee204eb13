"""Parity with PyTorch (skipped without it): every op of the elementwise, reduction,
linalg and comparison families runs on the same random inputs in both libraries; values,
dtypes and gradients (with a random upstream gradient) must agree."""
import math

import numpy as np
import pytest

import disttorch

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RNG = np.random.default_rng(4)
S = (3, 4)


def _pos(shape):
    return RNG.uniform(0.3, 2.0, shape)


def _any(shape):
    return RNG.uniform(-2.0, 2.0, shape)


# name: (fn(lib, *tensors), input makers) -- fn uses only API both libraries share
DIFFERENTIABLE = {
    "add": (lambda L, a, b: a + b, [_any(S), _any((4,))]),
    "sub_reflected": (lambda L, a: 1 - a, [_any(S)]),
    "mul": (lambda L, a, b: a * b, [_any(S), _any((3, 1))]),
    "div": (lambda L, a, b: a / b, [_any(S), _pos(S)]),
    "rdiv": (lambda L, a: 2 / a, [_pos(S)]),
    "pow": (lambda L, a, b: a ** b, [_pos(S), _any(S)]),
    "pow_scalar": (lambda L, a: a ** 3, [_any(S)]),
    "rpow": (lambda L, a: 2 ** a, [_any(S)]),
    "neg": (lambda L, a: -a, [_any(S)]),
    "abs": (lambda L, a: L.abs(a), [_any(S)]),
    "exp": (lambda L, a: L.exp(a), [_any(S)]),
    "expm1": (lambda L, a: L.expm1(a), [_any(S)]),
    "log": (lambda L, a: L.log(a), [_pos(S)]),
    "log1p": (lambda L, a: L.log1p(a), [_pos(S)]),
    "log2": (lambda L, a: L.log2(a), [_pos(S)]),
    "log10": (lambda L, a: L.log10(a), [_pos(S)]),
    "sqrt": (lambda L, a: L.sqrt(a), [_pos(S)]),
    "rsqrt": (lambda L, a: L.rsqrt(a), [_pos(S)]),
    "square": (lambda L, a: L.square(a), [_any(S)]),
    "reciprocal": (lambda L, a: L.reciprocal(a), [_pos(S)]),
    "sin": (lambda L, a: L.sin(a), [_any(S)]),
    "cos": (lambda L, a: L.cos(a), [_any(S)]),
    "tan": (lambda L, a: L.tan(a), [_any(S) / 2]),
    "tanh": (lambda L, a: L.tanh(a), [_any(S)]),
    "sigmoid": (lambda L, a: L.sigmoid(a), [_any(S) * 5]),
    "relu": (lambda L, a: L.relu(a), [_any(S)]),
    "erf": (lambda L, a: L.erf(a), [_any(S)]),
    "sinh": (lambda L, a: L.sinh(a), [_any(S)]),
    "cosh": (lambda L, a: L.cosh(a), [_any(S)]),
    "asin": (lambda L, a: L.asin(a), [_any(S) / 2.5]),
    "acos": (lambda L, a: L.acos(a), [_any(S) / 2.5]),
    "atan": (lambda L, a: L.atan(a), [_any(S)]),
    "atan2": (lambda L, a, b: L.atan2(a, b), [_any(S), _any((4,))]),
    "lerp": (lambda L, a, b, w: L.lerp(a, b, w), [_any(S), _any(S), _any((4,))]),
    "clamp": (lambda L, a: L.clamp(a, -0.5, 0.7), [_any(S)]),
    "clamp_tensors": (lambda L, a, lo, hi: L.clamp(a, lo, hi), [_any(S), _any((4,)) - 1, _any((4,)) + 1]),
    "maximum": (lambda L, a, b: L.maximum(a, b), [_any(S), _any(S)]),
    "minimum": (lambda L, a, b: L.minimum(a, b), [_any(S), _any((4,))]),
    "where": (lambda L, a, b: L.where(a > 0, a, b), [_any(S), _any((4,))]),
    "where_scalar": (lambda L, a: L.where(a > 0, a, 0.5), [_any(S)]),
    "matmul_2d": (lambda L, a, b: a @ b, [_any((3, 4)), _any((4, 2))]),
    "matmul_1d": (lambda L, a, b: L.matmul(a, b), [_any((4,)), _any((4,))]),
    "matmul_vec_mat": (lambda L, a, b: a @ b, [_any((4,)), _any((2, 4, 3))]),
    "matmul_batch_bcast": (lambda L, a, b: a @ b, [_any((2, 1, 3, 4)), _any((5, 4, 2))]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [_any((2, 3, 4)), _any((2, 4, 5))]),
    "mv": (lambda L, a, b: L.mv(a, b), [_any((3, 4)), _any((4,))]),
    "einsum_bilinear": (lambda L, a, w, b: L.einsum("bi,oij,bj->bo", a, w, b),
                        [_any((2, 3)), _any((4, 3, 5)), _any((2, 5))]),
    "einsum_ellipsis": (lambda L, a, b: L.einsum("...ij,...jk", a, b),
                        [_any((2, 1, 3, 4)), _any((5, 4, 2))]),
    "addmm": (lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2), [_any((2,)), _any((3, 4)), _any((4, 2))]),
    "sum": (lambda L, a: a.sum(), [_any(S)]),
    "sum_dim": (lambda L, a: L.sum(a, (0, 2), keepdim=True), [_any((2, 3, 4))]),
    "mean_dim": (lambda L, a: a.mean(dim=1), [_any(S)]),
    "max_all": (lambda L, a: a.max(), [_any(S)]),
    "max_dim": (lambda L, a: a.max(dim=1).values, [_any(S)]),
    "min_dim_keep": (lambda L, a: L.min(a, 0, keepdim=True)[0], [_any(S)]),
    "amax_ties": (lambda L, a: L.amax(a, 1), [np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])]),
    "amin": (lambda L, a: a.amin(dim=(0, 1)), [_any((2, 3, 4))]),
    "prod": (lambda L, a: a.prod(1), [np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 1.0], [1.5, 2.0, 3.0]])]),
    "prod_all": (lambda L, a: a.prod(), [_pos(S)]),
    "var": (lambda L, a: a.var(1), [_any(S)]),
    "var_correction": (lambda L, a: L.var(a, dim=0, correction=0, keepdim=True), [_any(S)]),
    "std": (lambda L, a: a.std(), [_any(S)]),
    "std_unbiased_false": (lambda L, a: L.std(a, 1, False), [_any(S)]),
    "logsumexp": (lambda L, a: L.logsumexp(a * 100, 1), [_any(S)]),
    "norm": (lambda L, a: a.norm(), [_any(S)]),
    "norm_p1_dim": (lambda L, a: L.norm(a, 1, 1), [_any(S)]),
    "norm_inf": (lambda L, a: L.norm(a, math.inf, 0), [_any(S)]),
    "norm_p3": (lambda L, a: L.norm(a, 3, 1, keepdim=True), [_any(S)]),
    "cumsum": (lambda L, a: a.cumsum(1), [_any(S)]),
    "sort_values": (lambda L, a: L.sort(a, 1, descending=True).values, [_any(S)]),
    "topk_values": (lambda L, a: L.topk(a, 2, 0).values, [_any(S)]),
}


def _run(lib, fn, arrays, grad_out_seed):
    ts = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    g = np.random.default_rng(grad_out_seed).normal(size=tuple(out.shape))
    out.backward(lib.tensor(g, dtype=lib.float64))
    grads = [t.grad.detach().numpy() if t.grad is not None else None for t in ts]
    return out.detach().numpy(), grads


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_values_and_gradients_match_torch(name):
    fn, arrays = DIFFERENTIABLE[name]
    ours, our_grads = _run(disttorch, fn, arrays, 7)
    theirs, their_grads = _run(torch, fn, arrays, 7)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for i, (g1, g2) in enumerate(zip(our_grads, their_grads)):
        assert (g1 is None) == (g2 is None), f"input {i}"
        if g1 is not None:
            np.testing.assert_allclose(g1, g2, rtol=1e-9, atol=1e-12, err_msg=f"grad of input {i}")


A = RNG.integers(-3, 4, size=S)
NO_GRAD = {  # compare values and dtypes; inputs are int64 or float32
    "eq": lambda L, a: a == 1, "lt": lambda L, a: a < a.sum(0),
    "ge_scalar": lambda L, a: 0 <= a, "ne": lambda L, a: L.ne(a, 2),
    "and": lambda L, a: (a > 0) & (a < 2), "or": lambda L, a: (a > 0) | (a < -2),
    "xor": lambda L, a: (a > 0) ^ (a < 2), "invert": lambda L, a: ~a,
    "bit_and": lambda L, a: a & 3, "logical_not": lambda L, a: L.logical_not(a),
    "floordiv": lambda L, a: a // 2, "rfloordiv": lambda L, a: 7 // (a + 10),
    "mod": lambda L, a: a % 3, "fmod": lambda L, a: L.fmod(a, 3),
    "float_floordiv": lambda L, a: a.float() // 0.75, "float_mod": lambda L, a: a.float() % 0.75,
    "sign": lambda L, a: L.sign(a), "argmax": lambda L, a: L.argmax(a),
    "argmin_dim": lambda L, a: a.argmin(1), "any": lambda L, a: L.any(a > 2, 1),
    "all": lambda L, a: (a > -4).all(), "sort_idx": lambda L, a: L.sort(a, dim=1, stable=True).indices,
    "argsort_desc": lambda L, a: L.argsort(a.float() + 0.01 * L.arange(4), 1, descending=True),
    "unique": lambda L, a: L.unique(a, return_inverse=True, return_counts=True),
    "int_sum": lambda L, a: a.sum(0), "int_cumsum": lambda L, a: a.int().cumsum(1),
    "int_prod": lambda L, a: a.int().prod(), "int_div": lambda L, a: a / 2,
    "int_plus_float": lambda L, a: a + 0.5, "int_float_tensors": lambda L, a: a + a.float(),
    "int_matmul": lambda L, a: a @ a.T, "clamp_int_float": lambda L, a: L.clamp(a, 0.5),
    "isclose": lambda L, a: L.isclose(a.float(), a.float() + 1e-6),
    "exp_int": lambda L, a: L.exp(a), "abs_int": lambda L, a: L.abs(a),
    "where_scalars": lambda L, a: L.where(a > 0, 1.0, 0),
    "nan_tests": lambda L, a: L.isfinite(L.log(a.float())),
}


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


@pytest.mark.parametrize("name", sorted(NO_GRAD))
def test_no_grad_ops_match_torch(name):
    fn = NO_GRAD[name]
    with np.errstate(all="ignore"):
        ours = _as_tuple(fn(disttorch, disttorch.tensor(A)))
    theirs = _as_tuple(fn(torch, torch.tensor(A)))
    for o, t in zip(ours, theirs):
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (o.dtype, t.dtype)
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-6)
