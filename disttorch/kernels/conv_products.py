"""The shifted products of :mod:`disttorch.kernels.conv_shifted` for one block of images, as
compiled loops (numba, the ``fast`` extra) that call BLAS themselves and never take the GIL.

The NumPy form makes one ``np.matmul`` per kernel offset and one addition into the block's
sum after each, some 20 calls a block; every call lets go of the GIL and takes it back, and
on several threads each such hand-back waits for the GIL while another thread runs Python.
Here a thread's whole block is one call. Each product is the ``gemm`` NumPy's ``matmul``
makes for the same operands, and the additions go in the same order, so the numbers are the
same bit for bit (``tests/nn/test_conv_compiled.py``).

- ``forward(wk, xb, shifts, g, p, kind, address)``: ``g[i, q] = sum_k wk[k, q] @ xb[i, q, :,
  s_k : s_k + L]`` for every image ``i`` and group ``q`` (``L = g.shape[-1]``), each product
  after the first made in ``p`` and added to ``g``.
- ``weight(gb, xb, shifts, p, gw, kind, address)``: ``gw[k] += sum_i gb[i] @ xb[i, :, :, s_k
  : s_k + L]ᵀ``, the images' products made in ``p`` and summed in image order.
- ``pad_planes(x, sources, lo, width, flat)``: a block's images zero-padded into the flat
  input, in one call (the NumPy form makes one per border of each dim, each taking the GIL).
- ``crop_planes(grid, kept, width, bias, out)``: the valid outputs of a block's computed
  grid, plus the bias, in one call; ``spread_planes(g, kept, width, grid)`` the reverse, for
  the weight gradient.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

from .cblas_gemm import gemm
from .gemm_parts import NO_TRANS, TRANS
from .jit import njit

__all__ = ["crop_planes", "forward", "pad_planes", "spread_planes", "weight"]


@njit()
def forward(wk, xb, shifts, g, p, kind, address):  # pragma: no cover - compiled
    images, groups, rows, length = g.shape
    depth, size = wk.shape[3], g.itemsize
    ldb = xb.strides[2] // size
    for i in range(images):
        for q in range(groups):
            plane = xb.ctypes.data + i * xb.strides[0] + q * xb.strides[1]
            for k in range(len(shifts)):
                into = g[i, q] if k == 0 else p[i, q]
                gemm(
                    kind, address, NO_TRANS, NO_TRANS, rows, length, depth,
                    wk[k, q].ctypes.data, depth, plane + shifts[k] * size, ldb, into.ctypes.data, length,
                )  # fmt: skip
                if k:
                    _add_into(g[i, q].ravel(), into.ravel())


@njit()
def weight(gb, xb, shifts, p, gw, kind, address):  # pragma: no cover - compiled
    images, groups, rows, length = gb.shape
    depth, size = gw.shape[3], gb.itemsize
    ldb = xb.strides[2] // size
    for k in range(len(shifts)):
        for i in range(images):
            for q in range(groups):
                plane = xb.ctypes.data + i * xb.strides[0] + q * xb.strides[1]
                gemm(
                    kind, address, NO_TRANS, TRANS, rows, depth, length,
                    gb[i, q].ctypes.data, length, plane + shifts[k] * size, ldb, p[i, q].ctypes.data, depth,
                )  # fmt: skip
        total = p[0].copy().ravel()
        for i in range(1, images):
            _add_into(total, p[i].ravel())
        _add_into(gw[k].ravel(), total)


@njit()
def pad_planes(x, sources, lo, width, flat):  # pragma: no cover - compiled
    """``flat[p]``: plane ``p`` of ``x`` (``planes, rows, inner``) zero-padded, as rows of
    ``width`` elements and zeros after them to the end: padded row ``r`` is ``lo`` zeros,
    row ``sources[r]`` of ``x[p]`` and zeros, or only zeros where ``sources[r]`` is -1."""
    planes, length = flat.shape
    inner, used = x.shape[2], len(sources) * width
    for p in range(planes):
        for r in range(len(sources)):
            base, source = r * width, sources[r]
            for k in range(width):
                j = k - lo
                flat[p, base + k] = x[p, source, j] if source >= 0 and 0 <= j < inner else 0
        for k in range(used, length):
            flat[p, k] = 0


@njit()
def crop_planes(grid, kept, width, bias, out):  # pragma: no cover - compiled
    """``out[p, r] = grid[p, kept[r] * width : ... + out.shape[2]]`` (``grid``: ``planes,
    rows * width``; ``out``: ``planes, len(kept), valid width``), plus ``bias[p % len(bias)]``
    when ``bias`` is not empty."""
    planes, rows, inner = out.shape
    channels = len(bias)
    for p in range(planes):
        for r in range(rows):
            base = kept[r] * width
            if channels:
                b = bias[p % channels]
                for k in range(inner):
                    out[p, r, k] = grid[p, base + k] + b
            else:
                for k in range(inner):
                    out[p, r, k] = grid[p, base + k]


@njit()
def spread_planes(g, kept, width, grid):  # pragma: no cover - compiled
    """``grid[p, kept[r] * width : ... + g.shape[2]] = g[p, r]`` (the shapes of
    :func:`crop_planes`); the rest of ``grid`` is left as it is."""
    planes, rows, inner = g.shape
    for p in range(planes):
        for r in range(rows):
            base = kept[r] * width
            for k in range(inner):
                grid[p, base + k] = g[p, r, k]


@njit()
def _add_into(into, values):  # pragma: no cover - compiled
    """``into += values`` for 1-D arrays: the loops above pass ``ravel()`` views of slices of
    C-contiguous arrays (an augmented assignment to a slice, ``g[i, q] += p[i, q]``, would
    copy the slice back onto itself)."""
    for j in range(into.size):
        into[j] += values[j]
