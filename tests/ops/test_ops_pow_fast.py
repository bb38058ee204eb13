"""``x ** e`` for integer and half-integer scalar exponents (kernels/power.py): values
against float64 NumPy on negative, zero, infinite and NaN bases, PyTorch's exact numbers
for the exponents its own kernel special-cases, float64 gradient checks."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck
from disttorch.kernels.power import compiled_pow, power

RNG = np.random.default_rng(0)
EDGES = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, -1e30], dtype=np.float32)
X = np.concatenate([RNG.standard_normal(4000).astype(np.float32) * 3, EDGES])
EXPONENTS = [0, 1, 2, 3, 4, 7, 16, -1, -2, -3, 0.5, -0.5, 1.5, -1.5, 2.5, 3.0, -2.0]


@pytest.mark.parametrize("e", EXPONENTS)
def test_fast_powers_match_the_exact_power(e):
    x = X[~np.isin(X, [-np.inf, 0.0])] if abs(e) == 0.5 else X  # there: PyTorch's sqrt, rsqrt
    got = (dt.from_numpy(x) ** e).numpy()
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), e).astype(np.float32)  # overflow: inf, as float32
    assert got.dtype == np.float32
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)


def test_other_exponents_and_dtypes_take_the_general_power():
    assert power(X, 0.3) is None and power(X, 17) is None and power(X, True) is None
    assert power(X[:10].astype(np.float16), 2) is None and power(np.arange(3), 2) is None
    assert (dt.tensor([4.0]) ** 0.3).item() == pytest.approx(4.0**0.3)


@pytest.mark.parametrize("e", [2, 3, -1, -2, 0.5, -0.5])
def test_the_exponents_pytorch_special_cases_give_its_numbers(torch, e):
    x = X[np.isfinite(X) & (X != 0)]
    theirs = torch.pow(torch.from_numpy(x), e).numpy()
    ours = dt.pow(dt.from_numpy(x), e).numpy()
    same = (ours == theirs) | (np.isnan(ours) & np.isnan(theirs))
    if e == 0.5:  # PyTorch's vectorised pow(x, 0.5) is within an ulp of the rounded sqrt
        np.testing.assert_allclose(ours, theirs, rtol=2e-7)
    else:
        assert same.all(), f"x ** {e}: {np.count_nonzero(~same)} elements differ from PyTorch"


@pytest.mark.parametrize("e", [3, -2, 2.5, -1.5, 7])
def test_fast_powers_gradcheck(e):
    x = dt.tensor(RNG.uniform(0.5, 2.0, (3, 4)), requires_grad=True)
    assert gradcheck(lambda t: t**e, (x,))


def test_zero_dim_arrays():
    """A 0-d array (NumPy's arithmetic turns it into a scalar) for every exponent form, and
    the backward of a 0-dim tensor's p-norm, which takes this path."""
    for e, want in ((-2, 0.25), (3, 8.0), (2.5, 2.0**2.5), (-0.5, 2.0**-0.5)):
        out = power(np.asarray(2.0), e)
        assert isinstance(out, np.ndarray) and out.shape == () and np.isclose(out, want)
    x = dt.tensor(-2.0, dtype=dt.float64, requires_grad=True)
    x.norm(-1, keepdim=True).backward()
    assert x.grad.item() == -1.0


def test_other_float32_powers_are_rounded_once_from_float64(torch):
    """Tensor exponents, a number base and other scalar exponents: float32 raised in float64
    and rounded once, PyTorch's powf's numbers almost everywhere (NumPy's float32 power is an
    ulp off in a fifth of the elements); ALiBi's slopes ``pow(2 ** -0.5, [1, 3, ...])`` exactly."""
    x = np.abs(X[np.isfinite(X)]) + 0.1
    y = RNG.standard_normal(x.size).astype(np.float32) * 2
    cases = [(dt.from_numpy(x), dt.from_numpy(y)), (1.3, dt.from_numpy(y)), (dt.from_numpy(x), 2.7)]
    for a, b in cases:
        ours = dt.pow(a, b).numpy()
        theirs = torch.pow(*(torch.from_numpy(v.numpy()) if isinstance(v, dt.Tensor) else v for v in (a, b)))
        assert ours.dtype == np.float32 and (ours != theirs.numpy()).mean() < 0.05
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=2e-7, atol=0)
    slopes = dt.pow(2.0**-0.5, dt.arange(1, 9, 2))
    assert slopes.tolist() == torch.pow(2.0**-0.5, torch.arange(1, 9, 2)).tolist()
    assert dt.pow(dt.tensor([1e20]), 3.3).isinf().all() and dt.pow(dt.tensor([-2.0]), 0.3).isnan().all()


@pytest.mark.skipif(not compiled_pow(), reason="needs numba (the fast extra)")
def test_float32_powers_give_pytorch_bits(torch):
    """PyTorch's kernel: SLEEF's powf on whole 32-element blocks of each inner loop, the C
    library's on the rest (one thread): tensor and number exponents (4.0 too: only its
    special-cased exponents skip powf), a number base, broadcast rows, edge values."""
    x = np.abs(X) + np.float32(0.1)
    y = (RNG.standard_normal(x.size) * 3).astype(np.float32)
    sx, sy = np.meshgrid(EDGES, np.concatenate([EDGES, [2, -3, 0.5, 2.5]]).astype(np.float32))
    cases = [
        (x, y),
        (-x[:1000], np.round(y[:1000])),
        (sx.ravel(), sy.ravel()),
        (x, 4.0),
        (x[:45], 0.7),
        (10000.0, np.arange(0, 64, 2, dtype=np.float32) / 64),
        (x[:64].reshape(64, 1), y[:2560].reshape(64, 40)),
        (x[:100].reshape(100, 1), y[:50].reshape(1, 50)),
    ]
    for a, b in cases:
        ours = dt.pow(*(dt.from_numpy(v) if isinstance(v, np.ndarray) else v for v in (a, b))).numpy()
        theirs = torch.pow(*(torch.from_numpy(v) if isinstance(v, np.ndarray) else v for v in (a, b))).numpy()
        np.testing.assert_array_equal(ours, theirs, err_msg=f"{np.shape(a)} ** {np.shape(b)}")


def test_float32_general_powers_of_0_dim_and_empty_tensors():
    # (the float32 general power failed on both: 'shapes [] and [] are not broadcastable')
    assert (dt.tensor(4.0) ** 0.5000001).shape == () and (2.0 ** dt.tensor(3.0)).item() == 8.0
    assert dt.pow(dt.tensor(4.0), dt.tensor(0.7)).item() == pytest.approx(4.0**0.7)
    assert (dt.zeros(0) ** 0.7).shape == (0,) and (dt.zeros(2, 0) ** dt.zeros(2, 1)).shape == (2, 0)


@pytest.mark.parametrize("dtype", [dt.float32, dt.float64])
def test_negative_zero_to_a_half_integer_power_is_positive(dtype):
    # C's pow (and PyTorch): pow(-0.0, 2.5) is +0.0 and pow(-0.0, -2.5) +inf
    x = dt.tensor([-0.0, -4.0], dtype=dtype)
    for e, want in ((2.5, 0.0), (-2.5, np.inf), (1.5, 0.0), (-3.5, np.inf)):
        got = (x**e).numpy()
        assert got[0] == want and not np.signbit(got[0]) and np.isnan(got[1]), (e, got)


def test_negative_powers_whose_positive_power_overflows():
    # 1e103 ** -3 is 1e-309 (subnormal), as C's pow: it was 1 / inf, 0 (-1 and -2 stay
    # PyTorch's 1 / x and 1 / (x * x), which give 0 there too)
    x = np.array([1e103, 2e103, -1e103, 1e210, 1e-103], dtype=np.float64)
    for e in (-3, -4, -1.5, -2.5):
        got = (dt.from_numpy(x) ** e).numpy()
        with np.errstate(all="ignore"):
            want = np.power(x, e)
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    assert (dt.tensor([1e160], dtype=dt.float64) ** -2).item() == 0.0


@pytest.mark.skipif(not compiled_pow(), reason="needs numba (the fast extra)")
def test_float32_powers_of_strided_views_give_pytorch_bits(torch):
    """PyTorch walks a transposed or expanded operand in its memory order and takes a strided
    inner loop (a column slice) without SLEEF; a number base lays the result out first (the
    blocks were cut in the logical order: 14% of a sliced power's elements were off)."""
    x = (np.abs(X[:3500]) + np.float32(0.1)).reshape(70, 50)
    y = RNG.standard_normal((70, 50)).astype(np.float32)
    cases = [
        lambda m, a, b: a.t() ** 0.7,
        lambda m, a, b: a[:, ::3] ** 0.7,
        lambda m, a, b: a[:1].expand(70, 50) ** b,
        lambda m, a, b: a.reshape(7, 10, 50).permute(2, 0, 1) ** 1.3,
        lambda m, a, b: a.t() ** b.t(),
        lambda m, a, b: 2.5 ** b.t(),
        lambda m, a, b: a[0, 0] ** b.t(),
    ]
    for i, case in enumerate(cases):
        ours = case(dt, dt.from_numpy(x), dt.from_numpy(y)).contiguous().numpy()
        theirs = case(torch, torch.from_numpy(x), torch.from_numpy(y)).contiguous().numpy()
        np.testing.assert_array_equal(ours, theirs, err_msg=f"case {i}")
