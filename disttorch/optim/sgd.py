"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..kernels.fma import fma
from ..kernels.jit import compiled
from ._16_bit import is_16_bit, sgd_16_bit
from ._checks import check_lr, check_nonneg, flag_defaults
from .optimizer import Optimizer, _scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """``p -= lr * d``, with ``d`` the (momentum-averaged) gradient, as ``torch.optim.SGD``.

    With momentum ``m``: ``buf = m * buf + (1 - dampening) * g`` (``buf = g`` at the first
    step) and ``d = g + m * buf`` (Nesterov) or ``d = buf``. ``foreach``/``fused`` are
    accepted and give the same arithmetic.
    """

    _elementwise_update = True

    @property
    def _update_units(self) -> int:  # type: ignore[override]
        """With the compiled momentum step (``kernels/sgd_loops.py``) one pass over memory,
        about a unit an element, plus each parameter's Python, which two threads take in
        turns (the GIL): counted 2, so a step splits from some 800k elements. (On 2 cores,
        split over two threads: an MLP's six parameters, 535k elements, took 136 us against
        123 on one thread; two of 500k, 105 against 156; one of 1M, 102 against 131.)
        Without numba, the NumPy passes' four."""
        return 2 if compiled(_load_loops) is not None else 4

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        check_nonneg("weight_decay", _scalar(weight_decay))
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                **flag_defaults(
                    foreach,
                    maximize,
                    False,
                    differentiable,
                    fused,
                    names=("maximize", "foreach", "differentiable", "fused"),
                ),
            ),
        )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        wd, m = _scalar(group["weight_decay"]), group["momentum"]
        if is_16_bit(param):
            return sgd_16_bit(group, param, grad, state, _scalar(group["lr"]), wd)
        # PyTorch's single-tensor step; each ``a + s * b`` is its kernel's fused multiply-add
        s = param.dtype.type
        buf = state.get("momentum_buffer") if m else None
        if buf is not None and _momentum_in_one_pass(group, param, grad, buf, wd, m):
            return None
        if wd:
            grad = fma(s(wd), param, grad)
        if m:
            if buf is None:
                state["momentum_buffer"] = buf = np.array(grad, dtype=param.dtype)
            else:
                buf *= m
                fma(s(1 - group["dampening"]), grad, buf, out=buf)
            grad = fma(s(m), buf, grad) if group["nesterov"] else buf
        fma(s(-_scalar(group["lr"])), grad, param, out=param)


def _momentum_in_one_pass(
    group: dict, param: np.ndarray, grad: np.ndarray, buf: np.ndarray, wd: float, m: Any
) -> bool:
    """The momentum step above in one compiled pass over memory (``kernels/sgd_loops.py``,
    with numba), the same roundings in the same order; whether it ran (flat float32/float64
    arrays of one dtype, and ``m`` a Python number: ``buf *= m`` multiplies in the array's
    dtype only then, a NumPy float64 in float64)."""
    loops = compiled(_load_loops)
    if loops is None or type(m) not in (int, float) or not _flat(param, grad, buf):
        return False
    s = param.dtype.type
    numbers = (wd, m, 1 - group["dampening"], -_scalar(group["lr"]))
    flat = (a.reshape(-1) for a in (param, grad, buf))  # (views: all contiguous)
    loops.momentum_step(*flat, *(s(x) for x in numbers), bool(group["nesterov"]))
    return True


def _load_loops() -> Any:
    from ..kernels import sgd_loops

    return sgd_loops


def _flat(param: np.ndarray, *others: np.ndarray) -> bool:
    """Whether ``others`` are C-contiguous arrays of the float32/float64 ``param``'s dtype
    and shape, as :mod:`..kernels.sgd_loops` takes them."""
    return (
        param.dtype in (np.float32, np.float64)
        and param.flags.c_contiguous
        and all(
            isinstance(a, np.ndarray)
            and a.dtype == param.dtype
            and a.shape == param.shape
            and a.flags.c_contiguous
            for a in others
        )
    )
