"""disttorch.special and the top-level special functions: values against PyTorch (parity),
float64 gradcheck of every function with a derivative, float32 results, PyTorch's
no-derivative errors, known values."""

import math

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck

sp = dt.special
X = np.concatenate([np.linspace(-12, 12, 241), np.logspace(-6, 2.3, 40), -np.logspace(-6, 2.3, 40)])
POS = np.concatenate([np.linspace(0.01, 40, 200), np.logspace(-6, 2.5, 40)])
UNIT = np.linspace(-0.999, 0.999, 201)
PROB = np.concatenate([np.linspace(0.001, 0.999, 201), np.logspace(-300, -3, 30)])

# name -> (domain, rtol, atol) for values against PyTorch
UNARY = {
    "gammaln": (X, 1e-11, 1e-12),
    "digamma": (X, 1e-10, 1e-11),
    "erf": (X, 1e-12, 1e-13),
    "erfc": (X, 1e-12, 1e-300),
    "erfcx": (X, 1e-12, 0),
    "erfinv": (UNIT, 1e-12, 1e-13),
    "expit": (X, 1e-13, 0),
    "ndtr": (X, 1e-12, 1e-16),
    "log_ndtr": (X, 1e-12, 0),
    "ndtri": (PROB, 1e-12, 1e-13),
    "i0": (X, 1e-13, 0),
    "i0e": (X, 1e-13, 0),
    "i1": (X, 1e-13, 0),
    "i1e": (X, 1e-13, 0),
    "sinc": (X, 1e-12, 1e-14),
    "entr": (POS, 1e-13, 1e-14),
    "exp2": (X, 1e-13, 0),
    "expm1": (X, 1e-13, 0),
    "log1p": (POS, 1e-13, 0),
    "bessel_j0": (X, 0, 1e-6),
    "bessel_j1": (X, 0, 1e-6),
    "bessel_y0": (POS, 0, 1e-6),
    "bessel_y1": (POS, 0, 1e-6),
    "modified_bessel_i0": (X, 1e-13, 0),
    "modified_bessel_i1": (X, 1e-13, 0),
    "modified_bessel_k0": (POS, 1e-12, 0),
    "modified_bessel_k1": (POS, 1e-12, 0),
    "scaled_modified_bessel_k0": (POS, 1e-12, 0),
    "scaled_modified_bessel_k1": (POS, 1e-12, 0),
    "spherical_bessel_j0": (X, 1e-12, 1e-14),
    "airy_ai": (X[X > -10], 1e-5, 1e-5),
    "psi": (X, 1e-10, 1e-11),
}

# name -> (function, domain) for gradcheck (points away from poles)
GRAD = {
    "gammaln": (sp.gammaln, [0.3, 1.7, 4.2, -0.5]),
    "lgamma": (dt.lgamma, [0.3, 2.5, -1.5]),
    "digamma": (sp.digamma, [0.3, 1.7, 6.5, -0.4]),
    "polygamma1": (lambda x: sp.polygamma(1, x), [0.4, 3.0]),
    "polygamma3": (lambda x: dt.polygamma(3, x), [0.4, 3.0]),
    "multigammaln": (lambda x: sp.multigammaln(x, 3), [1.5, 4.0]),
    "erfc": (sp.erfc, [-2.0, 0.3, 3.0]),
    "erfcx": (sp.erfcx, [-1.0, 0.5, 4.0]),
    "erfinv": (sp.erfinv, [-0.9, 0.1, 0.7]),
    "ndtr": (sp.ndtr, [-3.0, 0.2, 2.0]),
    "log_ndtr": (sp.log_ndtr, [-20.0, -2.0, 0.5, 3.0]),
    "ndtri": (sp.ndtri, [0.01, 0.4, 0.97]),
    "i0": (sp.i0, [-2.0, 0.5, 3.0]),
    "i0e": (sp.i0e, [-2.0, 0.5, 3.0]),
    "i1": (sp.i1, [-2.0, 0.5, 3.0]),
    "i1e": (sp.i1e, [-2.0, 0.5, 3.0]),
    "sinc": (sp.sinc, [-1.3, 0.2, 2.7]),
    "entr": (sp.entr, [0.2, 1.5]),
    "logit": (sp.logit, [0.2, 0.7]),
    "logit_eps": (lambda x: sp.logit(x, eps=0.1), [0.3, 0.6]),
    "exp2": (sp.exp2, [-1.0, 2.0]),
    "expit": (sp.expit, [-1.0, 2.0]),
    "gammainc_x": (lambda x: sp.gammainc(dt.tensor([1.5, 3.0], dtype=dt.float64), x), [0.7, 2.5]),
    "gammaincc_x": (lambda x: sp.gammaincc(dt.tensor([1.5, 3.0], dtype=dt.float64), x), [0.7, 4.5]),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_parity(name):
    torch = pytest.importorskip("torch")
    dom, rtol, atol = UNARY[name]
    ours = getattr(sp, name)(dt.tensor(dom, dtype=dt.float64)).numpy()
    ref = getattr(torch.special, name)(torch.tensor(dom, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parity
def test_binary_and_polygamma_parity():
    torch = pytest.importorskip("torch")
    a, x = np.meshgrid([0.5, 1.0, 2.5, 10.0, 50.0], [0.1, 1.0, 3.0, 10.0, 60.0])
    for name in ("gammainc", "gammaincc"):
        ours = getattr(sp, name)(dt.tensor(a), dt.tensor(x)).numpy()
        ref = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x)).numpy()
        np.testing.assert_allclose(ours, ref, rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(
        sp.zeta(dt.tensor(a + 1.5), dt.tensor(x)).numpy(),
        torch.special.zeta(torch.tensor(a + 1.5), torch.tensor(x)).numpy(),
        rtol=1e-12,
    )
    for n in (1, 2, 4):
        np.testing.assert_allclose(
            sp.polygamma(n, dt.tensor(POS)).numpy(),
            torch.special.polygamma(n, torch.tensor(POS)).numpy(),
            rtol=1e-8,
        )
    y = np.array([0.0, 0.5, 2.0, np.nan])
    for name in ("xlogy", "xlog1py"):
        ours = getattr(sp, name)(dt.tensor([0.0, 2.0, 3.0, 0.0]), dt.tensor(y)).numpy()
        ref = getattr(torch.special, name)(torch.tensor([0.0, 2.0, 3.0, 0.0]), torch.tensor(y)).numpy()
        np.testing.assert_allclose(ours, ref, equal_nan=True)
    np.testing.assert_allclose(
        sp.multigammaln(dt.tensor(POS[POS > 2]), 4).numpy(),
        torch.special.multigammaln(torch.tensor(POS[POS > 2]), 4).numpy(),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        sp.logit(dt.tensor([0.0, 0.3, 1.0]), eps=1e-3).numpy(),
        torch.special.logit(torch.tensor([0.0, 0.3, 1.0]), eps=1e-3).numpy(),
        rtol=1e-5,
    )


@pytest.mark.parity
@pytest.mark.parametrize(
    "name",
    [
        "chebyshev_polynomial_t",
        "chebyshev_polynomial_u",
        "chebyshev_polynomial_v",
        "chebyshev_polynomial_w",
        "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u",
        "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w",
        "hermite_polynomial_h",
        "hermite_polynomial_he",
        "laguerre_polynomial_l",
        "legendre_polynomial_p",
    ],
)
def test_polynomial_parity(name):
    torch = pytest.importorskip("torch")
    x = np.linspace(-1.5, 1.5, 31)
    n = np.array([-1, 0, 1, 2, 3, 6])[:, None]
    ours = getattr(sp, name)(dt.tensor(x), dt.tensor(n)).numpy()
    ref = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(GRAD))
def test_gradcheck(name):
    fn, pts = GRAD[name]
    assert gradcheck(fn, (dt.tensor(pts, dtype=dt.float64, requires_grad=True),))


def test_gradcheck_binary():
    x = dt.tensor([0.5, 2.0], dtype=dt.float64, requires_grad=True)
    y = dt.tensor([1.5, 0.3], dtype=dt.float64, requires_grad=True)
    assert gradcheck(sp.xlogy, (x, y))
    assert gradcheck(sp.xlog1py, (x, y))


# x = 0 with y where the log is defined, undefined (0 or -1) and NaN; then x != 0
XLOG_X = [0.0, 0.0, 0.0, 0.0, 1.5]
XLOG_Y = [2.0, 0.0, -1.0, math.nan, 3.0]


@pytest.mark.parametrize("name, log", [("xlogy", np.log), ("xlog1py", np.log1p)])
def test_xlog_gradient_at_x_zero_is_the_log(name, log):
    x = dt.tensor(XLOG_X, dtype=dt.float64, requires_grad=True)
    y = dt.tensor(XLOG_Y, dtype=dt.float64)
    getattr(sp, name)(x, y).sum().backward()
    with np.errstate(invalid="ignore", divide="ignore"):
        ref = log(np.array(XLOG_Y))
    if name == "xlogy":
        ref[1:3] = 0.0  # log(0) and log(-1) undefined at x = 0: the constant 0
    else:
        ref[2] = 0.0  # log1p(-1)
    np.testing.assert_allclose(x.grad.numpy(), ref, equal_nan=True)
    on_zero = dt.tensor([0.0], dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda t: getattr(sp, name)(t, dt.tensor([2.0], dtype=dt.float64)), (on_zero,))


@pytest.mark.parity
@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_xlog_gradients_match_pytorch(torch, name):
    grads = []
    for lib in (dt, torch):
        x = lib.tensor(XLOG_X, dtype=lib.float64, requires_grad=True)
        y = lib.tensor(XLOG_Y, dtype=lib.float64, requires_grad=True)
        getattr(lib.special, name)(x, y).sum().backward()
        grads.append((x.grad.detach().numpy(), y.grad.detach().numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, equal_nan=True)


def test_known_values_and_dtypes():
    v = sp.gammaln(dt.tensor([0.5, 1.0, 10.0], dtype=dt.float64)).numpy()
    np.testing.assert_allclose(v, [math.lgamma(0.5), 0.0, math.lgamma(10.0)], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(
        sp.polygamma(1, dt.tensor([1.0], dtype=dt.float64)).numpy(), [math.pi**2 / 6], rtol=1e-9
    )  # (PyTorch's trigamma series, which disttorch follows, is good to about 5e-10 here)
    np.testing.assert_allclose(
        sp.erfc(dt.tensor([10.0], dtype=dt.float64)).numpy(), [math.erfc(10.0)], rtol=1e-13
    )
    np.testing.assert_allclose(
        sp.ndtri(dt.tensor([0.975], dtype=dt.float64)).numpy(), [1.959963984540054], rtol=1e-14
    )
    assert not np.signbit(sp.ndtri(dt.tensor([0.5, 0.5], dtype=dt.float64)).numpy()).any()  # +0, as PyTorch
    f32 = sp.erfinv(dt.tensor([0.5]))
    assert f32.dtype == dt.float32
    assert sp.i0(dt.tensor([1, 2])).dtype == dt.float32  # integers give the default float dtype
    assert dt.tensor([2.0]).lgamma().item() == 0.0
    assert dt.tensor([0.5]).erfinv().dtype == dt.float32
    np.testing.assert_allclose(dt.tensor([4.0]).polygamma(1).numpy(), [0.2838229557371153], rtol=1e-6)
    np.testing.assert_allclose(
        dt.tensor([4.0]).mvlgamma(2).numpy(),
        [math.lgamma(4) + math.lgamma(3.5) + 0.5 * math.log(math.pi)],
        rtol=1e-6,
    )


def test_errors():
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        sp.bessel_j0(x).sum().backward()  # (PyTorch's Bessel functions are not differentiable)
    with pytest.raises(NotImplementedError, match="input \\(a\\)"):
        sp.gammainc(x, dt.tensor([1.0, 1.0])).sum().backward()
    with pytest.raises(RuntimeError, match="negative n"):
        sp.polygamma(-1, x)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        sp.multigammaln(dt.tensor([0.5]), 0)
    # PyTorch 2.13 computes the sum outside the domain x > (p-1)/2 too: inf at the poles
    np.testing.assert_allclose(sp.multigammaln(dt.tensor([0.2, 0.5]), 2).numpy(), [3.5613, np.inf], rtol=1e-4)


@pytest.mark.parametrize(
    "name,values",
    [
        ("erfinv", [-0.6, 0.1, 0.7]),
        ("erfcx", [-1.2, 0.3, 2.5]),
        ("log_ndtr", [-3.0, 0.2, 1.5]),
        ("ndtri", [0.1, 0.5, 0.8]),
        ("i0e", [-1.5, 0.4, 2.0]),
        ("i1", [-1.5, 0.4, 2.0]),
        ("gammaln", [0.3, 1.7, 4.2]),
        ("digamma", [0.3, 1.7, 4.2]),
    ],
)
def test_second_derivatives_through_the_saved_output(name, values):
    """Derivatives written with the output ``y`` recompute it in the graph under create_graph."""
    x = dt.tensor(values, dtype=dt.float64, requires_grad=True)
    assert gradgradcheck(getattr(dt.special, name), (x,))


def test_digamma_at_signed_zeros_and_infinities():
    """PyTorch's kernel: +inf at -0.0, -inf at +0.0, NaN at -inf and at negative integers."""
    x = dt.tensor([-0.0, 0.0, -np.inf, np.inf, -3.0], dtype=dt.float64)
    assert dt.digamma(x).tolist()[:2] == [np.inf, -np.inf]
    out = dt.special.digamma(x.float()).numpy()
    assert np.isnan(out[[2, 4]]).all() and out[3] == np.inf


def test_logit_gradient_outside_the_unit_interval():
    """Without ``eps`` the gradient is NaN where the logit is (outside [0, 1]); with it, 0
    outside ``[eps, 1 - eps]`` (PyTorch's)."""
    x = dt.tensor([-0.5, 0.3, 1.2], dtype=dt.float64, requires_grad=True)
    sp.logit(x).sum().backward()
    assert np.isnan(x.grad.numpy()[[0, 2]]).all() and np.isclose(x.grad.numpy()[1], 1 / 0.21)
    x.grad = None
    sp.logit(x, eps=0.1).sum().backward()
    assert x.grad.numpy()[[0, 2]].tolist() == [0.0, 0.0]


def test_lgamma_is_exactly_zero_at_one_and_two():
    """As C's lgamma (a Poisson log-likelihood's ``lgamma(k + 1)`` for k = 0, 1)."""
    for dtype in (dt.float64, dt.float32, dt.bfloat16):
        assert dt.lgamma(dt.tensor([1.0, 2.0], dtype=dtype)).tolist() == [0.0, 0.0]


#: the functions PyTorch gives no derivative (their results never require grad)
_UNDIFFERENTIABLE = ["airy_ai", "bessel_j0", "bessel_y1", "modified_bessel_k0", "spherical_bessel_j0"]
_UNDIFFERENTIABLE += ["chebyshev_polynomial_t", "hermite_polynomial_he", "laguerre_polynomial_l"]


def _requires_grad(lib):
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    out = {}
    for name in _UNDIFFERENTIABLE + ["i0e", "zeta"]:
        f = getattr(lib.special, name)
        y = f(x) if name in ("airy_ai", "i0e") or "bessel" in name else f(x, lib.tensor([2.0, 3.0]))
        out[name] = (y.requires_grad, y.grad_fn is None)
    return out


def test_undifferentiable_functions_do_not_require_grad():
    got = _requires_grad(dt)
    assert all(got[n] == (False, True) for n in _UNDIFFERENTIABLE) and got["i0e"] == got["zeta"] == (
        True,
        False,
    )


@pytest.mark.parity
def test_undifferentiable_functions_match_pytorch(torch):
    assert _requires_grad(dt) == _requires_grad(torch)


def test_logit_rounds_in_the_input_dtype():
    """PyTorch's logit clamps to ``[eps, 1 - eps]`` and divides in the input's own dtype
    (float32's ``1 - 1e-6`` is not float64's; bfloat16 rounds every step): the values of
    PyTorch 2.13's CPU build."""
    x = dt.tensor([0.0, 1.0, 0.99, 0.77])
    assert x.logit(eps=1e-6).tolist()[:2] == [-13.815509796142578, 13.80231761932373]
    assert dt.tensor([0.99]).logit(eps=0.1).item() == 2.1972243785858154
    assert x.double().logit(eps=1e-6).tolist()[1] == 13.815509557935018
    assert x.bfloat16().logit(eps=0.1).tolist() == [-2.1875, 2.1875, 2.1875, 1.2109375]
    assert x.bfloat16().logit(eps=1e-6).tolist()[1] == math.inf  # 1 - eps is 1 in bfloat16
    assert x.half().logit(eps=1e-6).tolist()[:3] == [-13.8046875, math.inf, 4.6171875]


@pytest.mark.parity
@pytest.mark.parametrize("jit", ["1", "0"])
def test_erfinv_matches_pytorch_into_the_tails_in_both_forms(torch, monkeypatch, jit):
    """The compiled loop (numba) and the NumPy form: float32 is the float64 result rounded, and
    within an ulp of PyTorch's (whose float32 rounding varies by CPU: 0.2% of these values an
    ulp off on an AMD EPYC, 0.6% on an Intel Xeon); float64 within an ulp or two (the compiled
    loop) or 1e-12 (the NumPy form), also within 1e-15 of +-1, where the compiled loop's Newton
    steps once stopped 7% short."""
    monkeypatch.setenv("DISTTORCH_JIT", jit)
    rng = np.random.default_rng(0)
    near_one = 1 - np.logspace(-16, -1, 300)
    y = np.concatenate([rng.uniform(-1, 1, 3000), near_one, -near_one, [0.0, 1.0, -1.0, 1.5, np.nan]])
    ours64 = dt.erfinv(dt.tensor(y)).numpy()
    theirs64 = torch.erfinv(torch.tensor(y)).numpy()
    np.testing.assert_allclose(ours64, theirs64, rtol=1e-15 if jit == "1" else 1e-12, atol=0)
    y32 = y.astype(np.float32)
    ours32, theirs32 = dt.erfinv(dt.tensor(y32)).numpy(), torch.erfinv(torch.tensor(y32)).numpy()
    np.testing.assert_array_equal(ours32, dt.erfinv(dt.tensor(y32.astype(np.float64))).float().numpy())
    np.testing.assert_allclose(ours32, theirs32, rtol=2e-7, atol=0)
