"""SGD's and Adam's steps on bfloat16/float16 parameters, as ``torch.optim``'s single-tensor
loops take them: PyTorch's CPU kernels compute each tensor operation in float32 and round its
result to the parameter's dtype, with some scalars (an ``alpha``, a number added) rounded to
that dtype first. disttorch's own tensor operations follow those rules, so the step is run
with them, on tensors over the parameter's and the state's arrays (updated in place)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["is_16_bit", "sgd_16_bit", "adam_16_bit"]


def is_16_bit(a: np.ndarray) -> bool:
    """Whether ``a`` holds bfloat16 or float16 values."""
    return a.dtype.itemsize == 2 and a.dtype.kind in "fV"


def sgd_16_bit(group: dict, param: np.ndarray, grad: np.ndarray, state: Any, lr: float, wd: float) -> None:
    """``torch.optim.SGD``'s step on one 16-bit parameter."""
    p, g, m = Tensor._make(param), Tensor._make(grad), group["momentum"]
    with grad_mode.no_grad():
        if wd:
            g = g.add(p, alpha=wd)
        if m:
            buf = state.get("momentum_buffer")
            if buf is None:
                state["momentum_buffer"] = np.array(g._data)
                b = g
            else:
                b = Tensor._make(buf).mul_(m).add_(g, alpha=1 - group["dampening"])
            g = g.add(b, alpha=m) if group["nesterov"] else b
        p.add_(g, alpha=-lr)


def adam_16_bit(
    group: dict, param: np.ndarray, grad: np.ndarray, state: Any, step: float, lr: float, b1: float, b2: float
) -> None:
    """``torch.optim.Adam``'s (and AdamW's) step on one 16-bit parameter, its state arrays
    made."""
    p, g, wd = Tensor._make(param), Tensor._make(grad), group["weight_decay"]
    m, v = Tensor._make(state["exp_avg"]), Tensor._make(state["exp_avg_sq"])
    with grad_mode.no_grad():
        if wd:
            if group.get("decoupled_weight_decay", False):
                p.mul_(1 - lr * wd)
            else:
                g = g.add(p, alpha=wd)
        m.lerp_(g, 1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        if group["amsgrad"]:
            v = Tensor._make(state["max_exp_avg_sq"])
            np.maximum(v._data, state["exp_avg_sq"], out=v._data)
        denom = (v.sqrt() / (1 - b2**step) ** 0.5).add_(group["eps"])
        p.addcdiv_(m, denom, value=-lr / (1 - b1**step))
