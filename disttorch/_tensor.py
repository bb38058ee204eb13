"""``Tensor``: an n-dimensional array (a NumPy array in ``_data``) that can record the
operations applied to it, so that ``backward()`` can compute gradients.

This file holds the tensor's state and its core attributes (shape, dtype, grad, hooks,
conversion, repr). It is the ground floor: it imports only the dtypes. The operations
(``add``, ``sum``, ``view``, indexing, ``to``, ...) and ``backward`` live above it (in
``disttorch/ops/`` by family, and ``disttorch/autograd``) and are attached as methods in one
binding step by ``disttorch/ops/__init__.py``.
"""

from __future__ import annotations

import builtins
import numbers
import operator
import warnings
import weakref
from typing import Any, Callable, Iterator

import numpy as np

from . import _dtype, _inference, _layout, _memory_format
from ._array_base import copy_memory, memory_layout, window
from ._dtype import dtype as _dtype_cls
from ._grad_flag import grad_enabled
from ._inference import INFERENCE
from ._meta_array import MetaArray
from ._ndarray_sequences import warn_if_holds_ndarrays
from ._public_name import is_disttorch_class, package_name
from ._repr import tensor_repr
from .utils.hooks import RemovableHandle

__all__ = ["Tensor", "Size", "is_tensor", "is_floating_point", "numel", "detach"]


#: becomes True with the first meta tensor, so that ops skip the check until then
_meta_in_use = [False]
_inference_on = _inference.enabled  # read by every tensor made: is it an inference tensor?
_NO_DATA = "Cannot copy out of meta tensor; no data!"


def _as_meta(arr: np.ndarray) -> MetaArray:
    """``arr``'s memory and layout as a meta tensor's array."""
    _meta_in_use[0] = True
    return arr.view(MetaArray)


def _is_meta(t: Any) -> bool:
    return type(t._data) is MetaArray


_NON_LEAF_GRAD_MSG = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information. (Triggered "
    "internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)"
)


_NUMPY_OF_GRAD = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."


class Size(tuple):
    """The shape of a tensor: a tuple of ints, printed as ``disttorch.Size([2, 3])``."""

    __slots__ = ()  # no attributes of its own, as PyTorch's

    def __repr__(self) -> str:
        return f"{package_name()}.Size({list(self)})"

    def __reduce__(self) -> tuple:
        return (Size, (tuple(self),))  # PyTorch's reduction (a plain tuple's pickles by NEWOBJ)

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    # slices, concatenations and repeats of a Size are Sizes, as in PyTorch
    def __getitem__(self, key: Any) -> Any:
        item = tuple.__getitem__(self, key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other: Any) -> "Size":
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other: Any) -> "Size":
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n: Any) -> "Size":
        if not isinstance(n, int):
            return NotImplemented
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


class _Handle(RemovableHandle):
    """What a tensor's or an autograd node's ``register_hook``-style call returns: a
    ``torch.utils.hooks.RemovableHandle`` (its ``id``, ``remove()``, ``with``) for a hook
    kept in a list, which ``remove()`` takes it out of."""

    def __init__(self, hooks: list, hook: Callable) -> None:
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref = ()
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __reduce__(self) -> tuple:
        # unpickled, a plain handle that removes nothing (as PyTorch's without its dict)
        return (RemovableHandle.__new__, (RemovableHandle,), (None, self.id, ()))


#: called with a Tensor subclass whose ``__torch_function__`` or ``__torch_dispatch__`` was
#: set after its creation (the dispatch layer forgets what it decided for it)
ON_DISPATCH_CHANGE: list[Callable[[type], None]] = []


class _TensorMeta(type):
    """The metaclass of :class:`Tensor` (PyTorch's ``torch._C._TensorMeta``): a
    ``__torch_function__`` or ``__torch_dispatch__`` set on a class after its creation
    takes effect, as in PyTorch."""

    def __setattr__(cls, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == "__torch_function__" or name == "__torch_dispatch__":
            for hook in ON_DISPATCH_CHANGE:
                hook(cls)


class Tensor(metaclass=_TensorMeta):
    """A multi-dimensional array with autograd, shaped like ``torch.Tensor``."""

    __slots__ = (
        "_data",
        "_grad",
        "grad_fn",
        "_rg",
        "_output_nr",
        "_version_box",
        "_hooks",
        "_post_hooks",
        "_acc",
        "_retains_grad",
        "_base",
        "_view_version",
        "_storage_object",  # set by untyped_storage(): the one object of this memory
        "__weakref__",
        "__dict__",
    )
    # NumPy defers to our reflected operators: np.float64(2) * t is a Tensor (with its graph)
    __array_priority__ = 1000

    # ------------------------------------------------------------------ construction
    def __new__(cls, *args: Any, device: Any = None) -> "Tensor":
        """PyTorch's legacy constructor: ``Tensor()`` (empty), ``Tensor(data)`` (a float
        tensor of the default dtype), ``Tensor(other)`` (a tensor sharing ``other``'s memory
        and dtype) or ``Tensor(*sizes)`` / ``Tensor(size)`` (uninitialised)."""
        if device is not None and str(device) != "cpu":
            raise RuntimeError(
                f"legacy constructor expects device type: cpu but device type: {device} was passed"
            )
        default = _dtype.get_default_dtype().numpy
        if len(args) == 1 and isinstance(args[0], Tensor):
            arr = args[0]._data
        elif len(args) == 1 and isinstance(args[0], Size):
            arr = np.empty(tuple(args[0]), dtype=default)
        elif all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            shape = tuple(int(a) for a in args) if args else (0,)
            if builtins.any(n < 0 for n in shape):
                raise RuntimeError(
                    f"Trying to create tensor with negative dimension {builtins.min(shape)}: {list(shape)}"
                )
            arr = np.empty(shape, dtype=default)
        elif len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
            arr = np.array(args[0], dtype=default)
            warn_if_holds_ndarrays(args[0], arr.size)
        elif len(args) == 1:
            elements = getattr(type(args[0]), "_elements_as", None)  # a storage's (see _storage.py)
            if elements is None:
                raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
            arr = elements(args[0], _dtype.get_default_dtype())  # shares its memory
        else:
            raise TypeError(
                f"new() received an invalid combination of arguments - got "
                f"({', '.join(type(a).__name__ for a in args)}), but expected sizes (ints), a torch.Size, "
                "a tensor or one sequence of data"
            )
        self = object.__new__(cls)
        self._init_state(arr)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Nothing: :meth:`__new__` built the tensor, so a subclass whose ``__init__`` calls
        ``super().__init__()`` keeps its data, as in PyTorch."""

    def _init_state(self, arr: np.ndarray, grad_fn: Any = None, output_nr: int = 0) -> None:
        self._data = arr
        self._grad = None
        self.grad_fn = grad_fn
        self._rg = grad_fn is not None
        self._output_nr = output_nr
        self._version_box = INFERENCE if _inference_on.value else [0]
        self._hooks = None
        self._post_hooks = None
        self._acc = None
        self._retains_grad = False
        self._base = None  # for a view: the tensor whose memory it shows (never a view)

    @classmethod
    def _make(cls, arr: np.ndarray, grad_fn: Any = None, output_nr: int = 0) -> "Tensor":
        """Wrap an array without copying (internal fast path)."""
        t = object.__new__(Tensor)
        t._data = arr
        t._grad = None
        t.grad_fn = grad_fn
        t._rg = grad_fn is not None
        t._output_nr = output_nr
        t._version_box = INFERENCE if _inference_on.value else [0]
        t._hooks = None
        t._post_hooks = None
        t._acc = None
        t._retains_grad = False
        t._base = None
        return t

    def __reduce_ex__(self, protocol: int):
        # as PyTorch's: the whole storage, and the tensor's offset and strides in it
        raw, layout = memory_layout(self._data)
        args = (raw, self._rg and self.grad_fn is None, layout)
        kind = type(self)
        if kind is Tensor or is_disttorch_class(kind):
            return (_rebuild_tensor, args)
        # a user's subclass comes back as itself, with its attributes (PyTorch's way)
        return (_rebuild_from_type_v2, (_rebuild_tensor, kind, args, dict(self.__dict__)))

    # ------------------------------------------------------------------ basic attributes
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Size | int:
        """The shape, or the size of dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim, has_dims=True)]

    def dim(self) -> int:
        return self._data.ndim

    ndim = property(dim)

    def ndimension(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def dtype(self) -> _dtype_cls:
        return _dtype.from_numpy(self._data.dtype)

    @property
    def device(self) -> "device":
        return _META if type(self._data) is MetaArray else _CPU

    @property
    def is_cuda(self) -> bool:
        """False: disttorch tensors live on the CPU (as on a CPU build of PyTorch)."""
        return False

    @property
    def is_mps(self) -> bool:
        """False: disttorch tensors live on the CPU."""
        return False

    @property
    def is_xpu(self) -> bool:
        """False: disttorch tensors live on the CPU."""
        return False

    @property
    def is_meta(self) -> bool:
        """True for a tensor on the ``meta`` device (a shape and dtype, no data)."""
        return type(self._data) is MetaArray

    is_sparse = False  # disttorch.ops.sparse.SparseTensor says True
    is_quantized = False  # disttorch._qtensor.QuantizedTensor says True
    #: whether ``torch.<name>(x, ...)`` calls this class's override of method ``name``
    #: (``ops.method_twins``): DTensor and QuantizedTensor
    _functions_call_methods = False
    is_sparse_csr = False  # disttorch.ops.sparse_compressed: True for the sparse_csr layout

    @property
    def layout(self) -> "_layout.layout":
        return _layout.strided

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind in "fV"

    def stride(self, dim: int | None = None) -> tuple | int:
        st = getattr(self, "_wrapper_strides", None) if type(self) is not Tensor else None
        if st is None and self._data.size:
            st = tuple(s // self._data.itemsize for s in self._data.strides)
        elif (
            st is None
        ):  # NumPy's strides of an empty array are 0: PyTorch's contiguous ones (a dim of 0 counts as 1)
            st = tuple(
                int(np.prod([max(n, 1) for n in self._data.shape[i + 1 :]])) for i in range(self._data.ndim)
            )
        return st if dim is None else st[_wrap_dim(dim, len(st), has_dims=True)]

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether the elements lie densely in row-major order, or in ``memory_format``'s
        order (``torch.channels_last``: dims N, H, W, C from slowest to fastest)."""
        wrapper = getattr(self, "_wrapper_strides", None) if type(self) is not Tensor else None
        if wrapper is not None and memory_format is None:  # a wrapper subclass: the strides it was made with
            return wrapper == _contiguous(tuple(self.shape))
        if memory_format is None:
            return bool(self._data.flags.c_contiguous)
        return _memory_format.is_contiguous_as(self._data, memory_format)

    def data_ptr(self) -> int:
        return int(self._data.__array_interface__["data"][0])

    def const_data_ptr(self) -> int:
        """:meth:`data_ptr` (PyTorch's name for a pointer not written through)."""
        return self.data_ptr()

    def is_set_to(self, tensor: Tensor) -> bool:
        """Whether both tensors view the same memory with the same offset, sizes and strides."""
        a, b = self._data, tensor._data
        return self.data_ptr() == tensor.data_ptr() and a.shape == b.shape and a.strides == b.strides

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 for leaves)."""
        return self._output_nr if self.grad_fn is not None else 0

    @property
    def _version(self) -> int:
        if self._version_box is INFERENCE:
            raise RuntimeError(_inference.VERSION_MSG)
        return self._version_box[0]

    def _bump_version(self) -> None:
        """Record an in-place change (backward checks saved tensors against this)."""
        self._version_box[0] += 1

    # ------------------------------------------------------------------ autograd state
    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set whether autograd records operations on this leaf tensor (in place)."""
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you "
                "want to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach()."
            )
        if requires_grad and self._data.dtype.kind not in "fVc":
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if requires_grad:
            _inference.check_requires_grad(self._version_box)
        if self._base is not None and self._base._rg:  # a view made in no_grad mode (see mark_view)
            if requires_grad:
                self.__dict__.pop("_rg_from_base", None)  # now a leaf of its own
            else:
                self._rg_from_base = True  # it still requires grad through its base, as in PyTorch
                requires_grad = True
        self._rg = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (its ``_base``)."""
        return self._base is not None

    @property
    def grad(self) -> "Tensor | None":
        """The gradient backward accumulated here; reading it on a non-leaf that does not
        retain grad warns, as PyTorch's (it is never populated there)."""
        g = self._grad
        if g is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(_NON_LEAF_GRAD_MSG, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of "
                    f"type {type(value).__name__}"
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size "
                    f"'{list(value._data.shape)}' to a tensor of size "
                    f"'{list(self._data.shape)}'. Please ensure that the gradient "
                    f"and the tensor are the same size"
                )
        self._grad = value

    @property
    def data(self) -> "Tensor":
        """This tensor's values, detached from the graph (shares memory). Unlike
        ``detach()``, changes made through it are invisible to autograd's version checks
        (of an inference tensor, it is an inference tensor)."""
        t = Tensor._make(self._data)
        if self._version_box is INFERENCE:
            t._version_box = INFERENCE
        return t

    @data.setter
    def data(self, value: "Tensor") -> None:
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)
        self._storage_object = None  # other memory: its storage object is no longer this one

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def detach(self) -> "Tensor":
        """A new tensor sharing this one's memory, outside the graph."""
        t = Tensor._make(self._data)
        t._version_box = self._version_box
        return t

    def detach_(self) -> "Tensor":
        """Cut this tensor from its graph in place (not a view: PyTorch's error, use detach())."""
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                "function in torch/optim/optimizer.py as the solution."
            )
        self.grad_fn = None
        self._rg = False
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        node = self.grad_fn
        if node._retained is None:
            node._retained = {}
        node._retained[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    def register_hook(self, hook: Callable[["Tensor"], "Tensor | None"]) -> _Handle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            node = self.grad_fn
            if node._pre_hooks is None:
                node._pre_hooks = {}
            hooks = node._pre_hooks.setdefault(self._output_nr, [])
        hooks.append(hook)
        return _Handle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[["Tensor"], None]) -> _Handle:
        """Call ``hook(tensor)`` after the gradient has been accumulated into ``.grad``
        (leaf tensors only)."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(hook)
        return _Handle(self._post_hooks, hook)

    # ------------------------------------------------------------------ conversion
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The underlying NumPy array (shares memory). A tensor that requires grad is refused
        while grad mode is on (under ``no_grad``, or in a custom Function's forward, it is
        not, as in PyTorch)."""
        if self._rg and not force and grad_enabled[0]:
            raise RuntimeError(_NUMPY_OF_GRAD)
        if type(self._data) is MetaArray:
            raise TypeError(
                "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                "to host memory first."
            )
        return self._data

    def item(self) -> int | float | bool:
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if type(self._data) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        if type(self._data) is MetaArray:
            raise NotImplementedError(_NO_DATA)
        return self._data.tolist()

    def type(self, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        """With no argument, the legacy type name (``'torch.FloatTensor'``); else this tensor
        converted to ``dtype``: a dtype, a legacy type (``torch.LongTensor``) or its name."""
        if dtype is None:
            return f"torch.{_dtype.scalar_type_name(self._data.dtype)}Tensor"
        if getattr(dtype, "is_cuda", False) is True:  # torch.cuda.FloatTensor & co
            _check_device("cuda")
        target = getattr(dtype, "dtype", None) if isinstance(dtype, builtins.type) else dtype
        if isinstance(dtype, str):
            name = dtype.split(".")
            if len(name) == 3 and name[:2] == ["torch", "cuda"]:
                _check_device("cuda")
            target = (
                _dtype.by_scalar_type_name(name[-1][: -len("Tensor")])
                if len(name) == 2 and name[0] == "torch" and name[-1].endswith("Tensor")
                else None
            )
            if target is None:
                raise ValueError(f"invalid type: '{dtype}'")
        if not isinstance(target, _dtype_cls):
            raise TypeError(f"type(): expected a dtype, a legacy tensor type or its name, got {dtype!r}")
        return self.to(target)

    def dequantize(self) -> "Tensor":
        """This tensor as float32 (itself when float32 already): only a quantized tensor has
        other values to give."""
        return self if self._data.dtype == np.float32 else self.float()

    def _not_quantized(self, op: str) -> Any:
        raise NotImplementedError(
            f"Could not run 'aten::{op}' with arguments from the 'CPU' backend: the tensor is "
            "not quantized (make one with quantize_per_tensor / quantize_per_channel)"
        )

    def qscheme(self) -> Any:
        """A quantized tensor's scheme; a plain tensor raises, as in PyTorch."""
        return self._not_quantized("qscheme")

    def int_repr(self) -> "Tensor":
        """A quantized tensor's integers; a plain tensor raises, as in PyTorch."""
        return self._not_quantized("int_repr")

    def q_scale(self) -> float:
        """A quantized tensor's scale; a plain tensor raises, as in PyTorch."""
        return self._not_quantized("q_scale")

    def q_zero_point(self) -> int:
        """A quantized tensor's zero point; a plain tensor raises, as in PyTorch."""
        return self._not_quantized("q_zero_point")

    def q_per_channel_scales(self) -> "Tensor":
        """A per-channel quantized tensor's scales; a plain tensor raises, as in PyTorch."""
        return self._not_quantized("q_per_channel_scales")

    def q_per_channel_zero_points(self) -> "Tensor":
        """A per-channel quantized tensor's zero points; a plain tensor raises."""
        return self._not_quantized("q_per_channel_zero_points")

    def q_per_channel_axis(self) -> int:
        """A per-channel quantized tensor's axis; a plain tensor raises, as in PyTorch."""
        return self._not_quantized("q_per_channel_axis")

    def cpu(self, memory_format: Any = None) -> "Tensor":
        """This tensor (it is on the CPU already); a meta tensor raises (it has no data)."""
        if type(self._data) is MetaArray:
            raise NotImplementedError(_NO_DATA)
        return self

    def cuda(self, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> "Tensor":
        """Raises as PyTorch's CPU build does: AssertionError (no CUDA), or RuntimeError for
        an integer device (no accelerator); a device that is not CUDA ('cpu') is refused first."""
        if isinstance(device, (str, _device)) and _device(device).type != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
        _check_device("cuda" if device is None else device)
        return self

    def share_memory_(self) -> "Tensor":
        """Move this tensor's data to shared memory (in place; a no-op if it is there
        already), so processes started after this (fork) or receiving it through
        ``torch.multiprocessing`` (any start method) see and make the same updates.

        Unlike PyTorch, where the whole storage moves, views and storage objects taken of this
        tensor before the call keep the old (private) memory: share first, then take views.
        """
        from ._shared_memory import segment_of, share_array

        if segment_of(self._data) is None:
            self._data = share_array(self._data)
            self._storage_object = None  # other memory (see _storage.untyped_storage)
        return self

    def is_shared(self) -> bool:
        """Whether this tensor's data is in shared memory (see :meth:`share_memory_`)."""
        from ._shared_memory import segment_of

        return segment_of(self._data) is not None

    def pin_memory(self, device: Any = None) -> "Tensor":
        """Raises RuntimeError as PyTorch's CPU build does: pinning needs an accelerator."""
        raise RuntimeError(
            _NO_ACCELERATOR + " (pin_memory() pins host memory for copies to an "
            "accelerator; disttorch has none: leave pin_memory off)"
        )

    def is_pinned(self, device: Any = None) -> bool:
        """False: nothing is pinned without an accelerator."""
        return False

    def float(self, memory_format: Any = None) -> "Tensor":
        return self.to(_dtype.float32)

    def double(self, memory_format: Any = None) -> "Tensor":
        return self.to(_dtype.float64)

    def half(self, memory_format: Any = None) -> "Tensor":
        return self.to(_dtype.float16)

    def bfloat16(self, memory_format: Any = None) -> "Tensor":
        """``self.to(disttorch.bfloat16)`` (needs the ml_dtypes package)."""
        return self.to(_dtype.bfloat16)

    def long(self, memory_format: Any = None) -> "Tensor":
        return self.to(_dtype.int64)

    def int(self, memory_format: Any = None) -> "Tensor":
        return self.to(_dtype.int32)

    def short(self, memory_format: Any = None) -> "Tensor":
        return self.to(_dtype.int16)

    def bool(self, memory_format: Any = None) -> "Tensor":
        return self.to(_dtype.bool)

    def byte(self, memory_format: Any = None) -> "Tensor":
        return self.to(_dtype.uint8)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._rg and grad_enabled[0]:
            raise RuntimeError(_NUMPY_OF_GRAD)
        return self._data if dtype is None else self._data.astype(dtype)

    def __array_wrap__(self, array: np.ndarray) -> "Tensor":
        """A NumPy ufunc's result on tensors, as a tensor (a bool one as uint8, as PyTorch's).
        One argument, as PyTorch's: NumPy 2 warns that it should take ``context`` and
        ``return_scalar`` (a ``DeprecationWarning`` PyTorch's programs print)."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return Tensor._make(np.asarray(array))

    @property
    def __array_interface__(self) -> dict:
        """NumPy's array interface of the data (``np.asarray(t)`` shares its memory). Absent
        for bfloat16, which the interface cannot describe, and for a tensor that requires
        grad, whose ``__array__`` raises as ``numpy()`` does (NumPy then uses ``__array__``)."""
        if self._rg:
            raise AttributeError("__array_interface__ of a tensor that requires grad: use detach()")
        if self._data.dtype.kind == "V":
            raise AttributeError("__array_interface__ cannot describe bfloat16 data")
        return self._data.__array_interface__

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any) -> Any:
        """A DLPack capsule of the data (CPU), for ``from_dlpack`` of any library."""
        if stream is not None:
            raise BufferError("disttorch tensors live on the CPU: __dlpack__ takes no stream")
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # (kDLCPU, device 0)

    # ------------------------------------------------------------------ Python protocol
    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        """The slices along dim 0, as ``unbind(0)`` gives them (``UnbindBackward0``; a
        subclass's ``__torch_function__`` sees ``unbind``), as PyTorch iterates."""
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __contains__(self, element: Any) -> bool:
        """``element in t``: whether any element of ``t`` equals ``element`` (a scalar or a
        tensor broadcast against ``t``), as PyTorch's ``(element == t).any()``."""
        if not isinstance(element, (Tensor, numbers.Number)):
            raise RuntimeError(
                f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}."
            )
        return bool((element == self).any())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with "
                f"{'no values' if self._data.size == 0 else 'more than one value'}"
                " is ambiguous"
            )
        if type(self._data) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return bool(self._data.reshape(()))

    def __int__(self) -> int:
        return int(_real_item(self, "int64_t"))

    def __float__(self) -> float:
        _warn_scalar_of_graph(self)
        return float(_real_item(self, "double"))

    def __complex__(self) -> complex:
        _warn_scalar_of_graph(self)
        _one_element(self)
        return complex(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __deepcopy__(self, memo: dict) -> "Tensor":
        if self.grad_fn is not None:  # as PyTorch's: a graph's result cannot be copied
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
                "the moment.  If you were attempting to deepcopy a module, this may be because of a "
                "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
            )
        if type(self).__torch_dispatch__ is not Tensor.__torch_dispatch__:
            return _deepcopy_wrapper(self, memo)
        import copy

        t = type(self).__new__(type(self))
        # as PyTorch's: its whole storage copied once per deep copy (so views still share one),
        # and the same offset and strides
        Tensor._init_state(t, copy_memory(self._data, memo))
        t._rg = self._rg and self.grad_fn is None
        if self._grad is not None:
            t._grad = copy.deepcopy(self._grad, memo)
        if hasattr(self, "__dict__"):
            for k, v in self.__dict__.items():
                t.__dict__[k] = copy.deepcopy(v, memo)
        memo[id(self)] = t
        return t


def _contiguous(shape: tuple) -> tuple:
    """The row-major strides of ``shape``, in elements."""
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


def _deepcopy_wrapper(self: Tensor, memo: dict) -> Tensor:
    """``copy.deepcopy`` of a subclass that computes in ``__torch_dispatch__`` (which keeps its
    data itself), as PyTorch's: its ``clone()``, with a deep copy of its attributes."""
    import copy

    from ._grad_flag import grad_enabled

    if id(self) in memo:
        return memo[id(self)]
    enabled, grad_enabled[0] = grad_enabled[0], False
    try:
        t = self.clone()
    finally:
        grad_enabled[0] = enabled
    if type(t) is not type(self):
        raise RuntimeError(
            "The default implementation of __deepcopy__() for wrapper subclasses only works for subclass "
            "types that implement clone() and for which cloning returns another instance of the same "
            "subclass. You should either properly implement clone() for your subclass or override "
            "__deepcopy__() if it is intended behavior for clone() to return an instance of a different type."
        )
    if self._rg:
        t.requires_grad_(True)
    if self._grad is not None:
        t._grad = copy.deepcopy(self._grad, memo)
    t.__dict__ = copy.deepcopy(self.__dict__, memo)
    memo[id(self)] = t
    return t


class device:
    """``disttorch.device('cpu')``, ``device('cuda:1')``, ``device('cuda', 1)``: a device name,
    as in PyTorch. disttorch computes on the CPU only, like a CPU build of PyTorch: naming
    another device works, using it raises as the CPU build does (see ``_check_device``)."""

    __slots__ = ("index", "type")  # no other attributes, as PyTorch's

    def __init__(self, type: "str | device" = "cpu", index: int | None = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, builtins.int) and not isinstance(type, builtins.bool):
            raise RuntimeError(_NO_ACCELERATOR)
        elif not isinstance(type, str):
            raise TypeError(
                f"device() expected a device string or an int, but got {builtins.type(type).__name__}"
            )
        kind, _, idx = type.partition(":")
        if kind not in _DEVICE_TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: {type}"
            )
        if idx:
            if (
                index is not None
                or not idx.isascii()
                or not idx.isdigit()
                or (len(idx) > 1 and idx[0] == "0")
            ):
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = builtins.int(idx)
            if index > 2**31 - 1:
                raise RuntimeError(f"Could not parse device index '{idx}' in device string '{type}'")
        elif index is not None:
            try:  # what has __index__ (NumPy and tensor integers too), never a bool
                if isinstance(index, (builtins.bool, np.bool_)):
                    raise TypeError
                index = operator.index(index)
            except TypeError:
                raise TypeError(
                    f"device(): argument 'index' (position 2) must be int, not {builtins.type(index).__name__}"
                ) from None
            if not -(2**63) <= index < 2**63:
                raise ValueError("Overflow when unpacking long long")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type, self.index = kind, index

    def __repr__(self) -> str:
        return (
            f"device(type='{self.type}')"
            if self.index is None
            else f"device(type='{self.type}', index={self.index})"
        )

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str):
            return str(self) == other
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self) -> tuple:
        return (device, (self.type,) if self.index is None else (self.type, self.index))  # PyTorch's args

    def __enter__(self) -> "device":
        """``with torch.device("cpu"):`` or ``("meta")``: the device factory functions create
        tensors on inside the block (another device raises as the CPU build does when a
        tensor is created on it)."""
        if self.type != "meta":
            _check_device(self)
        _default_devices.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _default_devices.pop()


#: the devices of the ``with torch.device(...)`` blocks entered (innermost last), and the
#: device ``set_default_device`` chose (None: the CPU), which applies outside such blocks
_default_devices: list = []
_global_default: list = [None]


def _wants_meta(d: Any = None) -> bool:
    """Whether a tensor created for device ``d`` (None: the default device) is a meta tensor;
    a device that does not exist here raises as in :func:`_check_device`."""
    if d is None:
        d = _default_devices[-1] if _default_devices else _global_default[0]
        if d is None:
            return False
    if not isinstance(d, builtins.int) and device(d).type == "meta":
        return True
    _check_device(d)
    return False


_DEVICE_TYPES = (
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
)
_NO_ACCELERATOR = "Cannot access accelerator device when none is available."
_NOT_COMPILED = {"cuda": "Torch not compiled with CUDA enabled", "xpu": "Torch not compiled with XPU enabled"}
_CPU = device("cpu")
_META = device("meta")


def _check_device(d: Any) -> None:
    """Accept the CPU; raise for any other device as PyTorch's CPU build does: an integer
    (an accelerator index) gives RuntimeError, CUDA and XPU give AssertionError, MPS gives
    NotImplementedError, and the rest RuntimeError."""
    if isinstance(d, builtins.int) and not isinstance(d, builtins.bool):
        raise RuntimeError(_NO_ACCELERATOR + " (disttorch computes on the CPU only: use device='cpu')")
    kind = device(d).type
    if kind == "cpu":
        return
    hint = (
        " (disttorch computes on the CPU only, like a CPU build of PyTorch: use device='cpu'; "
        "torch.cuda.is_available() and torch.accelerator.is_available() are False)"
    )
    if kind in _NOT_COMPILED:
        raise AssertionError(_NOT_COMPILED[kind] + hint)
    if kind == "mps":
        raise NotImplementedError("the 'MPS' backend is not available" + hint)
    raise RuntimeError(f"device '{kind}' is not available" + hint)


def _dim_type_error(dim: Any, expected: str = "int", name: str = "dim") -> str:
    """PyTorch's words for a dim of another type than ``expected``; a name (a named tensor's
    dim, which PyTorch 2.13 no longer has) says so."""
    text = f"argument '{name}' must be {expected}, not {type(dim).__name__}"
    if isinstance(dim, str) or isinstance(dim, (list, tuple)) and any(isinstance(d, str) for d in dim):
        text += " (named dims such as 'C' are not supported: PyTorch 2.13 has no named tensors)"
    return text


def _int_arg(value: Any, name: str = "dim") -> int:
    """An integer argument that is not a plain int as one: NumPy's integers and 0-d integer
    tensors are; a bool, None, float or name is PyTorch's TypeError (``x.sum(True)``,
    ``x.unsqueeze(None)``, ``x.topk(True)``)."""
    if value is not None and not isinstance(value, (bool, np.bool_)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(_dim_type_error(value, "int", name))


def _wrap_dim(dim: int, ndim: int, has_dims: bool = False) -> int:
    """Turn a possibly negative ``dim`` into an index, with PyTorch's error if out of range
    (``has_dims``: a 0-d tensor has no dim at all, as for ``size(0)``)."""
    if dim.__class__ is not int:
        dim = _int_arg(dim)
    if has_dims and not ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


_scalar_warning = [True]  # PyTorch warns once per process


def _warn_scalar_of_graph(t: Tensor) -> None:
    """PyTorch's warning, once, when ``float()``/``complex()`` reads a tensor that requires
    grad while grad mode is on (``LBFGS.step``, under ``no_grad``, reads its loss quietly)."""
    if t._rg and _scalar_warning[0] and grad_enabled[0]:
        _scalar_warning[0] = False
        warnings.warn(
            "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
            "Consider using tensor.detach() first. (Triggered internally at "
            "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)",
            UserWarning,
            stacklevel=3,
        )


def _one_element(t: Tensor) -> None:
    if t._data.size != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")


def _real_item(t: Tensor, c_type: str) -> Any:
    """``t.item()`` for ``int()``/``float()``/``complex()``: one element (else PyTorch's
    ValueError); a complex value must have no imaginary part."""
    _one_element(t)
    v = t.item()
    if isinstance(v, complex):
        if v.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
        return v.real
    return v


def _rebuild_tensor(arr: np.ndarray, requires_grad: bool, layout: tuple | None = None) -> Tensor:
    """A pickled tensor: the bytes of its memory and its ``layout`` in them (``memory_layout``),
    or, without a layout (as pickled before layouts were kept), its elements."""
    t = Tensor._make(arr if layout is None else window(arr, layout))
    t._rg = requires_grad
    return t


def _rebuild_from_type_v2(func: Any, new_type: type, args: tuple, state: Any) -> Tensor:
    """``torch._tensor._rebuild_from_type_v2``: ``func(*args)`` shown as ``new_type``, with
    the attributes ``state`` (a dict, or ``(dict, slots)``) set on it, or given to the
    type's own ``__setstate__``."""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    if getattr(new_type, "__setstate__", None) is not None:
        ret.__setstate__(state)
        return ret
    for part in state if isinstance(state, tuple) else (state,):
        for key, value in (part or {}).items():
            setattr(ret, key, value)
    return ret


def is_tensor(obj: Any) -> bool:
    """True if ``obj`` is a disttorch Tensor."""
    return isinstance(obj, Tensor)


def _tensor_arg(name: str, value: Any, arg: str = "input", position: int = 1) -> Tensor:
    """``value`` if it is a Tensor, else PyTorch's TypeError for argument ``arg`` of ``name``
    (naming a type outside the builtins with its module, ``numpy.ndarray``, as PyTorch's)."""
    if not isinstance(value, Tensor):
        kind = type(value)
        what = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {what}")
    return value


def is_floating_point(input: Tensor) -> bool:
    """True if ``input``'s dtype is a floating point one (float16, float32, float64)."""
    return _tensor_arg("is_floating_point", input).is_floating_point()


def numel(input: Tensor) -> int:
    """The number of elements of ``input``."""
    return _tensor_arg("numel", input).numel()


def detach(input: Tensor) -> Tensor:
    """``input.detach()``: a tensor sharing ``input``'s memory, outside the graph."""
    return _tensor_arg("detach", input).detach()


_device = device  # the class, for methods whose argument is named ``device``
