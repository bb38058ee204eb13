"""``Optimizer``: parameter groups with per-group options, per-parameter state,
``zero_grad``, ``step(closure)`` and ``state_dict``/``load_state_dict``.

Subclasses implement ``_update(group, param, grad, state)`` on NumPy arrays: updates
happen in place on ``param._data`` (never recording a graph) and bump the parameter's
version counter, so the same update runs bit-for-bit on every rank.
"""
from __future__ import annotations

import copy
import os
from collections import defaultdict
from typing import Any, Callable, Iterable

import numpy as np

from .. import _faults
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from ..utils import trace

__all__ = ["Optimizer", "required"]


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()

#: Training steps are fault-injection events (disttorch._faults) only when DISTTORCH_FAULT asks for it.
_FAULTS = bool(os.environ.get("DISTTORCH_FAULT"))


class Optimizer:
    """Base class of all optimisers.

    Args:
        params: an iterable of tensors, or of dicts defining parameter groups
            (``{"params": [...], "lr": 0.1}``).
        defaults: default values of the options, used where a group does not set them.
    """

    def __init__(self, params: Iterable[Any], defaults: dict) -> None:
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(k for k in g if k != "params"):
                lines.append(f"    {k}: {g[k]}")
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options (e.g. a layer to fine-tune)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = {**param_group, "params": params}
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in params) or len({id(p) for p in params}) != len(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimised parameters (to None by default)."""
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad._data.fill(0)
                    p.grad._bump_version()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; ``closure`` re-evaluates the loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        if _FAULTS:
            _faults.maybe_inject("step")
        start = trace.begin("optimizer.step")
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad._data
                if group.get("maximize", False):
                    grad = -grad
                self._update(group, p._data, grad, self.state[p])
                p._bump_version()
        trace.end("optimizer.step", start)
        return loss

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: dict) -> None:
        raise NotImplementedError

    # ---------------------------------------------------------------- checkpoints
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``."""
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {index[id(p)]: {k: (Tensor._make(v.copy()) if isinstance(v, np.ndarray) else v)
                                for k, v in s.items()}
                 for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore options and per-parameter state saved by ``state_dict``."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, saved in zip(self.param_groups, groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match "
                                 "the size of optimizer's group")
        by_index = {}
        for mine, saved in zip(self.param_groups, groups):
            for p, i in zip(mine["params"], saved["params"]):
                by_index[i] = p
            mine.update({k: copy.deepcopy(v) for k, v in saved.items() if k != "params"})
        self.state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            p = by_index[int(i)]
            self.state[p] = {k: (np.array(v._data if isinstance(v, Tensor) else v, dtype=p._data.dtype)
                                 if _is_array_state(v, p) else v)
                             for k, v in s.items()}


def _is_array_state(v: Any, p: Tensor) -> bool:
    data = v._data if isinstance(v, Tensor) else v
    return isinstance(data, np.ndarray) and data.shape == p._data.shape


def _check_impl_flags(foreach: bool | None, fused: bool | None) -> None:
    """Accept PyTorch's implementation switches ``foreach`` and ``fused``: every disttorch
    optimiser updates each parameter with whole-array NumPy operations, so both give the
    same numbers as the default; only their conflict is an error, as in PyTorch."""
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
