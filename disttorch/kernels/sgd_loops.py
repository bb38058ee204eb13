"""SGD's momentum step in one pass (numba, the ``fast`` extra): what ``optim/sgd.py`` does in
three or four passes over memory (``buf *= m``, then fused multiply-adds), element by
element with the same roundings, so the same numbers as those passes, in one compiled call
that does not hold the GIL. On 2 cores, a step split over the op's threads as Python parts
queued for the GIL between its passes and was slower than on one thread.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

from .jit import njit
from .jit_intrinsics import fma as _fma

__all__ = ["momentum_step"]


@njit(contract=False)
def momentum_step(param, grad, buf, weight_decay, momentum, keep, neg_lr, nesterov):  # pragma: no cover
    """For flat arrays of one float dtype and numbers of that dtype: ``g = wd * p + g`` (when
    ``weight_decay``), ``buf = keep * g + buf * m``, ``d = m * buf + g`` (Nesterov) or
    ``buf``, ``p = -lr * d + p``; each ``a * b + c`` a fused multiply-add."""
    for i in range(param.size):
        g = grad[i]
        if weight_decay:
            g = _fma(weight_decay, param[i], g)
        b = _fma(keep, g, buf[i] * momentum)
        buf[i] = b
        if nesterov:
            b = _fma(momentum, b, g)
        param[i] = _fma(neg_lr, b, param[i])
