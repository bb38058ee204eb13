"""``stft``/``istft``: PyTorch's values, shapes, defaults, warnings and errors; round trips;
float64 gradchecks through signal, spectrum and window; gradients equal to PyTorch's."""

import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch import _native_warnings
from disttorch.autograd import gradcheck

CASES = [
    dict(n_fft=16),
    dict(n_fft=16, hop_length=5, win_length=10, hann=True),
    dict(n_fft=16, center=False, normalized=True, hann=True),
    dict(n_fft=15, pad_mode="constant", hann=True),
    dict(n_fft=16, onesided=False, hann=True),
    dict(n_fft=12, win_length=7, center=False, align_to_window=True, hann=True),
]


def _window(lib, kw):
    if not kw.get("hann"):
        return None
    n = kw.get("win_length", kw["n_fft"])
    return lib.tensor(np.hanning(n + 2)[1:-1])


def _kwargs(kw, inverse=False):
    out = {k: v for k, v in kw.items() if k != "hann"}
    if inverse:
        out.pop("pad_mode", None)
        out.pop("align_to_window", None)
    return out


def _signal(shape=(2, 60), seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.filterwarnings("ignore:A window was not provided")
def test_round_trip_and_shapes():
    x = _signal()
    for kw in CASES[:5]:
        spec = dt.stft(dt.tensor(x), window=_window(dt, kw), return_complex=True, **_kwargs(kw))
        n_freq = kw["n_fft"] if kw.get("onesided") is False else kw["n_fft"] // 2 + 1
        assert spec.shape[:2] == (2, n_freq) and spec.dtype == dt.complex128
        back = dt.istft(spec, window=_window(dt, kw), length=60, **_kwargs(kw, True))
        np.testing.assert_allclose(back.numpy(), x, atol=1e-10)
    one = dt.stft(dt.tensor(x[0]).float(), 8, window=dt.hann_window(8), return_complex=True)
    assert one.shape == (5, 31) and one.dtype == dt.complex64
    assert dt.istft(one, 8, window=dt.hann_window(8)).shape == (60,)


def test_return_complex_rules(monkeypatch):
    x = dt.randn(64)
    with pytest.raises(
        RuntimeError, match="stft requires the return_complex parameter be given for real inputs"
    ):
        dt.stft(x, 16, window=dt.ones(16))
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        r = dt.stft(x, 16, window=dt.ones(16), return_complex=False)
    assert r.shape == (9, 17, 2) and r.dtype == dt.float32
    c = dt.stft(x.cfloat(), 16, window=dt.ones(16))  # complex input: complex output, two-sided
    assert c.shape == (16, 17) and c.dtype == dt.complex64
    with pytest.raises(RuntimeError, match="Cannot have onesided output if window or input is complex"):
        dt.stft(x.cfloat(), 16, onesided=True, return_complex=True)
    monkeypatch.setattr(_native_warnings, "_warned_once", set())  # PyTorch warns once per process
    with pytest.warns(UserWarning, match="A window was not provided"):
        dt.stft(x, 16, return_complex=True)


@pytest.mark.parametrize(
    "call, msg",
    [
        (
            lambda x: dt.stft(x, 16, window=dt.ones(8), return_complex=True),
            "expected a 1D window tensor of size",
        ),
        (
            lambda x: dt.stft(x, 200, center=False, window=dt.ones(200), return_complex=True),
            "expected 0 < n_fft <",
        ),
        (lambda x: dt.stft(x, 16, hop_length=0, return_complex=True), "expected hop_length > 0"),
        (lambda x: dt.stft(x, 16, win_length=20, return_complex=True), "expected 0 < win_length <= n_fft"),
        (lambda x: dt.stft(x.reshape(2, 5, 10), 4, return_complex=True), "expected a 1D or 2D tensor"),
        (
            lambda x: dt.stft(x, 8, align_to_window=True, return_complex=True),
            "align_to_window should only be set",
        ),
        (
            lambda x: dt.istft(dt.stft(x, 16, return_complex=True).real, 16),
            "istft requires a complex-valued input",
        ),
        (
            lambda x: dt.istft(dt.stft(x, 16, return_complex=True), 16, window=dt.zeros(16)),
            "window overlap add min",
        ),
    ],
)
@pytest.mark.filterwarnings("ignore:A window was not provided")
def test_errors(call, msg):
    with pytest.raises(RuntimeError, match=msg):
        call(dt.randn(100))


@pytest.mark.parametrize("kw", CASES[:5], ids=str)
@pytest.mark.filterwarnings("ignore:A window was not provided")
def test_gradcheck_stft(kw):
    x = dt.tensor(_signal((1, 24)), requires_grad=True)
    kw = dict(kw, n_fft=8, hop_length=3) if "win_length" not in kw else dict(kw, n_fft=8, win_length=5)
    w = _window(dt, kw)
    if w is not None:
        w.requires_grad_()
    assert gradcheck(lambda a, win: dt.stft(a, window=win, return_complex=True, **_kwargs(kw)), (x, w))


def test_gradcheck_istft():
    dt.manual_seed(0)
    spec = dt.stft(
        dt.tensor(_signal((1, 24))),
        8,
        hop_length=2,
        window=dt.hann_window(8, dtype=dt.float64),
        return_complex=True,
    )
    spec = (spec + 0.1 * dt.randn(spec.shape, dtype=dt.complex128)).detach().requires_grad_()
    w = (dt.hann_window(8, dtype=dt.float64) + 0.1).requires_grad_()
    assert gradcheck(lambda s, win: dt.istft(s, 8, hop_length=2, window=win), (spec, w))
    assert gradcheck(lambda s, win: dt.istft(s, 8, hop_length=2, window=win, length=30), (spec, w))


@pytest.mark.parity
@pytest.mark.parametrize("kw", CASES, ids=str)
def test_values_and_gradients_match_pytorch(kw):
    torch = pytest.importorskip("torch")
    x = _signal()
    a, ta = dt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = dt.stft(a, window=_window(dt, kw), return_complex=True, **_kwargs(kw))
        tout = torch.stft(ta, window=_window(torch, kw), return_complex=True, **_kwargs(kw))
    assert tuple(out.shape) == tuple(tout.shape)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-10)
    wt = np.random.default_rng(1).standard_normal(tuple(out.shape) + (2,)).view(np.complex128)[..., 0]
    (out * dt.tensor(wt)).real.sum().backward()
    (tout * torch.tensor(wt)).real.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), atol=1e-10)
    if kw.get("align_to_window"):
        return
    s = dt.tensor(out.detach().numpy() * 1.1, requires_grad=True)
    ts = torch.tensor(out.detach().numpy() * 1.1, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = dt.istft(s, window=_window(dt, kw), length=55, **_kwargs(kw, True))
        ty = torch.istft(ts, window=_window(torch, kw), length=55, **_kwargs(kw, True))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), atol=1e-10)
    (y * dt.tensor(np.arange(55.0))).sum().backward()
    (ty * torch.tensor(np.arange(55.0))).sum().backward()
    np.testing.assert_allclose(s.grad.numpy(), ts.grad.numpy(), atol=1e-10)


def test_complex_signal_round_trip():
    z = dt.randn(2, 40, dtype=dt.complex128)
    w = dt.hann_window(10, dtype=dt.float64)
    spec = dt.stft(z, 10, hop_length=2, window=w)
    assert spec.shape == (2, 10, 21)
    back = dt.istft(spec, 10, hop_length=2, window=w, length=40, return_complex=True)
    np.testing.assert_allclose(back.numpy(), z.numpy(), atol=1e-12)
    with pytest.raises(RuntimeError, match="cannot have onesided output"):
        dt.istft(dt.stft(z.real, 10, window=w, return_complex=True), 10, window=w, return_complex=True)


@pytest.mark.parametrize("n_fft, hop", [(5, 2), (4, 4), (3, 5), (6, 3)])
def test_framing_and_overlap_add_are_adjoint(n_fft, hop):
    from disttorch.ops.spectral import Frames, OverlapAdd

    x = dt.randn(2, 23, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda a: Frames.apply(a, n_fft, hop), (x,))
    f = dt.randn(2, 4, n_fft, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda a: OverlapAdd.apply(a, hop, 30), (f,))
    frames = Frames.apply(x, n_fft, hop)
    assert frames.shape == (2, 1 + (23 - n_fft) // hop, n_fft)
    np.testing.assert_array_equal(frames[:, 1].detach().numpy(), x[:, hop : hop + n_fft].detach().numpy())


@pytest.mark.parity
@pytest.mark.parametrize("pad_mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_modes_match_pytorch(pad_mode):
    torch = pytest.importorskip("torch")
    x = _signal((2, 30))
    a, ta = dt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    kw = dict(n_fft=12, hop_length=4, pad_mode=pad_mode, return_complex=True)
    out = dt.stft(a, window=dt.hann_window(12, dtype=dt.float64), **kw)
    tout = torch.stft(ta, window=torch.hann_window(12, dtype=torch.float64), **kw)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-10)
    out.abs().sum().backward()
    tout.abs().sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), atol=1e-10)


def test_reflect_padding_longer_than_the_signal_raises():
    with pytest.raises(
        RuntimeError, match="Padding size should be less than the corresponding input dimension"
    ):
        dt.stft(dt.randn(5), 16, window=dt.ones(16), return_complex=True)
