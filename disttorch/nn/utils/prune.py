"""``disttorch.nn.utils.prune``: pruning a module's tensors by masks, as ``torch.nn.utils.prune``.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, adds the buffer
``<name>_mask`` and a forward pre-hook (the pruning method itself) that sets the plain
attribute ``<name> = <name>_mask * <name>_orig`` before every forward; so gradients reach
the original parameter only where the mask is 1. Pruning the same tensor again combines
the masks through a :class:`PruningContainer` (each new method acts on the entries, or
channels, still unpruned). :func:`remove` makes the pruning permanent.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..._random import rand, rand_like
from ..._tensor import Tensor
from ...autograd import grad_mode
from ..modules.module import Module
from .convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "PruningContainer",
    "Identity",
    "RandomUnstructured",
    "L1Unstructured",
    "RandomStructured",
    "LnStructured",
    "CustomFromMask",
    "identity",
    "random_unstructured",
    "l1_unstructured",
    "random_structured",
    "ln_structured",
    "global_unstructured",
    "custom_from_mask",
    "remove",
    "is_pruned",
]


class BasePruningMethod(ABC):
    """Abstract pruning method: subclasses define ``compute_mask(t, default_mask)`` and the
    class attribute ``PRUNING_TYPE`` (``'unstructured'``, ``'structured'`` or ``'global'``)."""

    _tensor_name: str
    PRUNING_TYPE: str = "unstructured"

    def __call__(self, module: Module, inputs: Any) -> None:
        """Forward pre-hook: recompute the pruned tensor from its original and its mask."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for ``t`` (same shape), given the mask of earlier pruning ``default_mask``."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_mask * <name>_orig`` of ``module``."""
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(
        cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None, **kwargs: Any
    ):
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)``, combined with any
        pruning already there; ``importance_scores`` (default: the tensor) rank the entries."""
        old = [
            (k, hook)
            for k, hook in module._forward_pre_hooks.items()
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name
        ]
        if len(old) > 1:
            raise RuntimeError(f"more than one pruning hook on parameter {name!r} of {module}")
        for k, _ in old:
            del module._forward_pre_hooks[k]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old:
            old_method = old[0][1]
            if isinstance(old_method, PruningContainer):
                old_method.add_pruning_method(method)
                method = old_method
            else:
                method = PruningContainer(old_method, method)
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif tuple(importance_scores.shape) != tuple(orig.shape):
            raise ValueError(
                f"importance_scores should have the same shape as parameter {name} of {module}: "
                f"got {list(importance_scores.shape)}, expected {list(orig.shape)}"
            )
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = Tensor._make(np.ones(orig.shape, dtype=orig._data.dtype))
        else:
            default_mask = Tensor._make(np.array(getattr(module, name + "_mask")._data, order="C"))
        try:
            with grad_mode.no_grad():
                mask = method.compute_mask(importance_scores.detach(), default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None):
        """``t`` times its mask (computed from ``importance_scores``, default ``t``)."""
        scores = t if importance_scores is None else importance_scores
        if default_mask is None:
            default_mask = Tensor._make(np.ones(t.shape, dtype=t._data.dtype))
        with grad_mode.no_grad():
            mask = self.compute_mask(scores.detach(), default_mask=default_mask)
        return t * mask

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes a parameter holding the pruned
        values, ``<name>_orig`` and ``<name>_mask`` are deleted."""
        name = self._tensor_name
        if name + "_orig" not in module._parameters:
            raise ValueError(
                f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
            )
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = weight.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods applied one after another to the same tensor."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1 and not isinstance(args[0], BasePruningMethod):  # an iterable of methods
            args = tuple(args[0])
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method`` (it must prune the same tensor as the others)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is None:
            return
        if not self._pruning_methods:
            self._tensor_name = method._tensor_name
        elif self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed only over what earlier masks kept: the unpruned
        entries (unstructured), the unpruned channels along its ``dim`` (structured), or
        everything (global)."""
        method = self._pruning_methods[-1]
        new_mask = np.array(default_mask._data, dtype=t._data.dtype)
        if method.PRUNING_TYPE == "unstructured":
            slc: Any = default_mask._data == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    "Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` defined."
                )
            dim = method.dim % t.ndim
            keep = default_mask._data.sum(axis=tuple(d for d in range(t.ndim) if d != dim)) != 0
            slc = tuple(keep if d == dim else slice(None) for d in range(t.ndim))
        elif method.PRUNING_TYPE == "global":
            slc = tuple(slice(None) for _ in range(t.ndim))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial = method.compute_mask(
            Tensor._make(t._data[slc]), default_mask=Tensor._make(default_mask._data[slc])
        )
        new_mask[slc] = partial._data
        return Tensor._make(new_mask)


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str):  # type: ignore[override]
        return super().apply(module, name)


def _check_amount(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer"
        )


def _n_to_prune(amount: float | int, size: int) -> int:
    """How many of ``size`` entries ``amount`` (a count or a fraction) prunes."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(
                f"amount={amount} should be smaller than the number of parameters to prune={size}"
            )
        return int(amount)
    return round(amount * size)


def _check_structured(t: Tensor, dim: int) -> None:
    if t.ndim <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. "
            f"Found tensor of shape {tuple(t.shape)} with {t.ndim} dims"
        )
    if not -t.ndim <= dim < t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _zero_flat(default_mask: Tensor, flat_idx: np.ndarray) -> Tensor:
    mask = np.array(default_mask._data, order="C")
    mask.reshape(-1)[flat_idx] = 0
    return Tensor._make(mask)


class RandomUnstructured(BasePruningMethod):
    """Prune ``amount`` (a fraction, or a count) of the entries, chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float | int) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _n_to_prune(self.amount, t.numel())
        if k == 0:
            return Tensor._make(np.array(default_mask._data))
        scores = rand_like(t)._data.reshape(-1)  # as PyTorch: the k largest of rand_like(t) go
        return _zero_flat(default_mask, np.argpartition(-scores, k - 1)[:k])

    @classmethod
    def apply(cls, module: Module, name: str, amount: float | int):  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prune ``amount`` (a fraction, or a count) of the entries with the smallest absolute
    value (of ``importance_scores`` when given)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float | int) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _n_to_prune(self.amount, t.numel())
        if k == 0:
            return Tensor._make(np.array(default_mask._data))
        order = np.argsort(np.abs(t._data).reshape(-1), kind="stable")
        return _zero_flat(default_mask, order[:k])

    @classmethod
    def apply(cls, module: Module, name: str, amount: float | int, importance_scores: Tensor | None = None):  # type: ignore[override]
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t: Tensor, dim: int, keep: np.ndarray, default_mask: Tensor) -> Tensor:
    """Ones on the channels ``keep`` (indices or booleans) along ``dim``, times ``default_mask``."""
    mask = np.zeros(t.shape, dtype=t._data.dtype)
    slc = tuple(keep if d == dim % t.ndim else slice(None) for d in range(t.ndim))
    mask[slc] = 1
    return Tensor._make(mask * default_mask._data.astype(mask.dtype))


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` of the channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float | int, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _n_to_prune(self.amount, size)
        if k == 0:
            return Tensor._make(np.array(default_mask._data))
        scores = rand(size)._data  # as PyTorch: channels scoring above the k-th smallest stay
        keep = scores > np.partition(scores, k - 1)[k - 1]
        return _channel_mask(t, self.dim, keep, default_mask)

    @classmethod
    def apply(cls, module: Module, name: str, amount: float | int, dim: int = -1):  # type: ignore[override]
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune ``amount`` of the channels along ``dim`` with the smallest ``n``-norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float | int, n: Any, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _n_to_prune(self.amount, size)
        if k == 0:
            return Tensor._make(np.array(default_mask._data))
        dim = self.dim % t.ndim
        flat = np.moveaxis(t._data, dim, 0).reshape(size, -1).astype(np.float64)
        if self.n == "fro":
            norms = np.linalg.norm(flat, axis=1)
        else:
            norms = np.linalg.norm(flat, ord=float(self.n), axis=1)
        keep = np.argsort(-norms, kind="stable")[: size - k]
        return _channel_mask(t, dim, keep, default_mask)

    @classmethod
    def apply(  # type: ignore[override]
        cls,
        module: Module,
        name: str,
        amount: float | int,
        n: Any,
        dim: int,
        importance_scores: Tensor | None = None,
    ):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune with a given mask (combined with any earlier one)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise ValueError(
                f"mask has shape {list(self.mask.shape)}, expected {list(default_mask.shape)} (the tensor's)"
            )
        return Tensor._make(default_mask._data * np.asarray(self.mask._data, dtype=default_mask._data.dtype))

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor):  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Apply pruning reparametrization to ``module.<name>`` without pruning anything."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: float | int) -> Module:
    """Prune ``amount`` of the entries of ``module.<name>`` at random; returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(
    module: Module, name: str, amount: float | int, importance_scores: Tensor | None = None
) -> Module:
    """Prune the ``amount`` entries of ``module.<name>`` of smallest absolute value."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: float | int, dim: int) -> Module:
    """Prune ``amount`` of the channels of ``module.<name>`` along ``dim`` at random."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(
    module: Module, name: str, amount: float | int, n: Any, dim: int, importance_scores: Tensor | None = None
) -> Module:
    """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of smallest ``n``-norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(
    parameters: Iterable, pruning_method: type, importance_scores: dict | None = None, **kwargs: Any
) -> None:
    """Prune the ``(module, name)`` pairs of ``parameters`` together, as one vector, with the
    unstructured ``pruning_method(**kwargs)`` (e.g. ``L1Unstructured, amount=0.2``)."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores or {}
    scores = parameters_to_vector(
        [importance_scores.get((m, name), getattr(m, name)).detach() for m, name in parameters]
    )
    default = parameters_to_vector(
        [
            getattr(m, name + "_mask", Tensor._make(np.ones(getattr(m, name).shape, np.float32)))
            for m, name in parameters
        ]
    )
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
            f"Found method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    container = PruningContainer(method)
    final = container.compute_mask(scores, default)
    start = 0
    for m, name in parameters:
        param = getattr(m, name)
        n = param.numel()
        custom_from_mask(m, name, mask=Tensor._make(final._data[start : start + n].reshape(param.shape)))
        start += n


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` with the given ``mask``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent (see :meth:`BasePruningMethod.remove`)."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Module) -> bool:
    """True when ``module`` or one of its submodules has a pruning hook."""
    return any(
        isinstance(hook, BasePruningMethod)
        for _, sub in module.named_modules()
        for hook in sub._forward_pre_hooks.values()
    )
