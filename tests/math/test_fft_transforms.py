"""``disttorch.fft``: every transform against NumPy's definitions and PyTorch (values, dtypes,
``n``/``s``/``dim``/``norm``), float64 gradchecks of every transform, gradients equal to
PyTorch's, frequencies, shifts and PyTorch's errors."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

REAL_IN = ["rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"]
ANY_IN = [
    "fft",
    "ifft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "irfft",
    "irfft2",
    "irfftn",
    "hfft",
    "hfft2",
    "hfftn",
]
NORMS = [None, "backward", "ortho", "forward"]


def _size_kw(name, one, two):
    return {"n": one} if name[-1] == "t" else {"s": two}


def _cases():
    for name in REAL_IN + ANY_IN:
        for kw in ({}, _size_kw(name, 5, (2, 5)), _size_kw(name, 3, (4, 3))):
            yield name, kw


@pytest.mark.parametrize("name, kw", list(_cases()))
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_gradcheck(name, kw, norm):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    if name in ANY_IN:
        x = x + 1j * rng.standard_normal((3, 4))
    t = dt.tensor(x, requires_grad=True)
    assert gradcheck(lambda a: getattr(dt.fft, name)(a, norm=norm, **kw), (t,))


def test_gradcheck_real_input_of_complex_transforms():
    t = dt.randn(2, 3, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda a: dt.fft.fft2(a, s=(3, 4), norm="ortho"), (t,))
    assert gradcheck(lambda a: dt.fft.irfft(a, n=5, dim=0), (t,))


def test_values_against_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6))
    c = x + 1j * rng.standard_normal((4, 6))
    np.testing.assert_allclose(dt.fft.fft(dt.tensor(c)).numpy(), np.fft.fft(c))
    np.testing.assert_allclose(dt.fft.ifft(dt.tensor(c), n=8, dim=0).numpy(), np.fft.ifft(c, 8, 0))
    np.testing.assert_allclose(dt.fft.rfft(dt.tensor(x), norm="ortho").numpy(), np.fft.rfft(x, norm="ortho"))
    np.testing.assert_allclose(dt.fft.irfft(dt.tensor(c), n=7).numpy(), np.fft.irfft(c, 7))
    np.testing.assert_allclose(
        dt.fft.fftn(dt.tensor(c), s=(3, 3)).numpy(), np.fft.fftn(c, (3, 3), axes=(0, 1))
    )
    np.testing.assert_allclose(dt.fft.hfft(dt.tensor(c)).numpy(), np.fft.hfft(c))
    np.testing.assert_allclose(dt.fft.ihfft(dt.tensor(x)).numpy(), np.fft.ihfft(x))
    # round trips
    np.testing.assert_allclose(dt.fft.irfftn(dt.fft.rfftn(dt.tensor(x)), s=x.shape).numpy(), x, atol=1e-12)
    np.testing.assert_allclose(dt.fft.ifft2(dt.fft.fft2(dt.tensor(c))).numpy(), c, atol=1e-12)


def test_dtypes_follow_pytorch():
    assert dt.fft.fft(dt.randn(4)).dtype == dt.complex64
    assert dt.fft.fft(dt.randn(4, dtype=dt.float64)).dtype == dt.complex128
    assert dt.fft.fft(dt.tensor([1, 2, 3])).dtype == dt.complex64
    assert dt.fft.irfft(dt.randn(4, dtype=dt.complex64)).dtype == dt.float32
    assert dt.fft.rfft(dt.randn(4)).dtype == dt.complex64 and dt.fft.rfft(dt.randn(4)).shape == (3,)
    assert dt.fft.hfft(dt.randn(4, dtype=dt.complex128)).dtype == dt.float64


def test_frequencies_and_shifts():
    np.testing.assert_allclose(dt.fft.fftfreq(5).numpy(), [0, 0.2, 0.4, -0.4, -0.2], rtol=1e-6)
    f = dt.fft.rfftfreq(6, 0.5, dtype=dt.float64)
    assert f.dtype == dt.float64 and f.tolist() == pytest.approx([0, 1 / 3, 2 / 3, 1])
    assert dt.fft.fftfreq(4, requires_grad=True).requires_grad
    assert dt.fft.fftfreq(4).dtype == dt.float32
    x = dt.arange(6).reshape(2, 3)
    assert dt.fft.fftshift(x).tolist() == [[5, 3, 4], [2, 0, 1]]
    assert dt.fft.ifftshift(dt.fft.fftshift(x)).tolist() == x.tolist()
    assert dt.fft.fftshift(dt.arange(5), dim=0).tolist() == [3, 4, 0, 1, 2]
    a = dt.randn(2, 3, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda t: dt.fft.fftshift(t, dim=(0, 1)), (a,))


@pytest.mark.parametrize(
    "call, msg",
    [
        (lambda: dt.fft.fft(dt.randn(4), norm="bad"), 'Invalid normalization mode: "bad"'),
        (
            lambda: dt.fft.irfft(dt.randn(1, dtype=dt.cfloat)),
            r"Invalid number of data points \(0\) specified",
        ),
        (lambda: dt.fft.fft(dt.randn(4).half()), "Unsupported dtype Half"),
        (lambda: dt.fft.fft(dt.randn(4), n=0), r"Invalid number of data points \(0\)"),
        (
            lambda: dt.fft.rfft(dt.randn(3, dtype=dt.cfloat)),
            "rfft expects a real input tensor, but got ComplexFloat",
        ),
        (lambda: dt.fft.ihfft(dt.randn(3, dtype=dt.cfloat)), "ihfft expects a real input tensor"),
        (
            lambda: dt.fft.fftn(dt.randn(4), s=(2, 3)),
            "Got shape with 2 values but input tensor only has 1 dimensions",
        ),
        (lambda: dt.fft.fftn(dt.randn(2, 3), dim=(0, 0)), "FFT dims must be unique"),
    ],
)
def test_errors(call, msg):
    with pytest.raises(RuntimeError, match=msg):
        call()


def test_dim_out_of_range():
    with pytest.raises(IndexError, match="Dimension out of range"):
        dt.fft.fft(dt.randn(4), dim=3)


@pytest.mark.parity
@pytest.mark.parametrize("name, kw", list(_cases()))
@pytest.mark.parametrize("norm", NORMS)
def test_values_and_gradients_match_pytorch(name, kw, norm):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4))
    datas = [x] if name in REAL_IN else [x, x + 1j * rng.standard_normal((3, 4))]
    for data in datas:
        a = dt.tensor(data, requires_grad=True)
        ta = torch.tensor(data, requires_grad=True)
        out = getattr(dt.fft, name)(a, norm=norm, **kw)
        tout = getattr(torch.fft, name)(ta, norm=norm, **kw)
        assert tuple(out.shape) == tuple(tout.shape) and str(out.dtype)[10:] == str(tout.dtype)[6:]
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().resolve_conj().numpy(), atol=1e-10)
        w = rng.standard_normal(out.shape) + (
            1j * rng.standard_normal(out.shape) if out.dtype.is_complex else 0
        )
        ((out * dt.tensor(w)).real if out.dtype.is_complex else out * dt.tensor(w)).sum().backward()
        ((tout * torch.tensor(w)).real if tout.is_complex() else tout * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), ta.grad.resolve_conj().numpy(), atol=1e-10)


@pytest.mark.parity
def test_float32_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((8, 5)).astype(np.float32)
    for name in ("fft", "rfft2", "ihfftn"):
        ours, theirs = getattr(dt.fft, name)(dt.tensor(x)), getattr(torch.fft, name)(torch.tensor(x))
        assert ours.dtype == dt.complex64 and theirs.dtype == torch.complex64
        np.testing.assert_allclose(ours.numpy(), theirs.resolve_conj().numpy(), rtol=1e-5, atol=1e-5)
    for name in ("fftfreq", "rfftfreq"):
        np.testing.assert_allclose(
            getattr(dt.fft, name)(7, 0.3).numpy(), getattr(torch.fft, name)(7, 0.3).numpy()
        )


def test_edge_cases():
    with pytest.raises(IndexError, match="Dimension specified as -1 but tensor has no dimensions"):
        dt.fft.fft(dt.tensor(1.0))
    assert dt.fft.fftfreq(0).shape == (0,) and dt.fft.rfftfreq(0).shape == (0,)
    c = dt.fft.fftn(dt.zeros(2, 3), dim=())  # no dim: the input as complex
    assert c.dtype == dt.complex64 and c.shape == (2, 3)


TRANSFORMS = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "hfft2",
    "ihfft2",
]
TRANSFORMS += ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]


@pytest.mark.parity
@pytest.mark.parametrize("name", TRANSFORMS)
def test_out_argument_as_pytorch(torch, name):
    """``out=`` receives the transform (resized when empty) and is returned; an ``out`` whose
    dtype cannot hold the result raises as in PyTorch."""
    x = np.random.default_rng(3).standard_normal((4, 6))
    results = []
    for lib in (dt, torch):
        fn = getattr(lib.fft, name)
        src = lib.tensor(x, dtype=lib.complex128 if name.startswith(("i", "h", "fft")) else lib.float64)
        if name in ("ihfft", "ihfft2", "ihfftn", "rfft", "rfft2", "rfftn"):
            src = lib.tensor(x)
        want = fn(src)
        out = lib.empty(0, dtype=want.dtype)
        got = fn(src, out=out)
        assert got is out and out.shape == want.shape
        label = {"fft2": "fftn", "ifft2": "fftn", "ifftn": "fftn", "rfft2": "rfftn", "irfft2": "irfftn"}.get(
            name, name
        )
        label = {"hfft2": "hfftn", "ihfft2": "ihfftn"}.get(name, label)  # PyTorch's names in the message
        if want.is_complex():
            with pytest.raises(
                RuntimeError, match=f"{label} expects a complex output tensor, but got Double"
            ):
                fn(src, out=lib.empty(0, dtype=lib.float64))
        else:
            with pytest.raises(
                RuntimeError, match=f"{label} expects a floating point output tensor, but got Long"
            ):
                fn(src, out=lib.empty(0, dtype=lib.int64))
        results.append(np.asarray(out.tolist()))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: dt.fft.fft2(dt.ones(4, dtype=dt.float16)), IndexError, "Dimension out of range"),
        (lambda: dt.fft.ihfft2(dt.ones(4, dtype=dt.complex64)), IndexError, "Dimension out of range"),
        (lambda: dt.fft.hfft2(dt.ones(4, dtype=dt.float16)), IndexError, "Dimension out of range"),
        (
            lambda: dt.fft.rfft2(dt.ones(4, dtype=dt.complex64)),
            RuntimeError,
            "rfftn expects a real-valued input tensor, but got ComplexFloat",
        ),
        (
            lambda: dt.fft.rfftn(dt.ones(4, dtype=dt.complex128), dim=(0, 1)),
            RuntimeError,
            "rfftn expects a real-valued",
        ),
    ],
)
def test_checks_in_pytorchs_order(call, error, message):
    """Found by fuzzing: the 2-D and n-D transforms check their dims before the dtype, except
    rfftn's real-input check."""
    with pytest.raises(error, match=message):
        call()
