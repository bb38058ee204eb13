"""``Tensor._make_subclass`` and ``Tensor._make_wrapper_subclass``: the constructors of
tensor subclasses (``nn.Parameter``-like types, and wrappers such as PyG's ``EdgeIndex`` or
quantised-weight types that keep their real data in attributes of their own and compute in
``__torch_dispatch__``).

A wrapper made here has the sizes, dtype and ``requires_grad`` asked for over no memory (a
read-only broadcast zero); its metadata methods (``size()``, ``dim()``, ``numel()``...) answer
from them, and every other public function or method called on it goes to its type's
``__torch_dispatch__`` as the ATen operators PyTorch's dispatcher would hand it
(``torch.ops.aten.mul.Tensor`` for ``w * 2``, ``aten.t`` then ``aten.addmm`` for
``F.linear``), with autograd recorded above the dispatch; see :mod:`._function_dispatch`
and :mod:`.ops.aten_dispatch`. The wrapper's own attributes must not use disttorch's
internal names (``_grad``...), except ``_data`` for its inner tensor, as PyG's do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _dtype
from ._tensor import Tensor, _contiguous

__all__: list[str] = []


def _check_class(cls: Any, what: str) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"{what}: cls must be a subclass of Tensor, got {cls!r}")


def _make_subclass(
    cls: type,
    data: Tensor,
    require_grad: bool = False,
    dispatch_sizes_strides_policy: Any = None,
    dispatch_device: bool = False,
    dispatch_layout: bool = False,
) -> Tensor:
    """A ``cls`` instance sharing ``data``'s memory, detached from its graph (a leaf that
    requires grad when ``require_grad``); ``cls.__new__`` and ``__init__`` are not called."""
    _check_class(cls, "_make_subclass")
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): data must be a Tensor, got {type(data).__name__}")
    out = object.__new__(cls)
    Tensor._init_state(out, data._data)
    out._version_box = data._version_box
    if require_grad:
        out.requires_grad_(True)
    return out


def _make_wrapper_subclass(
    cls: type,
    size: Sequence[int],
    strides: Sequence[int] | None = None,
    storage_offset: int | None = None,
    memory_format: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    dispatch_sizes_strides_policy: Any = None,
    dispatch_device: bool = False,
    dispatch_layout: bool = False,
    _extra_dispatch_keys: Any = None,
    storage_size: int | None = None,
) -> Tensor:
    """A ``cls`` instance of ``size`` and ``dtype`` (the default float one unless given)
    holding no data: the subclass keeps its data itself and computes in
    ``__torch_dispatch__``. ``stride()`` and ``is_contiguous()`` answer from ``strides``
    (row-major unless given). ``device`` must be the CPU (or None)."""
    _check_class(cls, "_make_wrapper_subclass")
    if device is not None and str(device) not in ("cpu", "meta"):
        raise RuntimeError(f"_make_wrapper_subclass: disttorch tensors live on the CPU, got device {device}")
    kind = (dtype or _dtype.get_default_dtype()).numpy
    shape = tuple(int(s) for s in size)
    out = object.__new__(cls)
    Tensor._init_state(out, np.broadcast_to(np.zeros((), dtype=kind), shape))
    out._wrapper_strides = _contiguous(shape) if strides is None else tuple(int(s) for s in strides)
    if requires_grad:
        out.requires_grad_(True)
    return out


Tensor._make_subclass = staticmethod(_make_subclass)
Tensor._make_wrapper_subclass = staticmethod(_make_wrapper_subclass)
