"""Pooling beyond max/average: ``lp_pool1d/2d/3d`` (power-average), ``max_unpool1d/2d/3d``
(the partial inverse of max pooling) and ``fractional_max_pool2d/3d`` (pseudo-random
window starts, Graham 2014), composed from differentiable tensor ops over index arrays."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..._creation import _is_index
from ..._random import _gen, _uniform_array
from ..._tensor import Tensor
from ...autograd.autocast_state import autocast_op
from ...autograd.grad_reads import reads_inputs
from ...ops.elementwise import where
from .pooling import _tuple, avg_pool1d, avg_pool2d, avg_pool3d

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]

_AVG = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}


def _lp_pool(
    d: int, input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool
) -> Tensor:
    kernel = _tuple(kernel_size, d, "kernel_size", f"lp_pool{d}d")
    out = _AVG[d](input.pow(norm_type), kernel, stride, 0, ceil_mode)
    # PyTorch's sign(out) * relu(|out|): out itself, where a window sums to 0 the root's infinite
    # derivative stopped (relu's gradient selects): 0 there, not NaN
    kept = where(out != 0, out, 0.0)
    return kept.mul(float(np.prod(kernel))).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling ``(sum_window x^p)^(1/p)`` over ``(N, C, L)``."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling ``(sum_window x^p)^(1/p)`` over ``(N, C, H, W)``."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling ``(sum_window x^p)^(1/p)`` over ``(N, C, D, H, W)``."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def _max_unpool(
    d: int, input: Tensor, indices: Tensor, kernel_size: Any, stride: Any, padding: Any, output_size: Any
) -> Tensor:
    name = f"max_unpool{d}d"
    kernel = _tuple(kernel_size, d, "kernel_size", name)
    stride = kernel if stride is None else _tuple(stride, d, "stride", name)
    pad = _tuple(padding, d, "padding", name)
    spatial = tuple(input.shape[-d:])
    default = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(spatial, stride, pad, kernel))
    if output_size is None:
        size = default
    else:
        size = tuple(int(v) for v in output_size)[-d:]
        if len(size) != d:
            raise ValueError(
                f"output_size should be a sequence containing {d} or {d + 2} elements, but "
                f"it has a length of '{len(tuple(output_size))}'"
            )
        for n, lo_default, sd in zip(size, default, stride):
            if not (lo_default - sd < n < lo_default + sd):
                raise ValueError(
                    f'invalid output_size "{list(size)}" (dim {d} must be between '
                    f"{[a - s for a, s in zip(default, stride)]} and "
                    f"{[a + s for a, s in zip(default, stride)]})"
                )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}"
        )
    lead = tuple(input.shape[:-d])
    plane = int(np.prod(size))
    idx = indices._data.reshape(lead + (-1,)).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        raise RuntimeError(
            f"Found an invalid max index: {int(idx.max())} (output volumes are of size "
            f"{'x'.join(map(str, size))}"
        )
    zeros = Tensor._make(np.zeros(lead + (plane,), dtype=input._data.dtype))
    out = zeros.scatter(len(lead), Tensor._make(idx), input.reshape(*lead, -1))
    return reads_inputs(out.reshape(*lead, *size))  # PyTorch's backward reads the input


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """Place each value of ``input`` at its ``indices`` (from ``max_pool1d(return_indices=True)``)
    in a zero tensor of the pre-pooling size (or ``output_size``)."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


@autocast_op("fp32")
def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """Partial inverse of ``max_pool2d``: values go back to their flat ``indices``, zeros elsewhere."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


@autocast_op("fp32")
def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """Partial inverse of ``max_pool3d``: values go back to their flat ``indices``, zeros elsewhere."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


def _fractional_starts(size: int, k: int, out: int, u: np.ndarray) -> np.ndarray:
    """Window starts (``u.shape + (out,)``) from samples ``u`` in [0, 1), as PyTorch."""
    if out <= 1:
        return np.full(u.shape + (out,), size - k, dtype=np.int64)
    alpha = (size - k) / (out - 1)
    i = np.arange(out - 1)
    starts = (np.floor((i + u[..., None]) * alpha) - np.floor(u[..., None] * alpha)).astype(np.int64)
    return np.concatenate([starts, np.full(u.shape + (1,), size - k, dtype=np.int64)], axis=-1)


def _fractional_ints(value: Any, d: int, what: str, position: int, name: str) -> tuple:
    """``kernel_size`` or ``output_size`` as PyTorch's ``fractional_max_pool{d}d`` takes it:
    one int for every dim or exactly ``d`` ints, with its argument parser's and kernel's errors."""
    if _is_index(value) and not isinstance(value, Tensor):
        return (int(value),) * d
    where = f"{name}(): argument '{what}' (position {position}) must be tuple of ints"
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{where}, not {type(value).__name__}")
    for i, v in enumerate(value):
        if not _is_index(v):
            raise TypeError(f"{where}, but found element of type {type(v).__name__} at pos {i}")
    if len(value) != d:
        raise RuntimeError(
            f"{name}: {what} must either be a single Int or tuple of {('Ints', 'three Ints')[d - 2]}"
        )
    return tuple(int(v) for v in value)


def _ratio_size(d: int, spatial: tuple, output_ratio: Any) -> tuple:
    """The output size ``output_ratio`` gives, as PyTorch's Python wrappers read it: the 2-d
    one takes a sequence only (``len`` of a number is a ``TypeError``), the 3-d one a number too."""
    if d == 2:
        if len(output_ratio) > 2:
            raise ValueError(
                "fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints."
            )
    ratio = tuple(output_ratio) if isinstance(output_ratio, Iterable) else (output_ratio,) * d
    if len(ratio) < d:
        raise IndexError("tuple index out of range")
    return tuple(int(n * r) for n, r in zip(spatial, ratio))


def _check_fractional_size(d: int, shape: tuple, kernel: tuple, out: tuple) -> None:
    """PyTorch's kernel checks of the output size: windows that fit (the 3-d kernel needs one
    element to spare), no negative size."""
    spatial = shape[-d:]
    names = ("time", "height", "width")[-d:]
    for n, k, o, what in zip(spatial, kernel, out, names):
        if o + k - 1 > n - (d == 3):
            op = "fractional_max_pool3d_out" if d == 3 else "fractional_max_pool2d"
            raise RuntimeError(f"{op}(): pool {what} {k} too large relative to input {what} {n}")
    if min(out) < 0:
        size = list(shape[:-d]) + list(out)
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {size}")


def _fractional_max_pool(
    d: int,
    input: Tensor,
    kernel_size: Any,
    output_size: Any,
    output_ratio: Any,
    return_indices: bool,
    _random_samples: Tensor | None,
) -> Any:
    name = f"fractional_max_pool{d}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        output_size = _ratio_size(d, tuple(input.shape[-d:]), output_ratio)
    out = _fractional_ints(output_size, d, "output_size", 3, name)
    kernel = _fractional_ints(kernel_size, d, "kernel_size", 2, name)
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, but got: {list(input.shape)}")
    unbatched = input.ndim == d + 1
    x = input.unsqueeze(0) if unbatched else input
    spatial = tuple(x.shape[2:])
    _check_fractional_size(d, tuple(input.shape), kernel, out)
    n_, c = x.shape[0], x.shape[1]
    if _random_samples is None:
        u = _uniform_array(_gen(None), (n_, c, d), x._data.dtype, 0.0, 1.0)  # PyTorch's torch.rand
    else:
        u = _random_samples._data.reshape(n_, c, d)
    flat = np.zeros((n_, c) + (1,) * (2 * d), dtype=np.int64)
    for i in range(d):  # u[..., 0] is the last spatial dim (width), as PyTorch
        starts = _fractional_starts(spatial[i], kernel[i], out[i], u[..., d - 1 - i])
        shape = [n_, c] + [1] * (2 * d)
        shape[2 + i] = out[i]
        pos = starts.reshape(shape) + np.arange(kernel[i]).reshape(
            [1] * (2 + d + i) + [kernel[i]] + [1] * (d - 1 - i)
        )
        flat = flat * spatial[i] + pos
    flat = np.broadcast_to(flat, (n_, c) + out + kernel).reshape(
        n_, c, int(np.prod(out)), int(np.prod(kernel))
    )
    windows = x.reshape(n_, c, -1).gather(2, Tensor._make(flat.reshape(n_, c, -1).copy()))
    values, arg = windows.reshape(*flat.shape).max(3)
    values = reads_inputs(values.reshape(n_, c, *out))  # PyTorch's backward reads the input
    if unbatched:
        values = values[0]
    if not return_indices:
        return values
    idx = np.take_along_axis(flat, arg._data[..., None], axis=3)[..., 0].reshape((n_, c) + out)
    return values, Tensor._make(idx[0] if unbatched else idx)


def fractional_max_pool2d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """Fractional max pooling over ``(N, C, H, W)``: ``kernel_size`` windows at pseudo-random
    starts chosen so that the output is ``output_size`` (or ``output_ratio`` times the input)."""
    return _fractional_max_pool(
        2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples
    )


def fractional_max_pool3d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """Fractional max pooling over ``(N, C, D, H, W)``; see :func:`fractional_max_pool2d`."""
    return _fractional_max_pool(
        3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples
    )


def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple:
    """:func:`fractional_max_pool2d` returning ``(values, indices)``."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple:
    """:func:`fractional_max_pool3d` returning ``(values, indices)``."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)
