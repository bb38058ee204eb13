"""Affine quantization of float32 arrays to 8- and 32-bit integers, and back, with PyTorch's
(fbgemm's) float arithmetic, so integer representations match it bit for bit.

``q = clamp(rint(x * (1 / scale) + zero_point), qmin, qmax)``: the reciprocal in float32, a
multiplication rather than a division (ties fall where fbgemm's code puts them), the zero
point added before rounding half to even (in one fused multiply-add for 8-bit types, in two
float32 steps for qint32, as PyTorch's two code paths do); ``x = (q - zero_point) * scale`` back. ``choose_qparams`` is fbgemm's
choice of scale and zero point for a range (dynamic quantization's activations), and
``int8_linear`` the integer product of quantized activations and weights with its float
requantization.
"""

from __future__ import annotations

import functools

import numpy as np

from . import cpu_features

__all__ = [
    "qrange",
    "quantize",
    "dequantize",
    "choose_qparams",
    "int8_linear",
    "int8_linear_requantized",
    "conv2d_requantized",
    "average_requantized",
]

_RANGES = {
    np.dtype(np.uint8): (0, 255),
    np.dtype(np.int8): (-128, 127),
    np.dtype(np.int32): (-(2**31), 2**31 - 1),
}
#: fbgemm raises scales below this to it (their reciprocals would lose too much)
SMALL_SCALE_THRESHOLD = np.float32(6.1e-5)


def qrange(np_dtype: np.dtype) -> tuple[int, int]:
    """The smallest and largest integer of a quantized representation dtype."""
    return _RANGES[np.dtype(np_dtype)]


def _along(values: np.ndarray | float, axis: int | None, ndim: int) -> np.ndarray | float:
    """Per-channel ``values`` shaped to broadcast along ``axis`` of an ``ndim``-d array."""
    if axis is None:
        return values
    shape = [1] * ndim
    shape[axis] = -1
    return np.asarray(values).reshape(shape)


def quantize(x: np.ndarray, scale, zero_point, np_dtype: np.dtype, axis: int | None = None) -> np.ndarray:
    """``x`` (float32) quantized to ``np_dtype``; ``scale``/``zero_point`` are numbers, or
    1-d arrays of one value per index of ``axis``."""
    qmin, qmax = qrange(np_dtype)
    with np.errstate(divide="ignore", over="ignore"):  # scale 0 quantizes as PyTorch's does
        inv = np.float32(1.0) / np.asarray(scale, dtype=np.float32)
    zp = _along(np.asarray(zero_point, dtype=np.float64), axis, x.ndim)
    inv = _along(inv, axis, x.ndim)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if np.dtype(np_dtype).itemsize == 1:  # fbgemm's vector code: x * inv + zp fused,
            t = (x.astype(np.float64) * inv.astype(np.float64) + zp).astype(np.float32)
        else:  # qint32, element by element: two float32 roundings
            t = np.float32(zp) + x.astype(np.float32, copy=False) * inv
        q = np.rint(t)
    q = np.clip(np.nan_to_num(q, nan=0.0), qmin, qmax)
    return q.astype(np_dtype)


def dequantize(q: np.ndarray, scale, zero_point, axis: int | None = None) -> np.ndarray:
    """The float32 values of integer representation ``q``: ``(q - zero_point) * scale``, in
    float32 for one scale or float zero points, in float64 (rounded once to float32) for
    per-channel float64 scales with integer zero points."""
    wide = np.float32 if axis is None or np.asarray(zero_point).dtype.kind == "f" else np.float64
    s = _along(np.asarray(scale, dtype=wide), axis, q.ndim)
    zp = _along(np.asarray(zero_point, dtype=wide), axis, q.ndim)
    return ((q.astype(wide) - zp) * s).astype(np.float32, copy=False)


def choose_qparams(
    lo: float,
    hi: float,
    qmin: int,
    qmax: int,
    reduce_range: bool = False,
    preserve_sparsity: bool = False,
) -> tuple[float, int]:
    """fbgemm's scale (float32) and zero point for values in ``[lo, hi]``: the range widened to
    hold 0, a zero or overflowing scale replaced by 0.1, tiny scales raised to
    ``SMALL_SCALE_THRESHOLD``, the zero point taken from the end with the smaller error and
    rounded into ``[qmin, qmax]``; ``reduce_range`` halves the integer range (7 bits for 8),
    as fbgemm does for activations so that products of pairs cannot saturate 16 bits.
    ``preserve_sparsity`` (symmetric schemes) makes a range that spans 0 symmetric, with the
    zero point in the middle of the integer range."""
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    lo, hi = np.float32(lo), np.float32(hi)
    symmetric = preserve_sparsity and lo < 0 < hi
    if symmetric:
        sym_min, sym_max = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
        max_scale = max(abs(lo / np.float32(sym_min)), abs(hi / np.float32(sym_max)))  # float32
        lo, hi = np.float32(float(max_scale) * sym_min), np.float32(float(max_scale) * sym_max)
    lo, hi = np.float32(min(lo, 0.0)), np.float32(max(hi, 0.0))
    scale = (float(hi) - float(lo)) / (qmax - qmin)
    if np.float32(scale) == 0 or np.isinf(np.float32(1.0) / np.float32(scale)):
        scale = 0.1
    if scale < SMALL_SCALE_THRESHOLD:
        amplifier = SMALL_SCALE_THRESHOLD / np.float32(scale)
        if lo == 0:
            hi = np.float32(SMALL_SCALE_THRESHOLD * (qmax - qmin))
        elif hi == 0:
            lo = np.float32(-SMALL_SCALE_THRESHOLD * (qmax - qmin))
        else:
            lo, hi = np.float32(lo * amplifier), np.float32(hi * amplifier)
        scale = float(SMALL_SCALE_THRESHOLD)
    from_min, from_max = qmin - float(lo) / scale, qmax - float(hi) / scale
    err_min = abs(qmin) - abs(float(lo) / scale)
    err_max = abs(qmax) - abs(float(hi) / scale)
    initial = from_min if err_min < err_max else from_max
    if symmetric:
        initial = (qmin + qmax) / 2
    zero_point = qmin if initial < qmin else qmax if initial > qmax else int(np.rint(initial))
    return float(np.float32(scale)), zero_point


def int8_linear(
    qx: np.ndarray,
    x_scale: float,
    x_zero_point: int,
    qw: np.ndarray,
    w_scale: np.ndarray,
    w_zero_point: np.ndarray,
    bias: np.ndarray | None,
) -> np.ndarray:
    """``x @ w.T + bias`` in float32 from quantized rows ``qx`` (..., K) and weights ``qw``
    (N, K) with per-output-channel ``w_scale``/``w_zero_point`` (length 1 or N): the products
    summed exactly as integers (a float64 BLAS product of integers below 2**53 is exact), then
    ``acc * float32(x_scale * w_scale) + bias`` as one fused multiply-add rounded to float32,
    as fbgemm requantizes for a float output."""
    a = qx.astype(np.float64) - x_zero_point
    w = qw.astype(np.float64) - w_zero_point.astype(np.float64)[:, None]
    acc = (a @ w.T).astype(np.float32).astype(np.float64)  # fbgemm converts the int32 sum to float
    multiplier = (np.float32(x_scale) * w_scale.astype(np.float32)).astype(np.float64)
    # acc * multiplier + bias as one fused multiply-add: exact in float64, rounded once
    out = acc * multiplier
    if bias is not None:
        out += bias.astype(np.float64)
    return out.astype(np.float32)


@functools.cache
def _pairs_saturate() -> bool:
    """Whether fbgemm sums int8 products in 16-bit pairs on this CPU: with AVX2 or AVX512
    (``vpmaddubsw``), not with AVX512-VNNI, whose ``vpdpbusd`` sums them into 32 bits exactly."""
    return not cpu_features.has("AVX512VNNI")


def _saturation_correction(qx: np.ndarray, qw: np.ndarray) -> np.ndarray:
    """What fbgemm's 16-bit pair sums lose: its uint8 x int8 product (``vpmaddubsw``) adds
    the products of neighbouring pairs ``k = 2i, 2i+1`` into int16 with saturation before
    widening. Returns ``sum(sat16(pair) - pair)`` per (row, output), usually all zero; all
    zero on a CPU with VNNI."""
    if not _pairs_saturate():
        return np.zeros((qx.shape[0], qw.shape[0]), np.int64)
    k = qx.shape[1]
    if k % 2:
        qx, qw = np.pad(qx, ((0, 0), (0, 1))), np.pad(qw, ((0, 0), (0, 1)))
    a, w = qx.astype(np.int32), qw.astype(np.int32)
    out = np.zeros((a.shape[0], w.shape[0]), np.int64)
    rows = max(1, 2**22 // max(1, a.shape[0] * a.shape[1]))  # bound the (rows, N, K) temporary
    for start in range(0, w.shape[0], rows):
        prods = a[:, None, :] * w[None, start : start + rows, :]
        pairs = prods[..., 0::2] + prods[..., 1::2]
        out[:, start : start + rows] = (np.clip(pairs, -32768, 32767) - pairs).sum(-1)
    return out


def int8_linear_requantized(
    qx: np.ndarray,
    x_scale: float,
    x_zero_point: int,
    qw: np.ndarray,
    w_scale: np.ndarray,
    bias: np.ndarray | None,
    out_scale: float,
    out_zero_point: int,
) -> np.ndarray:
    """A static quantized linear layer's uint8 output, as fbgemm computes it: integer
    products of uint8 rows ``qx`` (2-d) and symmetric int8 weights ``qw`` (pairs summed with
    16-bit saturation), the float bias divided by ``x_scale * w_scale`` and added, the sum
    multiplied by ``x_scale * w_scale / out_scale``, rounded half to even, plus
    ``out_zero_point``, clamped to [0, 255] (all in float32)."""
    acc = qx.astype(np.float64) @ qw.astype(np.float64).T + _saturation_correction(qx, qw)
    acc -= x_zero_point * qw.astype(np.int64).sum(axis=1)
    f32 = np.float32
    act_times_w = f32(x_scale) * w_scale.astype(f32)
    raw = acc.astype(f32)
    if bias is not None:
        raw = raw + bias.astype(f32) / act_times_w
    q = np.rint(raw * (act_times_w / f32(out_scale))) + out_zero_point
    return np.clip(q, 0, 255).astype(np.uint8)


def conv2d_requantized(
    qx: np.ndarray,
    x_scale: float,
    x_zero_point: int,
    qw: np.ndarray,
    w_scale: np.ndarray,
    bias: np.ndarray | None,
    out_scale: float,
    out_zero_point: int,
    stride: tuple,
    padding: tuple,
    dilation: tuple,
    groups: int,
) -> np.ndarray:
    """A static quantized 2-d convolution's uint8 output (N, O, Ho, Wo) from uint8 input
    ``qx`` (N, C, H, W) and symmetric int8 weights ``qw`` (O, C/groups, kh, kw) with one scale
    per output channel (length 1 or O): exact integer sums over each window (the input
    padded with its zero point), then the requantization of :func:`int8_linear_requantized`.
    Bit for bit as PyTorch's while the activations use 7 bits (its default qconfigs), where
    its 16-bit pair sums cannot saturate."""
    (ph, pw), (sh, sw), (dh, dw) = padding, stride, dilation
    a = np.pad(qx.astype(np.float64) - x_zero_point, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    o, cg, kh, kw = qw.shape
    span = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
    win = np.lib.stride_tricks.sliding_window_view(a, span, axis=(2, 3))[:, :, ::sh, ::sw, ::dh, ::dw]
    n, _, ho, wo = win.shape[:4]
    og = o // groups
    acc = np.empty((n, ho, wo, o), np.float64)
    for g in range(groups):
        cols = win[:, g * cg : (g + 1) * cg].transpose(0, 2, 3, 1, 4, 5).reshape(n * ho * wo, cg * kh * kw)
        w = qw[g * og : (g + 1) * og].reshape(og, -1).astype(np.float64)
        acc[..., g * og : (g + 1) * og] = (cols @ w.T).reshape(n, ho, wo, og)
    f32 = np.float32
    act_times_w = f32(x_scale) * np.broadcast_to(w_scale.astype(f32), (o,))
    raw = acc.astype(f32)
    if bias is not None:
        raw = raw + bias.astype(f32) / act_times_w
    q = np.rint(raw * (act_times_w / f32(out_scale))) + out_zero_point
    return np.clip(q, 0, 255).astype(np.uint8).transpose(0, 3, 1, 2).copy()


def average_requantized(
    acc: np.ndarray, count: np.ndarray | int, zero_point: int, np_dtype: np.dtype
) -> np.ndarray:
    """Quantized averages with the input's scale, as PyTorch's quantized average pooling and
    mean compute them: integer sums ``acc`` of ``q - zero_point`` over windows of ``count``
    elements, ``zero_point + acc / count`` rounded half to even, clamped to the dtype."""
    qmin, qmax = qrange(np_dtype)
    return np.clip(np.rint(zero_point + acc / np.asarray(count, np.float64)), qmin, qmax).astype(np_dtype)
