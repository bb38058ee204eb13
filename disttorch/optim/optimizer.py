"""``Optimizer``: parameter groups with per-group options, per-parameter state, hooks,
``zero_grad``, ``step(closure)`` and ``state_dict``/``load_state_dict`` in PyTorch's layout.

The per-parameter state holds Tensors (``step`` is a 0-d float32 tensor, as in PyTorch),
so a state dict moves between disttorch and PyTorch once its tensors are converted.
Subclasses either override ``step`` or implement ``_update(group, param, grad, state)`` on
NumPy arrays: ``state`` then reads each state tensor as its array (in-place changes go
into the tensor) and stores new arrays as tensors. Updates happen on ``param._data``
(never recording a graph) and bump the parameter's version counter, so the same update
runs bit-for-bit on every rank.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator
from copy import deepcopy
from itertools import chain
from typing import Any, Optional

import numpy as np

from .. import _faults
from .._dtype import FLOAT_KINDS, float64, get_default_dtype
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from ..autograd.profiler import record_function
from ..kernels.threads import parallel_for, parts_for
from ..ops.complex import real_pairs
from ..utils import trace
from ..utils.hooks import RemovableHandle
from ._16_bit import is_16_bit

__all__ = [
    "Optimizer",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
    "required",
    "swap_in_optimizer_params_and_state",
]


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()

#: Training steps are fault-injection events (disttorch._faults) only when DISTTORCH_FAULT asks for it.
_FAULTS = bool(os.environ.get("DISTTORCH_FAULT"))

_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs) -> None or (args, kwargs)`` before every
    optimiser's ``step``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` after every optimiser's ``step``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _with_step_hooks(step: Callable) -> Callable:
    """Run the global and per-optimiser step hooks around ``step`` (once, even when a
    subclass's ``step`` calls ``super().step()``). A subclass instance that never ran
    ``Optimizer.__init__`` (a wrapper such as accelerate's ``AcceleratedOptimizer``) has no
    hooks of its own and, as in PyTorch, runs none: the optimiser it wraps runs them."""

    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        if getattr(self, "_in_step", False) or "_optimizer_step_pre_hooks" not in self.__dict__:
            return step(self, *args, **kwargs)
        if not trace.profiling():
            return _hooked_step(self, step, args, kwargs)
        with record_function(f"Optimizer.step#{type(self).__name__}.step"):  # PyTorch's range
            return _hooked_step(self, step, args, kwargs)

    wrapper.hooked = True  # type: ignore[attr-defined]
    return wrapper


def _hooked_step(self: Optimizer, step: Callable, args: tuple, kwargs: dict) -> Any:
    """``step(self, *args, **kwargs)`` between the global and the optimiser's own step hooks."""
    for pre in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
        result = pre(self, args, kwargs)
        if result is not None:
            if isinstance(result, tuple) and len(result) == 2:
                args, kwargs = result
            else:
                raise RuntimeError(
                    f"{step} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                )
    self._in_step = True
    try:
        out = step(self, *args, **kwargs)
    finally:
        self._in_step = False
    for post in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
        post(self, args, kwargs)
    return out


def _scalar_dtype() -> np.dtype:
    """The dtype of 0-d state such as ``step``: float64 under a float64 default dtype, else
    float32 (as PyTorch)."""
    return np.dtype(np.float64 if get_default_dtype() is float64 else np.float32)


def _scalar(x: Any) -> float:
    """A Python float from a float or a one-element tensor (``lr`` may be a Tensor)."""
    return float(x.item() if isinstance(x, Tensor) else x)


def _shares(sizes: list, n: int) -> list:
    """The indices of ``sizes`` dealt into at most ``n`` shares of about equal total: the
    largest first, each to the lightest share so far (one parameter's update is never cut,
    so every parameter gets the same numbers whatever the thread count)."""
    shares: list = [[] for _ in range(max(1, min(n, len(sizes))))]
    totals = [0] * len(shares)
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        lightest = totals.index(min(totals))
        shares[lightest].append(i)
        totals[lightest] += sizes[i]
    return shares


class _Piece:
    """One ``_update`` call's share of a parameter: all of it (``part`` ``None``), or the
    flat range ``part`` of it, its gradient and its state arrays."""

    __slots__ = ("param", "grad", "state", "pairs", "part", "size", "step")

    def __init__(
        self, param: np.ndarray, grad: np.ndarray, state: dict, pairs: bool, part=None, step=None
    ) -> None:
        self.param, self.grad, self.state, self.pairs, self.part, self.step = (
            param,
            grad,
            state,
            pairs,
            part,
            step,
        )
        self.size = param.size if part is None else part.stop - part.start

    def arrays(self) -> tuple:
        """``(param, grad, state)`` as ``_update`` takes them."""
        if self.part is None:
            return self.param, self.grad, _ArrayState(self.state, self.pairs)
        flat = self.param.reshape(-1)
        return (
            flat[self.part],
            self.grad.reshape(-1)[self.part],
            _ArrayState(self.state, part=self, whole=flat.size),
        )


class _SharedStep:
    """The step count of a parameter updated in pieces: the first piece to ask adds one."""

    def __init__(self) -> None:
        self.lock, self.value = threading.Lock(), None


#: Units of work (see ``kernels/threads.py``) that each parameter's share of a split step
#: loses to the other thread's Python (the GIL) and that splitting does not win back: on 2
#: cores, Adam's step of the GPT of ``benchmarks/train_step.py`` (30 parameters, 430k
#: elements) took 933 us on one thread and 1169 split over two, the MLP's (6 parameters, 535k
#: elements) 733 and 625; SGD's momentum step of two parameters of 500k, 156 and 105.
PYTHON_UNITS_PER_PARAMETER = 1 << 16


def _pieces(jobs: list, n: int, elementwise: bool) -> list:
    """The ``_Piece`` s of a step's ``jobs`` for ``n`` threads: a parameter larger than an
    ``n``-th of all of them is cut into about that much when the update is element-wise and
    its state exists (made whole on the first step), all of it contiguous. A 16-bit one
    stays whole: its update rounds the last elements of the flat range apart (see
    ``_16_bit``)."""
    target = -(-sum(job[1].size for job in jobs) // n) if n > 1 and elementwise else 0
    pieces = []
    for _, param, grad, state, pairs in jobs:
        whole = is_16_bit(param) or pairs or not _contiguous(param, state)
        if not (target and param.size > target and state) or whole:
            pieces.append(_Piece(param, grad, state, pairs))
            continue
        k, grad, step = -(-param.size // target), np.ascontiguousarray(grad), _SharedStep()
        for i in range(k):
            part = slice(param.size * i // k, param.size * (i + 1) // k)
            pieces.append(_Piece(param, grad, state, pairs, part, step))
    return pieces


def _contiguous(param: np.ndarray, state: dict) -> bool:
    """Whether ``param`` and its state arrays of its size are C-contiguous (flat views of
    them are then pieces of the arrays themselves)."""
    arrays = [v._data if isinstance(v, Tensor) else v for v in state.values()]
    return param.flags.c_contiguous and all(
        a.flags.c_contiguous for a in arrays if isinstance(a, np.ndarray) and a.size == param.size
    )


class _ArrayState:
    """The NumPy face of one parameter's state for ``_update``: reading a tensor entry gives
    its array (changes in place reach the tensor), storing an array stores a tensor.

    For a complex parameter (``pairs``) the update sees real ``(..., 2)`` views, as PyTorch's
    optimisers ``view_as_real`` them: complex state reads as such a view, and a float array of
    pairs is stored as the complex tensor it stands for (PyTorch's state layout)."""

    __slots__ = ("_s", "_pairs", "_piece", "_whole")

    def __init__(
        self, state: dict, pairs: bool = False, part: Optional[_Piece] = None, whole: int = 0
    ) -> None:
        self._s = state
        self._pairs = pairs
        self._piece, self._whole = part, whole  # a piece of a parameter of ``whole`` elements

    def __bool__(self) -> bool:
        return bool(self._s)

    def __contains__(self, key: str) -> bool:
        return key in self._s

    def __getitem__(self, key: str) -> Any:
        v = self._s[key]
        v = v._data if isinstance(v, Tensor) else v
        if self._piece is not None and isinstance(v, np.ndarray) and v.ndim and v.size == self._whole:
            return v.reshape(-1)[self._piece.part]
        return real_pairs(v) if self._pairs and isinstance(v, np.ndarray) and v.dtype.kind == "c" else v

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self._s else default

    def __setitem__(self, key: str, value: Any) -> None:
        if self._piece is not None:
            raise RuntimeError(f"{key!r}: an update in pieces may not make state (element-wise updates only)")
        if self._pairs and isinstance(value, np.ndarray) and value.ndim and value.shape[-1] == 2:
            value = np.ascontiguousarray(value).view(
                np.complex64 if value.dtype == np.float32 else np.complex128
            )
            value = value[..., 0]
        if isinstance(value, np.ndarray):
            old = self._s.get(key)
            if isinstance(old, Tensor) and old._data.shape == value.shape and old._data.dtype == value.dtype:
                if old._data is not value:
                    old._data[...] = value
                return
            value = Tensor._make(value)
        self._s[key] = value

    def next_step(self) -> float:
        """Add one to the 0-d ``step`` tensor (created at 0) and return its value (once for
        all the pieces of a parameter)."""
        if self._piece is not None:
            shared = self._piece.step
            with shared.lock:
                if shared.value is None:
                    shared.value = _ArrayState(self._s).next_step()
                return shared.value
        if "step" not in self._s:
            self["step"] = np.zeros((), _scalar_dtype())
        step = self["step"]
        step += 1
        return float(step)


class Optimizer:
    """Base class of all optimisers.

    Args:
        params: an iterable of tensors, of ``(name, tensor)`` pairs (e.g.
            ``model.named_parameters()``), or of dicts defining parameter groups
            (``{"params": [...], "lr": 0.1}``).
        defaults: default values of the options, used where a group does not set them.
    """

    def __init__(self, params: Iterable[Any], defaults: dict) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of "
                f"Tensors or dicts, but got {params.type()}"
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _with_step_hooks(step)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            self.__dict__.setdefault(name, OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            if i:
                lines.append("")  # a blank line between groups, as PyTorch's
            lines.append(f"Parameter Group {i}")
            for k in sorted(k for k in g if k != "params"):
                lines.append(f"    {k}: {g[k]}")
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options (e.g. a layer to fine-tune)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a "
                "list instead."
            )
        params = [params] if isinstance(params, Tensor) else list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        group = dict(param_group, params=params)
        if names:
            if len(names) != len(params):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are missing"
                )
            group["param_names"] = names
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}"
                )
            if not self.defaults.get("differentiable") and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):  # (PyTorch warns, and steps each copy)
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause an "
                "error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        existing = set()
        for g in self.param_groups:
            existing.update(id(p) for p in g["params"])
            if ("param_names" in g) != ("param_names" in group):
                which = "with names" if "param_names" in group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if any(id(p) in existing for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimised parameters (to None by default, else to 0)."""
        if trace.profiling():
            with record_function(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):  # PyTorch's range
                return self._reset_grads(set_to_none)
        self._reset_grads(set_to_none)

    def _reset_grads(self, set_to_none: bool) -> None:
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad = p.grad.detach()
                    p.grad._data.fill(0)
                    p.grad._bump_version()

    # ---------------------------------------------------------------- hooks
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None or (args, kwargs)`` before each ``step``."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` after each ``step``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _add_hook(hooks: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` before ``state_dict`` builds the dict."""
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> None or new state_dict`` after ``state_dict``."""
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> None or new state_dict`` before loading."""
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` after ``load_state_dict``."""
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---------------------------------------------------------------- stepping
    @_with_step_hooks
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; ``closure`` re-evaluates the loss."""
        if type(self)._update is Optimizer._update:
            raise NotImplementedError(f"{type(self).__name__} defines neither step nor _update")
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        if _FAULTS:
            _faults.maybe_inject("step")
        start = trace.begin("optimizer.step")
        for group in self.param_groups:
            jobs = []
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = _dense_grad(p.grad, p)
                if group.get("maximize", False):
                    grad = -grad
                state = self.state.get(p)
                if state is None:
                    state = {}
                param = p._data
                pairs = param.dtype.kind == "c"
                if pairs:  # as PyTorch: real and imaginary parts update apart
                    param, grad = real_pairs(param), real_pairs(np.asarray(grad))
                jobs.append((p, param, grad, state, pairs))

            # the parameters' updates are independent: split over the op's threads (foreach),
            # in shares of about equal size; an element-wise update may cut a large parameter
            # (only when the step is worth splitting: cutting costs a few microseconds a piece,
            # and each parameter's Python, which the threads run in turns, does not split)
            size = sum(job[1].size for job in jobs)
            work = self._update_units * size
            rows = size if self._elementwise_update else len(jobs)
            threads = parts_for(rows, work - PYTHON_UNITS_PER_PARAMETER * len(jobs))
            pieces = _pieces(jobs, threads, self._elementwise_update)
            shares = _shares([piece.size for piece in pieces], threads)

            def update(
                first: int, last: int, group: dict = group, pieces: list = pieces, shares: list = shares
            ) -> None:
                for share in shares[first:last]:
                    for i in share:
                        self._update(group, *pieces[i].arrays())

            parallel_for(len(shares), update, work=work)
            for p, _, _, state, _ in jobs:
                if state and p not in self.state:  # no entry for stateless updates (plain SGD)
                    self.state[p] = {k: _laid_out_as(p, v, k) for k, v in state.items()}
                p._bump_version()
        trace.end("optimizer.step", start, timeline_only=True)
        return loss

    #: Whether ``_update`` treats the parameter, its gradient and every state array of its
    #: shape element by element, changing no other state than through ``state.next_step()``
    #: (SGD, Adam): then a large parameter's update may be cut into pieces, once its state exists.
    _elementwise_update = False

    #: Units of work (see ``kernels/threads.py``) of ``_update`` per element of a parameter,
    #: which decide whether a step splits over the op's threads: some four passes over memory.
    _update_units = 4

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: _ArrayState) -> None:
        raise NotImplementedError

    # ---------------------------------------------------------------- checkpoints
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``, the
        parameters numbered in group order as PyTorch does; state tensors are shared, not copied."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index: dict[int, int] = {}
        groups = []
        start = 0
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            # (a parameter twice in a group takes its last position, as PyTorch's mapping)
            index.update({id(p): i for i, p in enumerate(g["params"], start) if id(p) not in index})
            packed["params"] = [index[id(p)] for p in g["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore options and per-parameter state saved by ``state_dict`` (of disttorch, or of
        PyTorch once its tensors are converted); floating state is cast to the parameter's
        dtype, ``step`` kept as saved."""
        state_dict = dict(state_dict)
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, saved in zip(self.param_groups, saved_groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match "
                    "the size of optimizer's group"
                )
        by_index = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in self.param_groups),
            )
        )
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in by_index:
                state[by_index[k]] = _cast_state(by_index[k], v)
            else:
                state[k] = v
        groups = []
        for mine, saved in zip(self.param_groups, saved_groups):
            saved["params"] = mine["params"]
            if "param_names" in mine and "param_names" not in saved:
                saved["param_names"] = mine["param_names"]
            groups.append(saved)
        self.__setstate__({"state": state, "param_groups": groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(
    optimizer: Optimizer, swapin_parameters: dict, swapin_optim_state: dict
) -> Iterator[None]:
    """Within the context, ``optimizer`` works on the tensors of ``swapin_parameters`` (in
    the order of its own parameters) with the state and group options of
    ``swapin_optim_state`` (a ``state_dict()``-shaped dict); its own parameters, groups and
    state come back on exit. In-place updates reach the swapped-in tensors and state
    tensors; other changes to the state during the context are dropped."""
    params = list(swapin_parameters.values())
    n = sum(len(g["params"]) for g in optimizer.param_groups)
    if len(params) != n:
        raise ValueError(f"swapin_parameters has {len(params)} tensors but the optimizer has {n} parameters")
    saved_groups = swapin_optim_state["param_groups"]
    if len(saved_groups) != len(optimizer.param_groups):
        raise ValueError(
            f"swapin_optim_state has {len(saved_groups)} param groups but the optimizer has "
            f"{len(optimizer.param_groups)}"
        )
    saved_state = swapin_optim_state["state"]
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        state: defaultdict = defaultdict(dict)
        it = iter(params)
        for live, saved in zip(optimizer.param_groups, saved_groups):
            group_params = [next(it) for _ in live["params"]]
            if len(saved["params"]) != len(group_params):
                raise ValueError(
                    "a param group of swapin_optim_state does not match the size of the optimizer's group"
                )
            live["params"] = group_params
            live.update({k: v for k, v in saved.items() if k != "params"})
            for p, pid in zip(group_params, saved["params"]):
                state[p] = dict(saved_state.get(pid, {}))
        optimizer.state = state
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state


def _dense_grad(grad: Tensor, param: Tensor) -> np.ndarray:
    """The gradient as a dense array laid out as ``param`` (a sparse gradient is densified,
    a ``Partial`` DTensor gradient reduced)."""
    if getattr(grad, "is_sparse", False):
        return grad.to_dense()._data
    relaid = getattr(grad, "_piece_laid_out_as", None)
    return grad._data if relaid is None else relaid(param)


def _laid_out_as(param: Tensor, value: Any, key: Any) -> Any:
    """A state tensor of ``param``'s shape laid out as ``param`` is: a ``DTensor``
    parameter's ``exp_avg`` is a ``DTensor`` with its placements, as PyTorch's ``zeros_like``
    makes it (``step`` and tensors of other shapes stay plain)."""
    same_layout = getattr(param, "_same_layout", None)
    if same_layout is None or key == "step" or not isinstance(value, Tensor):
        return value
    return same_layout(value._data) if value._data.shape == param._data.shape else value


def _cast_state(param: Tensor, value: Any, key: Any = None) -> Any:
    """A loaded state value as this library keeps it: tensors copied (``step`` as saved,
    other floating tensors in the parameter's dtype, laid out as the parameter), containers
    walked."""
    if isinstance(value, (Tensor, np.ndarray)):
        arr = np.array(value._data if isinstance(value, Tensor) else value)
        if key != "step" and arr.dtype.kind in FLOAT_KINDS:
            arr = arr.astype(param._data.dtype, copy=False)
        return _laid_out_as(param, Tensor._make(arr), key)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value
