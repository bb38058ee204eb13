"""Tensor attributes and storage-shape methods of PyTorch's ``Tensor`` that need the ops:
the conjugate transposes ``H``/``mH``/``adjoint`` (real tensors: plain transposes),
``itemsize``/``nbytes``, ``char()``, the device answers (``get_device``, ``is_cpu``,
``is_nested``), ``dim_order``, ``grad_dtype``, ``resize_``/``resize_as_`` (and their
deprecated out-of-place forms) and ``module_load``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._buffers import is_inference
from .._storage import storage_offset, untyped_storage
from .._tensor import Tensor, _check_device
from .._torch_function import DisableTorchFunctionSubclass, handle_torch_function, has_torch_function
from ..autograd.function import named_node
from . import elementwise, shape

__all__ = ["adjoint", "detach_", "get_device", "is_distributed", "is_inference", "resize_as_"]
TENSOR_METHODS = (
    "adjoint",
    "to_padded_tensor",
    "char",
    "get_device",
    "dim_order",
    "resize_",
    "resize_as_",
    "resize",
    "resize_as",
    "is_distributed",
    "is_inference",
    "xpu",
    "hardshrink",
    "prelu",
    "as_subclass",
    "module_load",
)
#: read-only attributes, bound as properties
TENSOR_PROPERTIES = ("H", "mH", "itemsize", "nbytes", "is_cpu", "is_nested")


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """What ``nn.Module.load_state_dict`` swaps into the parameter or buffer ``self`` for
    the value ``other`` when ``torch.__future__.get_swap_module_params_on_conversion()`` is
    on: ``other.detach()`` with ``assign``, else ``self.copy_(other).detach()``. A type
    with ``__torch_function__`` may replace it (e.g. to convert ``other`` to that type)."""
    if has_torch_function((self, other)):
        return handle_torch_function(Tensor.module_load, (self, other), self, other, assign=assign)
    return other.detach() if assign else self.copy_(other).detach()


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (for real tensors, ``input.mT``, a view;
    complex ones are conjugated, as a copy)."""
    return shape._matrix_transpose(input).conj()


def detach_(input: Tensor) -> Tensor:
    """``input.detach_()``: cut ``input`` from its graph in place."""
    return input.detach_()


def is_distributed(input: Tensor) -> bool:
    """False: a disttorch tensor is one array in one process (DDP replicates, never shards)."""
    return False


def H(self: Tensor) -> Tensor:
    """The conjugate transpose of a matrix (0-d or 2-d tensor)."""
    if self._data.ndim not in (0, 2):
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self._data.ndim}-D "
            "tensor. For batches of matrices, consider using tensor.mH"
        )
    return (self if self._data.ndim == 0 else shape.transpose(self, 0, 1)).conj()


def mH(self: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (``mT`` for real tensors)."""
    if self._data.ndim < 2:
        raise RuntimeError(
            f"tensor.mH is only supported on matrices or batches of matrices. Got {self._data.ndim}-D tensor."
        )
    return shape._matrix_transpose(self).conj()


def itemsize(self: Tensor) -> int:
    """Bytes per element (``element_size()``)."""
    return int(self._data.itemsize)


def nbytes(self: Tensor) -> int:
    """Bytes of the tensor's elements (``numel() * itemsize``)."""
    return int(self._data.size * self._data.itemsize)


def is_cpu(self: Tensor) -> bool:
    """True: every disttorch tensor lives in CPU memory."""
    return True


def is_nested(self: Tensor) -> bool:
    """False for a dense tensor; True for a :mod:`disttorch.nested` tensor (its own property)."""
    return False


def to_padded_tensor(self: Tensor, padding: float, output_size: Any = None) -> Tensor:
    """Defined for nested tensors (:func:`disttorch.nested.to_padded_tensor`); a dense tensor
    has nothing to pad."""
    raise RuntimeError(
        "to_padded_tensor(): expected a nested tensor (torch.nested.nested_tensor), got a dense tensor"
    )


def char(self: Tensor) -> Tensor:
    """``self.to(torch.int8)``."""
    return self.to(_dtype.int8)


def get_device(self: Tensor) -> int:
    """The device index: -1 for CPU tensors (all of disttorch's)."""
    return -1


def xpu(self: Tensor, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> Tensor:
    """Raises ``AssertionError`` as PyTorch's CPU build does (no XPU)."""
    _check_device("xpu" if device is None else device)
    return self


def hardshrink(self: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0 (``nn.functional.hardshrink``); NaN stays NaN,
    with a zero gradient, as in PyTorch."""
    zero = Tensor._make(np.zeros((), dtype=self._data.dtype))
    out = elementwise.where(self.abs() > lambd, self, zero)
    return elementwise.where(self.isnan(), self.detach(), out)


def prelu(self: Tensor, weight: Tensor) -> Tensor:
    """``max(0, x) + weight * min(0, x)``, ``weight`` (one value or one per channel, dim 1)
    broadcast over the other dims (``nn.functional.prelu``)."""
    if weight.dim() != 1 and weight.numel() != 1:
        raise RuntimeError(
            f"prelu: weight must be 1-D (one value per channel), got shape {tuple(weight.shape)}"
        )
    channels = weight.numel()
    if channels != 1 and (
        self.dim() < 2 and channels != self.numel() or self.dim() >= 2 and self.shape[1] != channels
    ):
        raise RuntimeError(
            f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{channels} and channel size = {self.shape[1] if self.dim() >= 2 else self.numel()}."
        )
    w = weight.reshape(-1, *([1] * (self.dim() - 2))) if channels != 1 and self.dim() >= 2 else weight
    return elementwise.where(self >= 0, self, w * self)


def dim_order(self: Tensor, *, ambiguity_check: bool | list = False) -> tuple:
    """The dims from outermost to innermost in memory (by decreasing stride; ties keep the
    logical order): ``(0, 1, 2, 3)`` for a contiguous NCHW tensor, ``(0, 2, 3, 1)`` channels-last."""
    strides = self._data.strides
    return tuple(sorted(range(self._data.ndim), key=lambda d: -strides[d]))


def _new_shape(size: tuple) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = tuple(int(s) for s in size)
    if any(s < 0 for s in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {list(out)}")
    return out


def resize_(self: Tensor, *sizes: Any, size: Any = None, memory_format: Any = None) -> Tensor:
    """Give ``self`` the shape ``sizes`` in place, as PyTorch: the same sizes change nothing;
    others make ``self`` contiguous over its storage from its storage offset (so it shows the
    storage's elements in memory order), the storage reallocated when too small (new elements
    zero here). Tensors that require grad cannot be resized, as in PyTorch."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if size is not None:
        if sizes:
            raise TypeError("resize_() got multiple values for argument 'size'")
        sizes = (size,)
    size = _new_shape(sizes)
    if size == self._data.shape:
        return self
    n = int(np.prod(size, dtype=np.int64))
    if type(self._data) is not np.ndarray:  # meta: no memory to keep
        self._data = np.zeros(size, dtype=self._data.dtype).view(type(self._data))
        return self
    storage, item = untyped_storage(self), self._data.itemsize
    start = storage_offset(self) * item
    if start + n * item > storage.nbytes():
        storage.resize_(start + n * item)
    self._data = storage._bytes[start : start + n * item].view(self._data.dtype).reshape(size)
    return self


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``self.resize_(the_template.shape)``."""
    return resize_(self, tuple(the_template.shape))


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """Deprecated: a tensor with ``self``'s elements in shape ``sizes`` (same number of elements;
    differentiable). Use ``reshape``."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    size = _new_shape(sizes)
    if int(np.prod(size, dtype=np.int64)) != self._data.size:
        want = "x".join(map(str, size))
        have = "x".join(map(str, self._data.shape))
        raise RuntimeError(
            f"requested resize to {want} ({int(np.prod(size))} elements in total), but the "
            f"given tensor has a size of {have} ({self._data.size} elements). autograd's resize "
            "can only change the shape of a given tensor, while preserving the number of "
            "elements."
        )
    return shape.reshape(self, size)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated: ``self.resize(tensor.shape)``."""
    return resize(self, tuple(tensor.shape))


def bind() -> None:
    """Attach the properties and ``grad_dtype`` to ``Tensor`` (the methods go with every family's)."""
    g = globals()
    for name in TENSOR_PROPERTIES:
        setattr(Tensor, name, property(g[name]))
    Tensor.grad_dtype = property(_get_grad_dtype, _set_grad_dtype)


def _get_grad_dtype(self: Tensor) -> Any:
    """The dtype ``.grad`` must have: the tensor's own dtype."""
    return self.dtype


def _set_grad_dtype(self: Tensor, value: Any) -> None:
    if value is not None and value != self.dtype:
        raise RuntimeError(
            f"grad_dtype: disttorch keeps gradients in the tensor's own dtype ({self.dtype}); got {value}"
        )


def as_subclass(self: Tensor, cls: type) -> Tensor:
    """A ``cls`` instance sharing ``self``'s memory: changes to either show in the other,
    and the result stays attached to the autograd graph (a view of ``self`` when ``self``
    requires grad). ``cls`` must be a subclass of ``Tensor``. Ops on the result return ``cls``
    objects unless ``cls`` opts out of ``__torch_function__`` (as ``Parameter`` does)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(
            "Creating a Tensor subclass from a class that does not inherit from Tensor is not "
            "possible. Make sure your class inherits from Tensor."
        )
    if self.requires_grad:
        with DisableTorchFunctionSubclass():  # as PyTorch's, never dispatched (handlers unwrap with it)
            out = named_node(shape.view_as(self, self), "AliasBackward0")
    else:
        out = Tensor._make(self._data)
        out._version_box = self._version_box
    try:
        out.__class__ = cls
    except TypeError:  # cls adds slots of its own: build an instance and move the state over
        fresh = object.__new__(cls)
        for name in Tensor.__slots__:
            if name not in ("__weakref__", "__dict__") and hasattr(out, name):
                object.__setattr__(fresh, name, getattr(out, name))
        fresh.__dict__.update(out.__dict__)
        out = fresh
    return out
