"""``Parameter`` (a tensor a Module trains) and ``Buffer`` (a tensor a Module keeps as
state but does not train, e.g. running statistics); ``UninitializedParameter`` and
``UninitializedBuffer``, the shapeless placeholders of the lazy modules.

Assigning either to a Module attribute registers it: ``self.w = nn.Parameter(t)`` adds
``w`` to ``parameters()`` and ``state_dict()``; ``self.s = nn.Buffer(t)`` adds ``s`` to
``buffers()`` (and to ``state_dict()`` unless ``persistent=False``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._array_base import memory_layout
from .._memory_format import preserve_format
from .._tensor import Tensor, _rebuild_tensor
from .._torch_function import _disabled_torch_function_impl, has_torch_function

__all__ = [
    "Parameter",
    "Buffer",
    "UninitializedParameter",
    "UninitializedBuffer",
    "UninitializedTensorMixin",
    "is_lazy",
]


def _array_of(data: Any) -> tuple:
    """The array and version counter a Parameter/Buffer built from ``data`` shares."""
    if data is None:
        return np.empty(0, dtype=_dtype.get_default_dtype().numpy), [0]
    if not isinstance(data, Tensor):
        raise TypeError(f"expected a Tensor as data, but got {type(data).__name__}")
    return data._data, data._version_box


class _ParameterMeta(type(Tensor)):
    """``isinstance(t, Parameter)`` is also true for a tensor subclass made a parameter by
    ``Parameter(t)`` (e.g. a ``DTensor``), which keeps its own type, as in PyTorch."""

    def __instancecheck__(cls, obj: Any) -> bool:
        if issubclass(type(obj), cls):
            return True
        if type(obj) is Tensor:  # the common miss, answered without attribute look-ups
            return False
        if cls is Parameter and isinstance(obj, Tensor) and getattr(obj, "__dict__", {}).get("_is_param"):
            return True
        return type.__instancecheck__(cls, obj)  # e.g. an object whose __class__ says Parameter


#: ``Tensor.requires_grad_`` as defined, not the form a ``TorchFunctionMode`` patches in
_requires_grad = Tensor.requires_grad_


def _flagged_subclass(data: Any, requires_grad: bool) -> Tensor | None:
    """PyTorch's path for tensor subclasses: ``data.detach()``, flagged as a parameter,
    when ``detach`` keeps a tensor subclass (``DTensor`` does, also for FSDP's sharded
    parameters); else ``None``."""
    if type(data) in (Tensor, Parameter) or not isinstance(data, Tensor):
        return None
    t = data.detach()
    if type(t) is Tensor or not hasattr(t, "__dict__"):
        return None  # detach() gave a plain tensor (disttorch's own subclasses): a plain Parameter
    t.requires_grad_(requires_grad)
    t.__dict__["_is_param"] = True
    return t


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A tensor that is a module parameter.

    Shares memory with ``data``; it is a leaf and requires grad unless told otherwise.
    A tensor subclass whose ``detach()`` keeps its type (``DTensor``) stays of its type,
    detached and flagged, and counts as a ``Parameter``, as in PyTorch.

    Args:
        data (Tensor, optional): parameter values (an empty tensor when omitted).
        requires_grad (bool): whether the parameter requires gradient. Default: ``True``.
    """

    # ops on a parameter (and on a subclass of it) return plain tensors, as in PyTorch
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> "Parameter":
        if cls is Parameter:
            flagged = _flagged_subclass(data, requires_grad)
            if flagged is not None:
                return flagged  # type: ignore[return-value]
        arr, version = _array_of(data)
        self = object.__new__(cls)
        Tensor._init_state(self, arr)
        self._version_box = version
        if requires_grad:  # as PyTorch's C++ constructor flags it: no torch function mode sees this
            _requires_grad(self, True)
        return self

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> Parameter:
        """As PyTorch's: a parameter over a clone of the data alone (its layout kept when dense,
        its storage its own), with ``requires_grad``; ``.grad`` and attributes are not copied."""
        if type(self).__torch_dispatch__ is not Tensor.__torch_dispatch__:
            return super().__deepcopy__(memo)  # a subclass keeping its data itself: its clone()
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.data.clone(memory_format=preserve_format), self.requires_grad)
        return memo[id(self)]

    def __reduce_ex__(self, protocol: int):
        raw, layout = memory_layout(self._data)  # its whole storage, offset and strides, as PyTorch's
        return (_rebuild_parameter, (raw, self._rg, dict(self.__dict__), layout))


def _rebuild_parameter(
    arr: np.ndarray, requires_grad: bool, state: dict, layout: tuple | None = None
) -> Parameter:
    """A pickled parameter: as ``_tensor._rebuild_tensor``, with its attributes ``state``."""
    p = Parameter(_rebuild_tensor(arr, False, layout), requires_grad)
    p.__dict__.update(state)
    return p


class _BufferMeta(type(Tensor)):
    """``isinstance(t, Buffer)`` is true for tensors made by ``Buffer(...)``."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and getattr(obj, "_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as a module buffer when assigned to a Module attribute.

    ``Buffer(data)`` returns a tensor sharing ``data``'s memory, tagged so that
    ``module.name = Buffer(data)`` calls ``register_buffer(name, data, persistent)``.

    Args:
        data (Tensor, optional): buffer values (an empty tensor when omitted).
        persistent (bool): whether the buffer is part of ``state_dict()``. Default: ``True``.
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:
        if type(data) is not Tensor and has_torch_function((data,)):
            t = data.detach()  # a tensor subclass stays itself, detached (PyTorch's way)
        else:
            arr, version = _array_of(data)
            t = Tensor._make(arr)
            t._version_box = version
        t._rg = bool(data is not None and data._rg and data.grad_fn is None)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedTensorMixin:
    """A placeholder with a dtype but no shape yet; ``materialize(shape)`` gives it storage
    and turns it into its ``cls_to_become`` in place (the same object, so optimisers and
    hooks that hold it keep working)."""

    cls_to_become: type = Tensor

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Allocate uninitialised storage of ``shape`` (and ``dtype``, default the
        placeholder's) and become a regular tensor of ``cls_to_become``."""
        shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
        np_dtype = dtype.numpy if dtype is not None else self._data.dtype
        self._data = np.empty(shape, dtype=np_dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo: dict) -> UninitializedTensorMixin:
        """Another placeholder of the same kind, ``requires_grad`` and dtype, as PyTorch's."""
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, None, self.dtype)
        return memo[id(self)]


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an :class:`UninitializedParameter` or :class:`UninitializedBuffer`
    (a lazy module's placeholder not materialised yet)."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (lazy modules); becomes a
    :class:`Parameter` on ``materialize(shape)``."""

    cls_to_become = Parameter

    def __new__(
        cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
    ) -> "UninitializedParameter":
        np_dtype = (dtype if dtype is not None else _dtype.get_default_dtype()).numpy
        return Parameter.__new__(cls, Tensor._make(np.empty(0, dtype=np_dtype)), requires_grad)

    def __reduce_ex__(self, protocol: int):
        return (UninitializedParameter, (self._rg, None, None))


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (lazy modules); becomes a plain tensor on
    ``materialize(shape)``."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(
        cls, requires_grad: bool = False, device: Any = None, dtype: Any = None, persistent: bool = True
    ) -> "UninitializedBuffer":
        np_dtype = (dtype if dtype is not None else _dtype.get_default_dtype()).numpy
        self = object.__new__(cls)
        Tensor._init_state(self, np.empty(0, dtype=np_dtype))
        return self
