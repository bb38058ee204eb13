"""Small batched matrix products in PyTorch's order of operations.

PyTorch's CPU ``bmm``/``baddbmm`` skip BLAS when a product is small (inner size times
the result's rows times its columns under 400, whatever the batch): each result element
is then ``((0 + a0*b0) + a1*b1) + ...``, one rounding per product and per sum, in the
operands' dtype (float32 for float32). BLAS sums in other orders (and may fuse the
multiply-adds), so its float32 results differ from PyTorch's in the last bits: an
``affine_grid`` point then lands on the other side of a pixel border and
``grid_sample``'s gradient jumps.
"""

from __future__ import annotations

import numpy as np

#: PyTorch's bound on ``inner * rows * columns`` below which ``bmm`` takes its plain loop
SMALL_BMM_WORK = 400


def is_small_bmm(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether ``x @ y`` (both 3-D or more, float or complex) is a product that PyTorch's
    ``bmm`` computes with its plain loop."""
    if x.ndim < 3 or y.ndim < 3 or x.dtype != y.dtype or x.dtype.kind not in "fc":
        return False
    return x.shape[-1] * x.shape[-2] * y.shape[-1] < SMALL_BMM_WORK


def small_bmm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x @ y`` (batch dims broadcast) summed over the inner dim in order, each product
    and sum rounded to the dtype, as PyTorch's ``baddbmm_cpu_kernel``."""
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    out = np.zeros(batch + (x.shape[-2], y.shape[-1]), dtype=x.dtype)
    for k in range(x.shape[-1]):
        out += x[..., :, k, None] * y[..., None, k, :]
    return out
