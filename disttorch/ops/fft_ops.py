"""The discrete Fourier transforms of ``torch.fft`` on NumPy's pocketfft, with gradients.

Every transform is built from four Functions: :class:`Resize` (zero-pad or trim dims to the
signal length ``n``/``s``), :class:`C2C` (complex-to-complex, either direction), :class:`R2C`
(real input, the one-sided half spectrum along the last transformed dim) and :class:`C2R`
(its inverse, taking the half spectrum as Hermitian). Each backward is again a transform:
the adjoint of a transform with ``norm`` is the transform of the opposite direction with the
dual norm ("backward" <-> "forward", "ortho" stays), as PyTorch computes it.

dtypes follow PyTorch: float32 -> complex64, float64 -> complex128, integers as the default
float dtype; float16/bfloat16 raise (PyTorch's CPU build has no half-precision FFT).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _check_device, _tensor_arg, _wrap_dim
from ..autograd.function import Function
from . import shape as _shape

__all__ = [
    "fft",
    "ifft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfft2",
    "irfft2",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "hfft2",
    "ihfft2",
    "hfftn",
    "ihfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}
_REAL_OF = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}


def _norm(norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in _DUAL:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _prepare(name: str, input: Any, real_only: bool = False) -> Tensor:
    """``input`` in a dtype the FFT computes in: integers and bools become the default float
    dtype; half precision raises as PyTorch's CPU build does."""
    x = _tensor_arg(f"fft_{name}", input)
    k = x._data.dtype
    if k.kind in "iub":
        return x.to(_dtype.get_default_dtype())
    if k == np.float16 or k.kind == "V":
        raise RuntimeError(f"Unsupported dtype {_dtype.scalar_type_name(k)}")
    if real_only and k.kind == "c":
        raise RuntimeError(f"{name} expects a real input tensor, but got {_dtype.scalar_type_name(k)}")
    return x


def _complex_dt(x: np.ndarray) -> type:
    return _COMPLEX_OF.get(x.dtype, None) or x.dtype.type


def _real_dt(x: np.ndarray) -> type:
    return _REAL_OF.get(x.dtype, None) or x.dtype.type


# ---------------------------------------------------------------------- the four Functions
class Resize(Function):
    """Trim or zero-pad each of ``axes`` to the matching length of ``sizes`` (the signal
    length of a transform); the gradient resizes back."""

    _raw = True

    @staticmethod
    def forward(ctx, a, axes, sizes):
        x = a._data
        ctx.axes, ctx.sizes = axes, tuple(x.shape[ax] for ax in axes)
        out = x[tuple(slice(0, sizes[axes.index(d)]) if d in axes else slice(None) for d in range(x.ndim))]
        pads = [
            (0, max(0, sizes[axes.index(d)] - x.shape[d])) if d in axes else (0, 0) for d in range(x.ndim)
        ]
        return np.pad(out, pads) if any(p[1] for p in pads) else out.copy()

    @staticmethod
    def backward(ctx, g):
        return Resize.apply(g, ctx.axes, ctx.sizes), None, None


def _resize(x: Tensor, axes: tuple, sizes: tuple) -> Tensor:
    if all(x._data.shape[a] == n for a, n in zip(axes, sizes)):
        return x
    return Resize.apply(x, axes, sizes)


class C2C(Function):
    """Complex-to-complex transform over ``axes`` (``inverse`` for the positive exponent);
    a real input is taken as complex (its gradient is then the real part)."""

    _raw = True

    @staticmethod
    def forward(ctx, a, axes, norm, inverse):
        x = a._data
        ctx.axes, ctx.norm, ctx.inverse = axes, norm, inverse
        fn = np.fft.ifftn if inverse else np.fft.fftn
        return fn(x, axes=axes, norm=norm).astype(_complex_dt(x), copy=False)

    @staticmethod
    def backward(ctx, g):
        return C2C.apply(g, ctx.axes, _DUAL[ctx.norm], not ctx.inverse), None, None, None


class R2C(Function):
    """Real-to-complex forward transform over ``axes``: the last axis keeps ``n // 2 + 1``
    frequencies (the rest are their conjugates)."""

    _raw = True

    @staticmethod
    def forward(ctx, a, axes, norm):
        x = a._data
        ctx.axes, ctx.norm, ctx.n = axes, norm, x.shape[axes[-1]]
        return np.fft.rfftn(x, axes=axes, norm=norm).astype(_complex_dt(x), copy=False)

    @staticmethod
    def backward(ctx, g):
        full = _resize(g, (ctx.axes[-1],), (ctx.n,))  # the dropped frequencies get no gradient
        return C2C.apply(full, ctx.axes, _DUAL[ctx.norm], True).real, None, None


class C2R(Function):
    """Complex-to-real inverse transform over ``axes`` of a one-sided (Hermitian) spectrum;
    the last axis gives ``n`` real samples from its ``n // 2 + 1`` frequencies."""

    _raw = True

    @staticmethod
    def forward(ctx, a, axes, norm, n):
        x = a._data
        ctx.axes, ctx.norm, ctx.half = axes, norm, x.shape[axes[-1]]
        sizes = [x.shape[ax] for ax in axes[:-1]] + [n]
        return np.fft.irfftn(x, s=sizes, axes=axes, norm=norm).astype(_real_dt(x), copy=False)

    @staticmethod
    def backward(ctx, g):
        gi = R2C.apply(g, ctx.axes, _DUAL[ctx.norm])
        n, half = g._data.shape[ctx.axes[-1]], ctx.half
        doubled = n - half  # each of these frequencies stands for itself and its conjugate
        if doubled > 0:
            w = np.ones(half, dtype=_real_dt(gi._data))
            w[1 : 1 + doubled] = 2
            shape = [1] * gi._data.ndim
            shape[ctx.axes[-1]] = half
            gi = gi * Tensor._make(w.reshape(shape))
        return gi, None, None, None


# ---------------------------------------------------------------------- argument handling
def _axes_sizes(name: str, x: Tensor, s: Any, dim: Any) -> tuple:
    """The transformed dims and their signal lengths (``-1``: the input's size), PyTorch's
    rules: ``dim`` None and ``s`` given -> the last ``len(s)`` dims; neither -> every dim."""
    nd = x._data.ndim
    if nd == 0 and dim is not None:
        d = dim if isinstance(dim, (int, np.integer)) else (dim[0] if len(dim) else None)
        if d is not None:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    if isinstance(s, (int, np.integer)):
        s = (int(s),)
    if dim is None:
        if s is not None and len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} dimensions.")
        axes = tuple(range(nd - len(s), nd)) if s is not None else tuple(range(nd))
    else:
        axes = tuple(_wrap_dim(int(d), nd) for d in dim)
        if len(set(axes)) != len(axes):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(axes):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    sizes = (
        tuple(x._data.shape[a] for a in axes)
        if s is None
        else tuple(x._data.shape[a] if int(n) == -1 else int(n) for a, n in zip(axes, s))
    )
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return axes, sizes


def _wrapped_dims(name: str, input: Any, dim: Any) -> None:
    """PyTorch's IndexError for a ``dim`` out of ``input``'s range, before its dtype checks."""
    if dim is not None:
        nd = _tensor_arg(f"fft_{name}", input)._data.ndim
        for d in (dim,) if isinstance(dim, (int, np.integer)) else dim:
            _wrap_dim(int(d), nd, has_dims=True)


def _check_out(op: str, out: Tensor | None, complex_result: bool) -> None:
    """PyTorch's check of an ``out=`` tensor (the result is then cast into it): a complex
    transform needs a complex ``out``, a real one a real floating ``out``."""
    if out is None:
        return
    kind = out._data.dtype.kind
    if complex_result and kind != "c":
        raise RuntimeError(
            f"{op} expects a complex output tensor, but got {_dtype.scalar_type_name(out._data.dtype)}"
        )
    if not complex_result and kind != "f":
        raise RuntimeError(
            f"{op} expects a floating point output tensor, but got {_dtype.scalar_type_name(out._data.dtype)}"
        )


def _one_dim(n: int | None, dim: int) -> tuple:
    return (None if n is None else (n,)), (dim,)


def _c2c(name: str, input: Tensor, s: Any, dim: Any, norm: str | None, inverse: bool) -> Tensor:
    axes, sizes = _axes_sizes(name, _tensor_arg(f"fft_{name}", input), s, dim)  # (dims before dtypes)
    x = _prepare(name, input)
    if not axes:
        return x.to(x.dtype.to_complex()) if x._data.dtype.kind != "c" else x.clone()
    return C2C.apply(_resize(x, axes, sizes), axes, _norm(norm), inverse)


def _r2c(name: str, input: Tensor, s: Any, dim: Any, norm: str | None) -> Tensor:
    t = _tensor_arg(f"fft_{name}", input)
    if name in ("rfft2", "rfftn") and t._data.dtype.kind == "c":  # (PyTorch's rfftn: before the dims)
        raise RuntimeError(
            f"rfftn expects a real-valued input tensor, but got {_dtype.scalar_type_name(t._data.dtype)}"
        )
    axes, sizes = _axes_sizes(name, t, s, dim)
    x = _prepare(name, input, real_only=True)
    if not axes:
        raise RuntimeError(f"{name} must transform at least one axis")
    return R2C.apply(_resize(x, axes, sizes), axes, _norm(norm))


def _c2r(name: str, input: Tensor, s: Any, dim: Any, norm: str | None) -> Tensor:
    """irfftn: c2c inverse over all but the last dim, then c2r on the last (length ``n``,
    default ``2 * (m - 1)``)."""
    x = _tensor_arg(f"fft_{name}", input)
    given_last = None
    if s is not None:
        s = (s,) if isinstance(s, (int, np.integer)) else tuple(s)
        given_last = int(s[-1]) if int(s[-1]) != -1 else None
        s = s[:-1] + (-1,)
    axes, sizes = _axes_sizes(name, x, s, dim)
    x = _prepare(name, x)
    if not axes:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = given_last if given_last is not None else 2 * (x._data.shape[axes[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    x = _resize(x, axes, sizes[:-1] + (last // 2 + 1,))
    return C2R.apply(x, axes, _norm(norm), last)


# ---------------------------------------------------------------------- public transforms
def fft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``, the signal
    zero-padded or trimmed to length ``n``. ``norm``: "backward" (no scaling, the default),
    "ortho" (1/sqrt(n)) or "forward" (1/n)."""
    _check_out("fft", out, complex_result=True)
    s, d = _one_dim(n, dim)
    return _c2c("fft", input, s, d, norm, False)


def ifft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The one-dimensional inverse discrete Fourier transform (``norm="backward"`` scales by 1/n)."""
    _check_out("ifft", out, complex_result=True)
    s, d = _one_dim(n, dim)
    return _c2c("ifft", input, s, d, norm, True)


def fft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The two-dimensional discrete Fourier transform (``fftn`` over ``dim``)."""
    _check_out("fftn", out, complex_result=True)
    return _c2c("fft2", input, s, dim, norm, False)


def ifft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The two-dimensional inverse discrete Fourier transform."""
    _check_out("fftn", out, complex_result=True)
    return _c2c("ifft2", input, s, dim, norm, True)


def fftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The N-dimensional discrete Fourier transform over ``dim`` (default: the last
    ``len(s)`` dims, or every dim), each padded or trimmed to the length in ``s``."""
    _check_out("fftn", out, complex_result=True)
    return _c2c("fftn", input, s, dim, norm, False)


def ifftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The N-dimensional inverse discrete Fourier transform."""
    _check_out("fftn", out, complex_result=True)
    return _c2c("ifftn", input, s, dim, norm, True)


def rfft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The Fourier transform of a real signal: the ``n // 2 + 1`` non-negative frequencies."""
    _check_out("rfft", out, complex_result=True)
    s, d = _one_dim(n, dim)
    return _r2c("rfft", input, s, d, norm)


def irfft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (m - 1)``)
    from its one-sided spectrum (imaginary parts of the zero and Nyquist terms are ignored)."""
    _check_out("irfft", out, complex_result=False)
    s, d = _one_dim(n, dim)
    return _c2r("irfft", input, s, d, norm)


def rfft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The two-dimensional Fourier transform of a real input (the last dim one-sided)."""
    _check_out("rfftn", out, complex_result=True)
    return _r2c("rfft2", input, s, dim, norm)


def irfft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The inverse of :func:`rfft2`."""
    _check_out("irfftn", out, complex_result=False)
    return _c2r("irfft2", input, s, dim, norm)


def rfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The N-dimensional Fourier transform of a real input (the last dim one-sided)."""
    _check_out("rfftn", out, complex_result=True)
    return _r2c("rfftn", input, s, dim, norm)


def irfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The inverse of :func:`rfftn` (the last dim's length defaults to ``2 * (m - 1)``)."""
    _check_out("irfftn", out, complex_result=False)
    return _c2r("irfftn", input, s, dim, norm)


def hfft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The Fourier transform of a Hermitian-symmetric signal given by its one-sided half:
    a real result of length ``n`` (default ``2 * (m - 1)``)."""
    _check_out("hfft", out, complex_result=False)
    s, d = _one_dim(n, dim)
    return _c2r("hfft", _prepare("hfft", input).conj(), s, d, _DUAL[_norm(norm)])


def ihfft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The inverse of :func:`hfft`: the one-sided half of the inverse transform of a real signal."""
    _check_out("ihfft", out, complex_result=True)
    s, d = _one_dim(n, dim)
    return _r2c("ihfft", input, s, d, _DUAL[_norm(norm)]).conj()


def hfft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The two-dimensional :func:`hfftn`."""
    _check_out("hfftn", out, complex_result=False)
    _wrapped_dims("hfft2", input, dim)
    return _c2r("hfft2", _prepare("hfft2", input).conj(), s, dim, _DUAL[_norm(norm)])


def ihfft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The two-dimensional :func:`ihfftn`."""
    _check_out("ihfftn", out, complex_result=True)
    return _r2c("ihfft2", input, s, dim, _DUAL[_norm(norm)]).conj()


def hfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The N-dimensional Fourier transform of a Hermitian-symmetric input given by its
    one-sided half along the last dim: a real result."""
    _check_out("hfftn", out, complex_result=False)
    _wrapped_dims("hfftn", input, dim)
    return _c2r("hfftn", _prepare("hfftn", input).conj(), s, dim, _DUAL[_norm(norm)])


def ihfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The N-dimensional inverse of :func:`hfftn` of a real input (the last dim one-sided)."""
    _check_out("ihfftn", out, complex_result=True)
    return _r2c("ihfftn", input, s, dim, _DUAL[_norm(norm)]).conj()


# ---------------------------------------------------------------------- frequencies, shifts
def _freqs(values: np.ndarray, dtype: Any, device: Any, requires_grad: bool, out: Tensor | None) -> Tensor:
    if device is not None:
        _check_device(device)
    dt = _dtype.to_numpy(dtype) if dtype is not None else _dtype.get_default_dtype().numpy
    t = Tensor._make(values.astype(dt))
    if requires_grad:
        t.requires_grad_(True)
    return t if out is None else out.copy_(t)


def fftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of a length-``n`` transform with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    return _freqs(np.fft.fftfreq(int(n), d) if n else np.zeros(0), dtype, device, requires_grad, out)


def rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of :func:`rfft` of length ``n``: ``[0, 1, ..., n // 2] / (d * n)``."""
    return _freqs(np.fft.rfftfreq(int(n), d) if n else np.zeros(0), dtype, device, requires_grad, out)


def _shift(name: str, input: Tensor, dim: Any, sign: int) -> Tensor:
    x = _tensor_arg(name, input)
    nd = x._data.ndim
    dims = tuple(range(nd)) if dim is None else ((dim,) if isinstance(dim, (int, np.integer)) else tuple(dim))
    dims = tuple(_wrap_dim(int(d), nd) for d in dims)
    if not dims:
        return x.clone()
    shifts = tuple(sign * (x._data.shape[d] // 2) for d in dims)
    return _shape.roll(x, shifts, dims)


def fftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Reorder an FFT's output so the zero frequency is in the middle (of each of ``dim``,
    default every dim): a roll by ``n // 2``."""
    return _shift("fftshift", input, dim, 1)


def ifftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of :func:`fftshift`: a roll by ``-(n // 2)``."""
    return _shift("ifftshift", input, dim, -1)
