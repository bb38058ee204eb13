"""Ops that PyTorch fuses into one CPU kernel (addmm, baddbmm, addcmul, addcdiv, lerp, add
with alpha, their in-place forms, rms_norm): on float16/bfloat16 they are computed in float32
and rounded once, bit for bit as PyTorch's; lerp steps back from ``end`` for weights of 0.5
or more, as PyTorch's kernel."""

import numpy as np
import pytest

import disttorch as dt
import disttorch.nn.functional as F
from disttorch.autograd import gradcheck

pytest.importorskip("ml_dtypes")

RNG = np.random.default_rng(11)
A, B, C = (RNG.normal(size=(16, 24)).astype(np.float32) for _ in range(3))
POS = RNG.uniform(0.5, 1.5, size=(16, 24)).astype(np.float32)
W = RNG.uniform(-0.2, 1.2, size=(16, 24)).astype(np.float32)
M1, M2 = RNG.normal(size=(16, 8)).astype(np.float32), RNG.normal(size=(8, 24)).astype(np.float32)
B1, B2 = RNG.normal(size=(2, 16, 8)).astype(np.float32), RNG.normal(size=(2, 8, 24)).astype(np.float32)

CASES = {  # name: (op on the library L, its inputs)
    "addmm": (lambda L, x, m1, m2: L.addmm(x, m1, m2, beta=0.5, alpha=1.5), (A, M1, M2)),
    "baddbmm": (lambda L, x, b1, b2: L.baddbmm(x, b1, b2), (A, B1, B2)),
    "addcmul": (lambda L, x, y, z: L.addcmul(x, y, z, value=0.3), (A, B, C)),
    "addcdiv": (lambda L, x, y, z: L.addcdiv(x, y, z, value=-0.3), (A, B, POS)),
    "lerp_small": (lambda L, x, y: L.lerp(x, y, 0.1), (A, B)),
    "lerp_large": (lambda L, x, y: L.lerp(x, y, 0.7), (A, B)),
    "lerp_tensor": (lambda L, x, y, w: L.lerp(x, y, w), (A, B, W)),
    "add_alpha": (lambda L, x, y: L.add(x, y, alpha=0.37), (A, B)),
    "sub_alpha": (lambda L, x, y: L.sub(x, y, alpha=0.37), (A, B)),
    "addcmul_": (lambda L, x, y, z: x.clone().addcmul_(y, z, value=0.3), (A, B, C)),
    "addcdiv_": (lambda L, x, y, z: x.clone().addcdiv_(y, z, value=-0.3), (A, B, POS)),
    "lerp_small_": (lambda L, x, y: x.clone().lerp_(y, 0.1), (A, B)),
    "lerp_large_": (lambda L, x, y: x.clone().lerp_(y, 0.7), (A, B)),
    "lerp_tensor_": (lambda L, x, y, w: x.clone().lerp_(y, w), (A, B, W)),
    "add_alpha_": (lambda L, x, y: x.clone().add_(y, alpha=0.37), (A, B)),
    "sub_alpha_": (lambda L, x, y: x.clone().sub_(y, alpha=0.37), (A, B)),
    "rms_norm": (lambda L, x, w: L.nn.functional.rms_norm(x, (24,), w), (A * 1e-3, W[0])),
}


def _bits(t) -> np.ndarray:
    return t.float().numpy() if hasattr(t, "numpy") else t


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_rounded_once_as_float32_compute(name, low):
    fn, arrays = CASES[name]
    dl = getattr(dt, low)
    out = fn(dt, *(dt.tensor(a).to(dl) for a in arrays))
    assert out.dtype is dl
    # the same op on the float32 values of the 16-bit inputs, rounded to 16 bits at the end
    ref = fn(dt, *(dt.tensor(a).to(dl).float() for a in arrays)).to(dl)
    if name.startswith("add_alpha") or name.startswith("sub_alpha"):  # alpha is a 16-bit scalar
        rounded = float(dt.tensor(0.37).to(dl))
        x, y = (dt.tensor(a).to(dl).float() for a in arrays)
        ref = (x + rounded * y if "add" in name else x - rounded * y).to(dl)
    np.testing.assert_array_equal(out.float().numpy(), ref.float().numpy())


@pytest.mark.parity
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_low_precision_parity(torch, name, low):
    fn, arrays = CASES[name]
    got = fn(dt, *(dt.tensor(a).to(getattr(dt, low)) for a in arrays))
    want = fn(torch, *(torch.tensor(a).to(getattr(torch, low)) for a in arrays))
    g, w = got.float().numpy(), want.float().numpy()
    if name.startswith(("addcmul", "addcdiv", "lerp")):  # PyTorch's kernels use fused multiply-adds
        assert np.mean(g != w) < 0.02
        np.testing.assert_allclose(g, w, rtol=1e-2, atol=1e-2)
    else:
        np.testing.assert_array_equal(g, w)


def test_rms_norm_low_precision_epsilon_and_dtype():
    x = dt.full((2, 4), 1e-2).bfloat16()
    # eps defaults to float32's epsilon, not bfloat16's (which would swamp mean(x^2) = 1e-4)
    np.testing.assert_allclose(F.rms_norm(x, (4,)).float().numpy(), 1.0, rtol=1e-2)
    assert F.rms_norm(x, (4,), dt.ones(4)).dtype is dt.bfloat16
    assert F.rms_norm(x.float(), (4,), dt.ones(4).bfloat16()).dtype is dt.float32
    assert F.rms_norm(x.double(), (4,), dt.ones(4)).dtype is dt.float64


@pytest.mark.parametrize("weight", [0.2, 0.5, 0.9, "tensor"])
def test_lerp_gradcheck(weight):
    x = dt.tensor(RNG.normal(size=(3, 4)), requires_grad=True)
    y = dt.tensor(RNG.normal(size=(3, 4)), requires_grad=True)
    if weight == "tensor":
        w = dt.tensor(RNG.uniform(-0.8, 1.2, size=(3, 4)), requires_grad=True)
        assert gradcheck(dt.lerp, (x, y, w))
    else:
        assert gradcheck(lambda a, b: dt.lerp(a, b, weight), (x, y))


def test_lerp_matches_its_in_place_form_and_ends_exactly():
    x, y = dt.tensor(A), dt.tensor(B)
    for w in (0.1, 0.5, 0.7, 1.0):
        assert dt.equal(dt.lerp(x, y, w), x.clone().lerp_(y, w))
    assert dt.equal(dt.lerp(x, y, 1.0), y) and dt.equal(dt.lerp(x, y, 0.0), x)


@pytest.mark.parity
@pytest.mark.parametrize("weight", [0.1, 0.6, 0.9])
def test_lerp_float32_parity(torch, weight):
    got = dt.lerp(dt.tensor(A), dt.tensor(B), weight).numpy()
    want = torch.lerp(torch.tensor(A), torch.tensor(B), weight).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=2e-7)  # PyTorch's fused multiply-add: 1 ulp


@pytest.mark.parametrize("name", ["silu", "gelu", "leaky_relu", "elu"])
def test_activation_gradient_rounded_once(name):
    fn = getattr(F, name)
    x32 = dt.tensor(A).bfloat16().float().requires_grad_()
    g = dt.tensor(B).bfloat16()
    fn(x32).backward(g.float())
    x = dt.tensor(A).bfloat16().requires_grad_()
    fn(x).backward(g)
    assert x.grad.dtype is dt.bfloat16
    np.testing.assert_array_equal(x.grad.float().numpy(), x32.grad.bfloat16().float().numpy())


GRADIENT_OPS = {  # name: op on the library L (inputs of A: in every op's domain after abs)
    "silu": lambda L, x: L.nn.functional.silu(x),
    "gelu": lambda L, x: L.nn.functional.gelu(x),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x),
    "tanh": lambda L, x: L.tanh(x),
    "sigmoid": lambda L, x: L.sigmoid(x),
    "exp": lambda L, x: L.exp(x),
    "sqrt": lambda L, x: L.sqrt(x.abs() + 0.5),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(GRADIENT_OPS))
def test_gradient_low_precision_parity(torch, name):
    grads = []
    for lib in (dt, torch):
        x = lib.tensor(A).bfloat16().requires_grad_()
        GRADIENT_OPS[name](lib, x).backward(lib.tensor(B).bfloat16())
        grads.append(x.grad.float().numpy())
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "exp"])
def test_gradient_reads_the_rounded_result(name):
    """d tanh = 1 - y^2 (and sigmoid's y (1 - y), exp's y) with y the bfloat16 result the op
    returned, times the gradient in float32, rounded once."""
    x = dt.tensor(A).bfloat16().requires_grad_()
    y = GRADIENT_OPS[name](dt, x)
    g = dt.tensor(B).bfloat16()
    y.backward(g)
    yf, gf = y.detach().float(), g.float()
    local = {"tanh": 1 - yf * yf, "sigmoid": yf * (1 - yf), "exp": yf}[name]
    np.testing.assert_array_equal(x.grad.float().numpy(), (gf * local).bfloat16().float().numpy())


SCALAR_OPS = {  # a 16-bit tensor with a number or a 0-dim tensor of another dtype
    "add": lambda L, x: (x + 0.7, 0.7 + x, x + L.tensor(0.7, dtype=L.float64)),
    "sub": lambda L, x: (x - 1e-3, 1.3 - x, x.clone().sub_(0.7), x.clone().add_(0.7)),
    "mul": lambda L, x: (x * 0.7, x * L.tensor(0.7, dtype=L.float64), x.clone().mul_(0.7)),
    "div": lambda L, x: (x / 0.7, 0.7 / x, x.clone().div_(0.7), L.tensor(0.7).double() / x),
    "remainder": lambda L, x: (x % 0.7, L.fmod(x, L.tensor(0.7, dtype=L.float64))),
    "pow": lambda L, x: (x.abs() ** 0.7, L.atan2(x, L.tensor(0.7)), L.hypot(x, L.tensor(0.7))),
    "maximum": lambda L, x: (L.maximum(x, L.tensor(0.7, dtype=L.float64)), L.logaddexp(x, L.tensor(0.7))),
}


def test_numbers_beside_16_bit_tensors_are_rounded_except_by_mul_and_div():
    """PyTorch's kernels cast a number to the 16-bit dtype first (``x + 0.7`` adds
    bfloat16(0.7)), but ``mul``/``div`` read a second operand unrounded, in float32."""
    for low in (dt.bfloat16, dt.float16):
        x = dt.tensor(np.linspace(-3, 3, 101, dtype=np.float32)).to(low)
        rounded = float(dt.tensor(0.7).to(low))
        np.testing.assert_array_equal(
            (x + 0.7).float().numpy(), (x.float() + rounded).to(low).float().numpy()
        )
        np.testing.assert_array_equal((x * 0.7).float().numpy(), (x.float() * 0.7).to(low).float().numpy())
        np.testing.assert_array_equal(x.clone().add_(0.7).float().numpy(), (x + 0.7).float().numpy())


def test_a_one_element_integer_tensor_is_read_unrounded_by_mul_and_div():
    """PyTorch's ``mul``/``div`` kernels read a second operand of one element (its iterator's
    scalar, whatever its dims) unrounded, as a number; several elements are cast to float16
    first (2049 is not a float16 number). ``nanmean`` divides by its int64 counts so."""
    x = dt.full((3,), 2048.0, dtype=dt.float16)
    assert (x / dt.tensor([[2049]])).tolist() == [[0.99951171875] * 3]
    assert (x / dt.tensor([2049] * 3)).tolist() == [1.0] * 3
    assert (dt.full((3,), 1.0009765625, dtype=dt.float16) * dt.tensor([2049])).tolist() == [2052.0] * 3
    ones = dt.cat([dt.ones(2049, dtype=dt.float16), dt.full((3,), float("nan"), dtype=dt.float16)])
    assert dt.nanmean(ones).item() == dt.nanmean(ones[None], 1).item() == 0.99951171875
    assert dt.nanmean(dt.stack([ones, ones]), 1).tolist() == [1.0, 1.0]


@pytest.mark.parity
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(SCALAR_OPS))
def test_numbers_beside_16_bit_tensors_as_pytorch(torch, name, low):
    a = np.linspace(-3, 3, 101, dtype=np.float32)
    got = SCALAR_OPS[name](dt, dt.tensor(a).to(getattr(dt, low)))
    want = SCALAR_OPS[name](torch, torch.tensor(a).to(getattr(torch, low)))
    for g, w in zip(got, want):
        assert str(g.dtype).split(".")[1] == str(w.dtype).split(".")[1]
        np.testing.assert_array_equal(g.float().numpy(), w.float().numpy())


@pytest.mark.parity
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh", "nn.functional.mish", "nn.functional.hardswish"])
def test_composite_unary_ops_round_once_as_pytorch(torch, name, low):
    """Composed of several ops, these compute 16-bit floats in float32 and round once."""
    a = np.random.default_rng(1).standard_normal(500).astype(np.float32) * 2

    def call(L):
        fn = L
        for part in name.split("."):
            fn = getattr(fn, part)
        return fn(L.tensor(a).to(getattr(L, low))).float().numpy()

    np.testing.assert_array_equal(call(dt), call(torch))


def _alpha_steps(L, low: str) -> list:
    """add/sub with alpha (and in place) of two 63-element 16-bit tensors: the last 63 % 32
    elements go through PyTorch's scalar loop."""
    dl = getattr(L, low)
    x, y = (L.tensor(a.reshape(-1)[:63]).to(dl) for a in (A, B))
    return [
        L.add(x, y, alpha=0.37),
        L.sub(x, y, alpha=0.9),
        x.clone().add_(y, alpha=-0.1),
        x.clone().sub_(y, alpha=0.3),
    ]


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_add_with_alpha_rounds_the_product_in_the_scalar_tail(low):
    """The vector loop's ``x + alpha * y`` rounds once; the scalar loop over the last
    ``n % 32`` elements of a contiguous tensor rounds ``alpha * y`` first."""
    dl = getattr(dt, low)
    out = _alpha_steps(dt, low)[0].float().numpy()
    x, y = (dt.tensor(a.reshape(-1)[:63]).to(dl).float() for a in (A, B))
    alpha = float(dt.tensor(0.37).to(dl))
    fused, tail = (
        (x + alpha * y).to(dl).float().numpy(),
        (x + (alpha * y).to(dl).float()).to(dl).float().numpy(),
    )
    assert np.sum(fused[32:] != tail[32:]) > 3  # (the two differ on these inputs)
    np.testing.assert_array_equal(out[:32], fused[:32])
    np.testing.assert_array_equal(out[32:], tail[32:])


@pytest.mark.parity
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_add_with_alpha_scalar_tail_as_pytorch(torch, low):
    for got, want in zip(_alpha_steps(dt, low), _alpha_steps(torch, low)):
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


BATCH_PRODUCTS = {  # name: (op on L, the input's shape); beta and alpha apart from 1 scale
    "baddbmm": (lambda L, x, b1, b2: L.baddbmm(x, b1, b2, beta=0.5, alpha=1.5), (2, 16, 24)),
    "baddbmm_broadcast": (lambda L, x, b1, b2: L.baddbmm(x, b1, b2, alpha=0.3), (24,)),
    "addbmm": (lambda L, x, b1, b2: L.addbmm(x, b1, b2, beta=0.5, alpha=1.5), (16, 24)),
    "addbmm_beta_0": (lambda L, x, b1, b2: L.addbmm(x, b1, b2, beta=0), (16, 24)),
}


def _batch_product_run(L, name, low):
    fn, shape = BATCH_PRODUCTS[name]
    ins = [
        L.tensor(a).to(getattr(L, low)).requires_grad_()
        for a in (RNG_B.normal(size=shape).astype(np.float32), B1, B2)
    ]
    out = fn(L, *ins)
    grads = L.autograd.grad(out, ins, L.tensor(RNG_B.normal(size=out.shape).astype(np.float32)).to(out.dtype))
    return [out.grad_fn.name()] + [t.detach().float().numpy() for t in (out, *grads)]


RNG_B = np.random.default_rng(5)


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_addbmm_rounds_after_each_batch_and_gradients_round_each_step(low):
    # addbmm was rounded once; the gradients were computed in float32 and rounded once
    dl = getattr(dt, low)
    x, b1, b2 = (dt.tensor(a).to(dl).requires_grad_() for a in (A, B1, B2))
    out = dt.addbmm(x, b1, b2, beta=0.5, alpha=1.5)
    first = dt.addmm(x, b1[0], b2[0], beta=0.5, alpha=1.5)  # PyTorch's loop of addmm_ calls
    want = dt.addmm(first, b1[1], b2[1], alpha=1.5)
    np.testing.assert_array_equal(out.detach().float().numpy(), want.detach().float().numpy())
    g = dt.tensor(C).to(dl)
    gx, g1, g2 = dt.autograd.grad(out, (x, b1, b2), g)
    wide = g.expand(2, 16, 24)
    for got, want in ((gx, g * 0.5), (g1, wide.bmm(b2.detach().transpose(1, 2)) * 1.5)):
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    np.testing.assert_array_equal(
        g2.float().numpy(), (b1.detach().transpose(1, 2).bmm(wide) * 1.5).float().numpy()
    )
    xd, b1d, b2d = (
        dt.tensor(a, dtype=dt.float64).requires_grad_() for a in (A[:3, :4], B1[:, :3, :2], B2[:, :2, :4])
    )
    assert gradcheck(lambda *t: dt.addbmm(*t, beta=0.5, alpha=1.5), (xd, b1d, b2d))


@pytest.mark.parity
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(BATCH_PRODUCTS))
def test_batch_products_and_gradients_as_pytorch(torch, name, low):
    RNG_B.bit_generator.state = np.random.default_rng(5).bit_generator.state  # the same inputs in any order
    got = _batch_product_run(dt, name, low)
    RNG_B.bit_generator.state = np.random.default_rng(5).bit_generator.state
    want = _batch_product_run(torch, name, low)
    assert got[0] == want[0]
    for g, w in zip(got[1:], want[1:]):
        if low == "bfloat16":
            np.testing.assert_array_equal(g, w)
        else:  # float16 products: the float32 sums' order differs in rare elements (an ulp or two)
            assert np.mean(g != w) < 0.01
            np.testing.assert_allclose(g, w, rtol=2**-9, atol=1e-6)


@pytest.mark.parametrize("exponent", [3, 3.0, -2.0, 2.0, 0.5, 1.7])
def test_bfloat16_power_of_a_number_steps_as_pytorchs_kernel(exponent):
    """``bfloat16 ** number``: 3 is ``x * x * x`` and -2 ``1 / (x * x)`` with each step rounded
    (PyTorch's bfloat16 kernel), others float32's power of the rounded exponent, rounded once;
    the gradient ``exponent * x ** (exponent - 1)`` rounds each step in bfloat16 too."""
    x = dt.tensor(POS).bfloat16().requires_grad_()
    g = dt.tensor(A).bfloat16()
    out = x**exponent
    out.backward(g)
    xs = x.detach()
    if exponent in (3, -2):
        square = xs * xs
        expected = square * xs if exponent == 3 else square.reciprocal()
    else:
        rounded = float(dt.tensor(exponent).bfloat16())
        expected = (xs.float() ** rounded).bfloat16()
    assert out.dtype is dt.bfloat16 and type(out.grad_fn).__name__ == "PowBackward0"
    np.testing.assert_array_equal(out.detach().float().numpy(), expected.float().numpy())
    step = xs ** (exponent - 1) * exponent
    np.testing.assert_array_equal(x.grad.float().numpy(), (g * step).float().numpy())


@pytest.mark.parametrize("exponent", [3.0, -2.0, 0.5, 1.7])
def test_bfloat16_power_of_a_number_as_pytorch(torch, exponent):
    ours = dt.tensor(POS).bfloat16().requires_grad_()
    theirs = torch.tensor(POS).bfloat16().requires_grad_()
    (ours**exponent).backward(dt.tensor(A).bfloat16())
    out = theirs**exponent
    out.backward(torch.tensor(A).bfloat16())
    np.testing.assert_array_equal((ours**exponent).detach().float().numpy(), out.detach().float().numpy())
    np.testing.assert_array_equal(ours.grad.float().numpy(), theirs.grad.float().numpy())


UNARY_FORMULAS = {  # op: PyTorch's derivative formula, run in the gradient's dtype
    "sin": lambda g, x: g * x.cos(),
    "cos": lambda g, x: g * -x.sin(),
    "erf": lambda g, x: g * ((-(x * x)).exp() * 1.1283791670955126),
    "log": lambda g, x: g / x,
    "log2": lambda g, x: g / (x * 0.6931471805599453),
    "log1p": lambda g, x: g / (x + 1),
    "atan": lambda g, x: g / (x * x + 1),
    "asinh": lambda g, x: g * (x * x + 1).rsqrt(),
    "atanh": lambda g, x: g / (1 - x * x),
    # formulas of the result, rounded as returned
    "tan": lambda g, x: g * (x.tan() * x.tan() + 1),
    "reciprocal": lambda g, x: -g * (x.reciprocal() * x.reciprocal()),
    "expm1": lambda g, x: g * (x.expm1() + 1),
    "sqrt": lambda g, x: g / (x.sqrt() * 2),
    # special functions
    "exp2": lambda g, x: g * x.exp2() * 0.6931471805599453,
    "erfc": lambda g, x: g * ((-(x * x)).exp() * -1.1283791670955126),
    "erfinv": lambda g, x: g * ((x.erfinv() * x.erfinv()).exp() * 0.886226925452758),
    "acosh": lambda g, x: g * (x * x - 1).rsqrt(),
    "lgamma": lambda g, x: g * x.digamma(),
    "digamma": lambda g, x: g * dt.polygamma(1, x),
    "i0": lambda g, x: g * dt.special.i1(x),
    "sinc": lambda g, x: (
        g
        * (
            (x * 3.141592653589793 * (x * 3.141592653589793).cos() - (x * 3.141592653589793).sin())
            / (x * x * 3.141592653589793)
        )
    ),
}
#: where an op's domain is not POS's [0.5, 1.5]: the input mapped onto it
DOMAINS = {"erfinv": lambda x: x - 1, "acosh": lambda x: x + 1}


@pytest.mark.parametrize("name", sorted(UNARY_FORMULAS))
def test_bfloat16_unary_gradient_runs_pytorchs_formula_in_bfloat16(name):
    """A bfloat16 unary op's gradient evaluates the derivative on the bfloat16 input or
    result, each step rounded, and divides where PyTorch's formula divides (was float32,
    rounded once)."""
    x = dt.tensor(DOMAINS.get(name, np.asarray)(POS)).bfloat16().requires_grad_()
    g = dt.tensor(A).bfloat16()
    out = getattr(dt, name)(x)
    out.backward(g)
    assert out.dtype is dt.bfloat16 and type(out.grad_fn).__name__ != "ToCopyBackward0"
    expected = UNARY_FORMULAS[name](g, x.detach())
    np.testing.assert_array_equal(x.grad.float().numpy(), expected.float().numpy())


@pytest.mark.parametrize("name", sorted(UNARY_FORMULAS))
def test_bfloat16_unary_gradient_as_pytorch(torch, name):
    ours = dt.tensor(DOMAINS.get(name, np.asarray)(POS)).bfloat16().requires_grad_()
    theirs = torch.tensor(DOMAINS.get(name, np.asarray)(POS)).bfloat16().requires_grad_()
    getattr(dt, name)(ours).backward(dt.tensor(A).bfloat16())
    getattr(torch, name)(theirs).backward(torch.tensor(A).bfloat16())
    np.testing.assert_array_equal(ours.grad.float().numpy(), theirs.grad.float().numpy())


BACKWARD_KERNELS = {  # op on the library L: PyTorch's 16-bit gradient, a formula or a kernel
    "logit": lambda L, x: L.logit(x - 0.5),
    "logit/eps": lambda L, x: L.logit(x - 0.5, 0.2),
    "softsign": lambda L, x: L.nn.functional.softsign(x - 1),
    "logsigmoid": lambda L, x: L.nn.functional.logsigmoid((x - 1) * 8),
    "divisor": lambda L, x: L.tensor(A).to(x.dtype) / x,
    "special.ndtr": lambda L, x: L.special.ndtr((x - 1) * 3),  # PyTorch's composite, step by step
}


def test_bfloat16_divisor_gradient_runs_pytorchs_formula_in_bfloat16():
    """``-g (a / b / b)``, each step rounded to bfloat16 (was float32, rounded once)."""
    a, b, g = (dt.tensor(v).bfloat16() for v in (A, POS, B))
    b.requires_grad_()
    (a / b).backward(g)
    np.testing.assert_array_equal(
        b.grad.float().numpy(), (-g * (a / b.detach() / b.detach())).float().numpy()
    )


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(BACKWARD_KERNELS))
def test_16_bit_gradient_as_pytorch(torch, name, dtype):
    results = []
    for L in (dt, torch):
        x = L.tensor(POS).to(getattr(L, dtype)).requires_grad_()
        out = BACKWARD_KERNELS[name](L, x)
        out.backward(L.tensor(B).to(x.dtype))
        results.append((out.detach().float().numpy(), x.grad.float().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


def test_ndtr_gradients_in_float64():
    x = dt.tensor(A[:2, :5].astype(np.float64), requires_grad=True)
    assert gradcheck(dt.special.ndtr, (x,))
    assert dt.special.ndtr(x).grad_fn.name() == "MulBackward1"
