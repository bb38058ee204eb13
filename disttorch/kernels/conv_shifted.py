"""Stride-1 convolution as a sum of shifted matrix products (no im2col copy).

Flatten every zero-padded input plane row-major. Then, for one kernel offset ``k``, the
input element each output position reads sits a fixed distance ``s_k`` further along the
flat buffer, the same for every position. With the output positions laid out on the
padded grid's rows (each row is computed full length; the last ``(kernel - 1) * dilation``
columns of a row read across its edge and are thrown away):

    out[:, p] = sum over k of  W_k @ x[:, p + s_k]        (W_k: O x C, one per offset)

so the convolution is K matrix products, each reading one contiguous slice
``x[:, s_k : s_k + L]`` of the flat input. im2col instead copies the input K times into
columns for a single product; on inputs with many channels that copy is the larger cost,
and backward has to keep it: here backward keeps the flat input, K times smaller.

The weight gradient is the adjoint, one product per offset: ``dW_k = sum_n g_n @ x_n[:, s_k
: s_k + L]ᵀ``, with ``g`` laid out on the same padded rows (zeros in the thrown-away
columns). The input gradient of a stride-1 convolution is another stride-1 convolution
(conv.py), so it runs through :func:`conv` as well.

Both loops take the batch a block of images at a time (:data:`BLOCK_BYTES` of output per
block), so that the K partial products accumulate into an output block that stays in cache.
The op's threads take consecutive ranges of images (``threads.parallel_for``), BLAS held to
one thread each: the products are small, and threading each of them costs more than it
gives. The output is bitwise the same for every thread count; the weight gradient adds
each thread's partial sum in image order (a reduction: deterministic for a thread count).
With the ``fast`` extra a block's products and sums are one compiled call that does not
hold the GIL (:mod:`disttorch.kernels.conv_products`; the same numbers), so the threads do
not queue for the GIL between the products.

With few input channels per group each product is too thin to be fast, and im2col's one
product over ``K * C`` rows wins (conv.py picks by :data:`MIN_CHANNELS`, measured on 3x3
kernels).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np

from .jit import compiled
from .threads import blas_gemm, get_num_threads, matmul, parallel_for, parts_for
from .windows import pad_constant

__all__ = ["MIN_CHANNELS", "conv", "weight_grad"]

MIN_CHANNELS = 16  # input channels per group from which the shifted products beat im2col
BLOCK_BYTES = 1 << 19  # output bytes per block of images: a quarter of a typical L2 cache


class _Layout(NamedTuple):
    """Where everything sits in the flat buffers."""

    padded: tuple  # padded spatial size
    rows: tuple  # the computed output grid: (out[0], *padded[1:])
    out: tuple  # the valid output size
    shifts: list  # flat offset of each kernel element, in the weight's kernel order
    length: int  # L: computed output positions per plane
    tail: int  # zeros after the padded plane, so that every slice stays in range
    sources: np.ndarray  # per row (last dim) of a padded plane: the input row it holds, or -1
    kept: np.ndarray  # per row of a valid output plane: the row of the computed grid it is


def _layout(spatial: tuple, pads: tuple, kernel: tuple, dilation: tuple) -> _Layout:
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(spatial, pads))
    out = tuple(p - d * (k - 1) for p, k, d in zip(padded, kernel, dilation))
    steps = [int(np.prod(padded[i + 1 :])) for i in range(len(padded))]  # row-major strides
    shifts = [sum(o * d * st for o, d, st in zip(offset, dilation, steps)) for offset in np.ndindex(*kernel)]
    rows = (out[0],) + padded[1:]
    length = int(np.prod(rows))
    # Reads past the last plane row come only from the inner dims' offsets.
    tail = sum((k - 1) * d * st for k, d, st in zip(kernel[1:], dilation[1:], steps[1:]))
    return _Layout(
        padded, rows, out, shifts, length, tail, _source_rows(spatial, pads), _kept_rows(out, rows)
    )


def _pad_into(
    flat: np.ndarray, x: np.ndarray, pads: tuple, lay: _Layout, fast: Optional[tuple] = None
) -> None:
    """Write the images ``x`` ``(n, C, *spatial)`` zero-padded and flattened into ``flat``
    ``(n, groups, C/groups, P + tail)``; with ``fast`` (see :func:`_compiled`) and a
    C-ordered ``x``, in one compiled call."""
    n, c = x.shape[:2]
    if fast is not None and x.flags.c_contiguous and x.size:
        planes = x.reshape(n * c, -1, x.shape[-1])
        fast[0].pad_planes(planes, lay.sources, pads[-1][0], lay.padded[-1], flat.reshape(n * c, -1))
        return
    size = int(np.prod(lay.padded))
    rows = flat.reshape(n, c, -1)
    rows[..., size:] = 0
    pad_constant(x, [(0, 0), (0, 0), *pads], 0, out=rows[..., :size].reshape((n, c) + lay.padded))


def _source_rows(spatial: tuple, pads: tuple) -> np.ndarray:
    """For each row (last dim) of a padded plane, the row of the unpadded plane it holds, or
    -1 for a row of padding."""
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(spatial[:-1], pads[:-1]))
    sources = np.full(padded, -1, dtype=np.int64)
    inside = tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial[:-1], pads[:-1]))
    sources[inside] = np.arange(int(np.prod(spatial[:-1]))).reshape(spatial[:-1])
    return sources.reshape(-1)


def _kept_rows(out: tuple, rows: tuple) -> np.ndarray:
    """For each row (last dim) of a valid output plane ``out``, its row in the computed grid
    ``rows`` (the valid outputs are the first ones along every dim)."""
    if len(out) == 1:
        return np.zeros(1, dtype=np.int64)
    return np.ravel_multi_index(np.indices(out[:-1]).reshape(len(out) - 1, -1), rows[:-1])


def _per_offset(w: np.ndarray, groups: int) -> np.ndarray:
    """Weight ``(O, C/groups, *kernel)`` as ``(K, groups, O/groups, C/groups)``."""
    wk = w.reshape(groups, w.shape[0] // groups, w.shape[1], -1)
    return np.ascontiguousarray(np.moveaxis(wk, 3, 0))


def conv(x: np.ndarray, w: np.ndarray, geo: Any, bias: Optional[np.ndarray] = None) -> tuple:
    """``(output (N, O, *out), saved)`` of the stride-1 convolution of ``x`` by ``w``, plus
    ``bias`` ``(O,)`` when given; ``geo`` gives ``pads``, ``dilation``, ``groups`` and
    ``kernel`` (conv.py's geometry). ``saved`` (the flat input and its layout) is what
    :func:`weight_grad` needs.

    Each thread pads its own images into the flat input, and crops each block's computed
    grid into the output (adding the bias) while it is still in cache: nothing runs on one
    thread."""
    groups = geo.groups
    lay = _layout(x.shape[2:], geo.pads, geo.kernel, geo.dilation)
    n, c, o, L = x.shape[0], x.shape[1], w.shape[0], lay.length
    xf = np.empty((n, groups, c // groups, int(np.prod(lay.padded)) + lay.tail), dtype=x.dtype)
    wk = _per_offset(w, groups)
    out = np.empty((n, o) + lay.out, dtype=x.dtype)
    block = _images_per_block(o * L * x.itemsize)
    work = n * o * L * len(lay.shifts)
    fast = _compiled(x.dtype, min(o // groups, L) > 1, n, work)
    shifts = np.array(lay.shifts, dtype=np.int64)
    no_bias = np.empty(0, dtype=x.dtype)

    def images(start: int, stop: int) -> None:
        grid = np.empty((block, groups, o // groups, L), dtype=x.dtype)  # a block's computed rows
        part = np.empty_like(grid)
        for i in range(start, stop, block):
            j = min(i + block, stop)
            xb, g, p = xf[i:j], grid[: j - i], part[: j - i]
            _pad_into(xb, x[i:j], geo.pads, lay, fast)
            if fast:
                fast[0].forward(wk, xb, shifts, g, p, *fast[1:])
            else:
                matmul(wk[0], xb[..., lay.shifts[0] : lay.shifts[0] + L], out=g)
                for wk_k, s in zip(wk[1:], lay.shifts[1:]):
                    matmul(wk_k, xb[..., s : s + L], out=p)
                    g += p
            if fast:
                crop = (g.reshape((j - i) * o, L), lay.kept, lay.rows[-1], no_bias if bias is None else bias)
                fast[0].crop_planes(*crop, out[i:j].reshape((j - i) * o, -1, lay.out[-1]))
                continue
            out[i:j] = g.reshape((j - i, o) + lay.rows)[_valid(lay)]
            if bias is not None:
                out[i:j] += bias.reshape((o,) + (1,) * len(lay.out))

    parallel_for(n, images, work=work)
    return out, (xf, lay)


def weight_grad(g: np.ndarray, saved: tuple, w_shape: tuple, groups: int) -> np.ndarray:
    """Gradient of the weight from the output gradient ``g`` ``(N, O, *out)`` and what
    :func:`conv` saved."""
    xf, lay = saved
    n, o = g.shape[:2]
    L = lay.length
    block = _images_per_block(o * L * g.itemsize)
    parts: list = []
    work = n * o * L * len(lay.shifts)
    fast = _compiled(g.dtype, min(o // groups, w_shape[1]) > 1, n, work)
    shifts = np.array(lay.shifts, dtype=np.int64)

    def images(start: int, stop: int) -> None:
        gw = np.zeros((len(lay.shifts), groups, o // groups, w_shape[1]), dtype=g.dtype)
        part = np.empty((block,) + gw.shape[1:], dtype=g.dtype)
        rows = np.zeros((block, o) + lay.rows, dtype=g.dtype)  # g on the computed grid, 0 elsewhere
        for i in range(start, stop, block):
            j = min(i + block, stop)
            if fast and g.flags.c_contiguous:  # the thrown-away columns stay 0
                grid = rows[: j - i].reshape((j - i) * o, L)
                fast[0].spread_planes(
                    g[i:j].reshape((j - i) * o, -1, lay.out[-1]), lay.kept, lay.rows[-1], grid
                )
            else:
                rows[: j - i][_valid(lay)] = g[i:j]
            gb, xb, p = rows[: j - i].reshape(j - i, groups, o // groups, L), xf[i:j], part[: j - i]
            if fast:
                fast[0].weight(gb, xb, shifts, p, gw, *fast[1:])
                continue
            for k, s in enumerate(lay.shifts):
                matmul(gb, xb[..., s : s + L].swapaxes(-1, -2), out=p)
                gw[k] += p.sum(axis=0)
        parts.append((start, gw))

    parallel_for(n, images, work=work)
    gw = sum(part for _, part in sorted(parts, key=lambda item: item[0]))  # a fixed order
    return np.moveaxis(gw, 0, -1).reshape(w_shape)


def _compiled(dtype: np.dtype, matrices: bool, n: int, work: int) -> Optional[tuple]:
    """``(conv_products, kind, address)`` when the compiled block loops can run this op
    (``kind``, ``address``: NumPy's BLAS ``gemm`` for ``dtype``), else ``None``. They need numba and NumPy's BLAS ``gemm`` for ``dtype``,
    and products whose sides are all longer than one (NumPy multiplies a vector otherwise,
    with other roundings). With several threads, they run only when the op splits by
    images: one that does not lets :func:`threads.matmul` split its products instead."""
    gemm = blas_gemm(dtype) if matrices else None
    if gemm is None or (get_num_threads() > 1 and parts_for(n, work) == 1):
        return None
    loops = compiled(_load_products)
    return None if loops is None else (loops, *gemm)


def _load_products() -> Any:
    from . import conv_products

    return conv_products


def _images_per_block(image_bytes: int) -> int:
    """How many images of ``image_bytes`` each fill :data:`BLOCK_BYTES` (at least one)."""
    return max(1, BLOCK_BYTES // max(1, image_bytes))


def _valid(lay: _Layout) -> tuple:
    """Index of the valid outputs ``(N, O, *out)`` inside the computed grid."""
    return (slice(None), slice(None)) + tuple(slice(0, o) for o in lay.out)
