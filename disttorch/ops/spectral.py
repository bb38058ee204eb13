"""Short-time Fourier transforms: ``stft`` and its inverse ``istft``, with gradients.

``stft`` pads the signal (``center``), cuts it into frames of ``n_fft`` samples every
``hop_length`` (:class:`Frames`), multiplies by the window (zero-padded to ``n_fft``, centred)
and transforms each frame with :mod:`disttorch.ops.fft_ops`. ``istft`` inverts each frame,
windows it again, adds the frames back where they came from (:class:`OverlapAdd`, the adjoint
of :class:`Frames`) and divides by the overlap-added squared window. Every step is
differentiable (signal, spectrum and window).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _native_warnings
from .._dtype import scalar_type_name
from .._public_name import package_name
from .._tensor import Tensor, _tensor_arg
from ..autograd.autocast_state import autocast_op
from ..autograd.function import Function
from . import fft_ops

__all__ = ["stft", "istft"]
TENSOR_METHODS = ("stft", "istft")


class Frames(Function):
    """The frames ``x[..., t * hop + k]`` of the last dim, as ``(..., n_frames, n_fft)``
    (a strided view of the input, copied once)."""

    _raw = True

    @staticmethod
    def forward(ctx, a, n_fft, hop):
        x = a._data
        ctx.hop, ctx.length = hop, x.shape[-1]
        return np.lib.stride_tricks.sliding_window_view(x, n_fft, axis=-1)[..., ::hop, :].copy()

    @staticmethod
    def backward(ctx, g):
        return OverlapAdd.apply(g, ctx.hop, ctx.length), None, None


class OverlapAdd(Function):
    """Sum frames ``(..., n_frames, n_fft)`` placed every ``hop`` samples into a signal of
    ``length`` samples (at least ``n_fft + hop * (n_frames - 1)``): the adjoint of
    :class:`Frames`. The frames are cut into blocks of ``hop`` samples and each block
    position is added at once."""

    _raw = True

    @staticmethod
    def forward(ctx, a, hop, length):
        f = a._data
        n_frames, n_fft = f.shape[-2:]
        ctx.n_fft, ctx.hop, ctx.n_frames = n_fft, hop, n_frames
        blocks = -(-n_fft // hop)
        padded = np.zeros(f.shape[:-1] + (blocks * hop,), dtype=f.dtype)
        padded[..., :n_fft] = f
        out = np.zeros(f.shape[:-2] + (n_frames + blocks - 1, hop), dtype=f.dtype)
        for j in range(blocks):
            out[..., j : j + n_frames, :] += padded[..., j * hop : (j + 1) * hop]
        out = out.reshape(f.shape[:-2] + (-1,))
        if out.shape[-1] >= length:
            return out[..., :length].copy()
        return np.concatenate([out, np.zeros(out.shape[:-1] + (length - out.shape[-1],), f.dtype)], -1)

    @staticmethod
    def backward(ctx, g):
        frames = Frames.apply(g, ctx.n_fft, ctx.hop)
        if frames._data.shape[-2] != ctx.n_frames:  # a longer signal has frames past the last one
            frames = frames[..., : ctx.n_frames, :]
        return frames, None, None


def _signature(name: str, input: Tensor, n_fft: int, hop: int, win: int, window: Any, **more: Any) -> str:
    """The call as PyTorch prints it at the start of its stft/istft messages."""
    kind = f"{scalar_type_name(input._data.dtype)}Tensor{list(input._data.shape)}"
    w = (
        "None"
        if window is None
        else f"{scalar_type_name(window._data.dtype)}Tensor{{{list(window._data.shape)}}}"
    )
    rest = "".join(f", {k}={v}" for k, v in more.items())
    return f"{name}({package_name()}.{kind}, n_fft={n_fft}, hop_length={hop}, win_length={win}, window={w}{rest})"


def _window(
    name: str, sig: str, window: Tensor | None, n_fft: int, win_length: int, like: Tensor, missing: str
) -> Tensor:
    """The window zero-padded (centred) to ``n_fft``; rectangular, with PyTorch's warning,
    when none is given."""
    if window is None:
        _native_warnings.warn(missing, once=True)
        dt = like._data.real.dtype
        window = Tensor._make(np.ones(win_length, dtype=dt if dt.kind == "f" else np.float32))
    elif window._data.ndim != 1 or window._data.shape[0] != win_length:
        raise RuntimeError(
            f"{sig} : expected a 1D window tensor of size equal to win_length={win_length}, "
            f"but got window with size {list(window._data.shape)}"
        )
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = fft_ops.Resize.apply(window, (0,), (n_fft - left,))
        window = fft_ops.Resize.apply(window.flip(0), (0,), (n_fft,)).flip(0)
    return window


def _lengths(name: str, sig_fn: Any, n_fft: int, hop_length: int | None, win_length: int | None) -> tuple:
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    if n_fft <= 0:
        raise RuntimeError(f"{sig_fn(hop, win)} : expected 0 < n_fft, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{sig_fn(hop, win)} : expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{sig_fn(hop, win)} : expected 0 < win_length <= n_fft, but got win_length={win}")
    return hop, win


def _pad_signal(x: Tensor, p: int, mode: str) -> Tensor:
    """``x`` with ``p`` samples added at both ends of its last dim, by ``mode`` as
    ``nn.functional.pad`` does: 'constant' (zeros), 'reflect' (mirrored, edge not repeated),
    'replicate' (edge repeated) or 'circular' (wrapped)."""
    n, last = x._data.shape[-1], x._data.ndim - 1
    if mode == "constant":
        x = fft_ops.Resize.apply(x.flip(-1), (last,), (n + p,)).flip(-1)
        return fft_ops.Resize.apply(x, (last,), (n + 2 * p,))
    i = np.arange(-p, n + p)
    if mode == "reflect":
        if p >= n:
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                f"padding ({p}, {p}) at dimension {last} of input {list(x._data.shape)}"
            )
        i = np.abs(i)
        i = np.where(i >= n, 2 * (n - 1) - i, i)
    elif mode == "replicate":
        i = np.clip(i, 0, n - 1)
    elif mode == "circular":
        if p > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        i = i % n
    else:
        raise NotImplementedError(
            f"Unrecognised padding mode {mode} (stft's pad_mode: constant, reflect, replicate or circular)"
        )
    return x.index_select(-1, Tensor._make(i))


_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied,which is known to cause spectral "
    "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
    "spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
    "`window=torch.ones(n_fft, device=<device>)`. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:835.)"
)
_NO_WINDOW_INVERSE = (
    "A window was not provided. A rectangular window will be applied.Please provide the same window used "
    "by stft to make the inversion lossless.To suppress this warning and use a rectangular window, "
    "explicitly set `window=torch.ones(n_fft, device=<device>)`. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:1035.)"
)


@autocast_op("fp32")  # PyTorch's CPU autocast runs it in float32
def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """The short-time Fourier transform of a signal ``(L,)`` or batch ``(B, L)``: a complex
    tensor ``(B?, n_fft // 2 + 1 or n_fft, n_frames)``.

    ``hop_length`` defaults to ``n_fft // 4``, ``win_length`` to ``n_fft``, ``window`` to a
    rectangular one (with PyTorch's warning), zero-padded to ``n_fft`` in the middle.
    ``center`` pads ``n_fft // 2`` samples on each side with ``pad_mode`` so frame ``t`` is
    centred at ``t * hop_length``; ``normalized`` scales by ``n_fft ** -0.5``; ``onesided``
    (default for real input and window) keeps the non-negative frequencies.
    ``return_complex`` must be given for real inputs (PyTorch raises otherwise);
    ``return_complex=False`` is deprecated and returns ``view_as_real`` of the result.
    ``align_to_window`` (only with ``center=False``) starts each frame at its window's
    first sample rather than at the zero-padded frame's.
    """
    x = _tensor_arg("stft", input)
    cplx = x._data.dtype.kind == "c" or (window is not None and window._data.dtype.kind == "c")
    if return_complex is None:
        if not cplx:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will further "
                "require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")

    def sig(hop: int, win: int) -> str:
        return _signature(
            "stft",
            x,
            n_fft,
            hop,
            win,
            window,
            normalized=int(normalized),
            onesided=onesided,
            return_complex=int(return_complex),
        )

    hop, win = _lengths("stft", sig, n_fft, hop_length, win_length)
    if x._data.ndim not in (1, 2):
        raise RuntimeError(f"{sig(hop, win)} : expected a 1D or 2D tensor")
    if onesided is None:
        onesided = not cplx
    elif onesided and cplx:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if center:
        x = _pad_signal(x, n_fft // 2, pad_mode)
    elif align_to_window and win < n_fft:
        left = (n_fft - win) // 2
        x = fft_ops.Resize.apply(x.flip(-1), (x.ndim - 1,), (x.shape[-1] + left,)).flip(-1)
        x = fft_ops.Resize.apply(x, (x.ndim - 1,), (x.shape[-1] + n_fft - win - left,))
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"{sig(hop, win)} : expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    w = _window("stft", sig(hop, win), window, n_fft, win, x, _NO_WINDOW)
    frames = Frames.apply(x, n_fft, hop) * w
    norm = "ortho" if normalized else "backward"
    spec = fft_ops.rfft(frames, norm=norm) if onesided else fft_ops.fft(frames, norm=norm)
    out = spec.transpose(-1, -2)
    if not return_complex:
        warnings.warn(
            "stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
            "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
            "still call torch.view_as_real on the complex output to recover the old return format.",
            UserWarning,
            stacklevel=2,
        )
        from .complex import view_as_real

        return view_as_real(out.contiguous())
    return out


def istft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """The inverse of :func:`stft`: the signal ``(B?, L)`` from its complex spectrogram
    ``(B?, n_fft // 2 + 1 or n_fft, n_frames)`` by windowed overlap-add, divided by the
    overlap-added squared window (which must be non-zero everywhere in the result).
    ``length`` trims or zero-pads the result; ``return_complex`` keeps a complex signal
    (then the spectrogram must be two-sided). A real result reads only the non-negative
    frequencies of a two-sided spectrogram, as PyTorch's does."""
    spec = _tensor_arg("istft", input)
    if spec._data.dtype.kind != "c":
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with return_complex=True."
        )

    def sig(hop: int, win: int) -> str:
        return _signature(
            "istft",
            spec,
            n_fft,
            hop,
            win,
            window,
            center=int(center),
            normalized=int(normalized),
            onesided=onesided,
            length=length,
            return_complex=int(return_complex),
        )

    hop, win = _lengths("istft", sig, n_fft, hop_length, win_length)
    if spec._data.ndim not in (2, 3):
        raise RuntimeError(f"{sig(hop, win)} : expected a tensor with 2 or 3 dimensions of complex dtype")
    n_freq = spec._data.shape[-2]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided:
        if n_freq != n_fft // 2 + 1:
            raise RuntimeError(
                f"{sig(hop, win)} : expected the frequency dimension (3rd to the last) of the input tensor to "
                f"match n_fft / 2 + 1 when onesided=True, but got {n_freq}"
            )
        if return_complex:
            raise RuntimeError("cannot have onesided output if window or input is complex")
    elif n_freq != n_fft:
        raise RuntimeError(
            f"{sig(hop, win)} : expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft when onesided=False, but got {n_freq}"
        )
    w = _window("istft", sig(hop, win), window, n_fft, win, spec, _NO_WINDOW_INVERSE)
    norm = "ortho" if normalized else "backward"
    frames_spec = spec.transpose(-1, -2)
    if return_complex:
        frames = fft_ops.ifft(frames_spec, n=n_fft, norm=norm)
    else:  # a real signal: the non-negative frequencies only (as PyTorch, also when two-sided)
        frames = fft_ops.irfft(frames_spec[..., : n_fft // 2 + 1], n=n_fft, norm=norm)
    n_frames = spec._data.shape[-1]
    total = n_fft + hop * (n_frames - 1)
    y = OverlapAdd.apply(frames * w, hop, total)
    envelope = OverlapAdd.apply(
        (w * w.conj() if w._data.dtype.kind == "c" else w * w).expand(n_frames, n_fft), hop, total
    )
    start = n_fft // 2 if center else 0
    end = (
        total if length is None and not center else (total - n_fft // 2 if length is None else start + length)
    )
    end = min(end, total)
    y, envelope = y[..., start:end], envelope[start:end]
    low = np.abs(envelope._data).min() if envelope._data.size else 1.0
    if low < 1e-11:
        raise RuntimeError(f"{sig(hop, win)} window overlap add min: {low:g}")
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        y = fft_ops.Resize.apply(y, (y.ndim - 1,), (length,))
    return y
