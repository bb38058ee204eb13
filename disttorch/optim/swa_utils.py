"""Stochastic weight averaging and EMA, as ``torch.optim.swa_utils``: ``AveragedModel``
(keeps a running average of a model's parameters), the averaging functions, ``update_bn``
(recomputes batch-norm statistics for averaged weights) and the ``SWALR`` schedule."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from typing import Any

import numpy as np

from .._dtype import FLOAT_KINDS
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer, _scalar_dtype

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]

PARAM_LIST = Sequence[Tensor]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _count(num_averaged: Any) -> float:
    return float(num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged)


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """``fn(ema_params, params, n)``: ``ema = decay ema + (1 - decay) p`` in place, for lists."""
    _check_decay(decay)

    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        for e, p in zip(ema_param_list, current_param_list):
            e._data[...] = (
                e._data + (p._data - e._data) * (1 - decay)
                if e._data.dtype.kind in FLOAT_KINDS + "c"
                else e._data * decay + p._data * (1 - decay)
            )
            e._bump_version()

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """``fn(avg_params, params, n)``: the running mean ``avg += (p - avg) / (n + 1)`` in place."""

    def swa_update(
        averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST, num_averaged: Any
    ) -> None:
        # 1 / (n + 1) of an integer tensor is in the default dtype (float32), as in PyTorch
        w = float(np.asarray(1 / (_count(num_averaged) + 1), dtype=_scalar_dtype()))
        for a, p in zip(averaged_param_list, current_param_list):
            a._data[...] = a._data + (p._data - a._data) * w
            a._bump_version()

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """``fn(ema, p, n) -> decay ema + (1 - decay) p``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """``fn(avg, p, n) -> avg + (p - avg) / (n + 1)``."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are an average of the ``model``'s parameters at
    every ``update_parameters(model)`` call: the running mean (SWA) by default, or
    ``avg_fn(avg, p, n)`` per tensor, or ``multi_avg_fn(avg_list, p_list, n)`` in place (e.g.
    ``get_ema_multi_avg_fn(0.999)`` for an EMA). With ``use_buffers=True`` buffers are
    averaged too; otherwise they are copied. ``n_averaged`` (an int64 buffer) counts updates.
    ``device`` is accepted for PyTorch compatibility (everything lives on the CPU).
    """

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable | None = None,
        multi_avg_fn: Callable | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        self.register_buffer("n_averaged", Tensor._make(np.array(0, dtype=np.int64)))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers with ``use_buffers``) into the average."""
        if self.use_buffers:
            mine = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            mine, theirs = list(self.module.parameters()), list(model.parameters())
        mine = [p.detach() for p in mine]
        theirs = [p.detach() for p in theirs]
        n = int(self.n_averaged.item())
        if n == 0:
            for a, p in zip(mine, theirs):
                a._data[...] = p._data
                a._bump_version()
        elif self.multi_avg_fn is not None:
            self.multi_avg_fn(mine, theirs, self.n_averaged)
        else:  # a per-tensor function; PyTorch's CPU default is get_swa_avg_fn()
            avg_fn = self.avg_fn or get_swa_avg_fn()
            for a, p in zip(mine, theirs):
                a._data[...] = avg_fn(a, p, self.n_averaged)._data
                a._bump_version()
        if not self.use_buffers:
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.detach()._data[...] = b_model._data
        self.n_averaged._data[...] = n + 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of every batch-norm layer of ``model`` with one pass
    over ``loader`` (cumulative averages; batches that are lists/tuples give their first
    element as the input). ``device`` is accepted for PyTorch compatibility."""
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    with no_grad():
        for inp in loader:
            if isinstance(inp, (list, tuple)):
                inp = inp[0]
            model(inp)
    for m, momentum in momenta.items():
        m.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` epochs (``"cos"`` or
    ``"linear"``), then hold it; for the SWA phase of training."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list,
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        for lr, g in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            g["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, strategy: str) -> None:
        self._anneal_strategy = strategy
        self.anneal_func = self._cosine_anneal if strategy == "cos" else self._linear_anneal

    def get_lr(self) -> list:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev)]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
