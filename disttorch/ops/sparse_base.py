"""What every sparse layout shares (COO in ``sparse.py``, CSR/CSC/BSR/BSC in
``sparse_compressed.py``): a logical shape and a values tensor that carries autograd.

Attributes (shape, dtype, ``requires_grad``, ``grad_fn``), dtype casts, ``clone``/``detach``
and scaling by a scalar act on the values; each layout supplies ``layout``, its index
arrays and ``_with_values`` (the same indices over new values).
"""

from __future__ import annotations

from typing import Any

from .. import _dtype
from .._tensor import Size, Tensor, _check_device, device

__all__ = ["SparseBase"]


class SparseBase(Tensor):
    """Base of the sparse tensor classes: everything that only needs ``_sp_values`` and
    ``_sp_shape``."""

    _sp_values: Tensor
    _sp_shape: tuple
    _functions_call_methods = True  # torch.neg(s), torch.transpose(s, ...): the class's methods

    @classmethod
    def _blank(cls) -> SparseBase:
        s = object.__new__(cls)
        s._grad = None
        s._rg = False
        s._output_nr = 0
        s._version_box = [0]
        s._hooks = s._post_hooks = s._acc = None
        s._retains_grad = False
        s._base = None
        return s

    def _with_values(self, values: Tensor) -> SparseBase:
        raise NotImplementedError

    @property
    def _data(self):
        raise NotImplementedError(
            f"this operation is not supported for tensors with layout {self.layout}; "
            "convert with .to_dense() first"
        )

    # ------------------------------------------------------------------ arithmetic
    # Each layout's ``__add__`` adds two sparse tensors of its layout or a dense tensor.
    def __radd__(self, other: Any) -> Tensor:
        if isinstance(other, Tensor):
            return other + self.to_dense()
        return self.__add__(other)

    def add(self, other: Any) -> Tensor:
        return self.__add__(other)

    def __sub__(self, other: Any) -> Tensor:
        return self + (-other)

    sub = __sub__

    # ------------------------------------------------------------------ attributes
    @property
    def shape(self) -> Size:
        return Size(self._sp_shape)

    def size(self, dim: int | None = None) -> Size | int:
        return Size(self._sp_shape) if dim is None else self._sp_shape[dim]

    def dim(self) -> int:
        return len(self._sp_shape)

    ndim = property(dim)

    def numel(self) -> int:
        n = 1
        for s in self._sp_shape:
            n *= s
        return n

    @property
    def dtype(self):
        return self._sp_values.dtype

    @property
    def device(self) -> device:
        return device("cpu")

    @property
    def grad_fn(self):
        return self._sp_values.grad_fn

    @property
    def requires_grad(self) -> bool:
        return self._sp_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._sp_values.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> SparseBase:
        self._sp_values.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._sp_values.is_leaf

    @property
    def grad(self) -> SparseBase | None:
        """The gradient of a leaf sparse tensor: sparse, with this tensor's indices."""
        g = self._sp_values.grad
        return None if g is None else self._with_values(g)

    @grad.setter
    def grad(self, value: Any) -> None:
        self._sp_values.grad = None if value is None else value._sp_values

    def is_floating_point(self) -> bool:
        return self._sp_values.is_floating_point()

    def element_size(self) -> int:
        return self._sp_values.element_size()

    # ------------------------------------------------------------------ casts and copies
    def to(self, *args: Any, **kwargs: Any) -> SparseBase:
        target = kwargs.get("dtype")
        for a in args:
            if isinstance(a, _dtype.dtype):
                target = a
            elif isinstance(a, (str, device)):
                _check_device(a)
        if "device" in kwargs:
            _check_device(kwargs["device"])
        if target is None or target == self.dtype:
            return self
        return self._with_values(self._sp_values.to(target))

    def cpu(self) -> SparseBase:
        return self

    def float(self) -> SparseBase:
        return self.to(_dtype.float32)

    def double(self) -> SparseBase:
        return self.to(_dtype.float64)

    def long(self) -> SparseBase:
        return self.to(_dtype.int64)

    def int(self) -> SparseBase:
        return self.to(_dtype.int32)

    def half(self) -> SparseBase:
        return self.to(_dtype.float16)

    def bool(self) -> SparseBase:
        return self.to(_dtype.bool)

    def clone(self, *, memory_format: Any = None) -> SparseBase:
        return self._with_values(self._sp_values.clone())

    def detach(self) -> SparseBase:
        return self._with_values(self._sp_values.detach())

    def numpy(self, *, force: bool = False) -> Any:
        raise TypeError("can't convert a sparse tensor to numpy; call .to_dense() first")

    # ------------------------------------------------------------------ scaling
    def __mul__(self, other: Any) -> SparseBase:
        if isinstance(other, SparseBase) or (isinstance(other, Tensor) and other.dim() > 0):
            raise NotImplementedError(
                "sparse * tensor: only multiplication by a scalar or a 0-dim tensor is "
                f"supported for tensors with layout {self.layout}"
            )
        return self._with_values(self._sp_values * other)

    __rmul__ = __mul__

    def mul(self, other: Any) -> SparseBase:
        return self * other

    def __truediv__(self, other: Any) -> SparseBase:
        if isinstance(other, Tensor) and other.dim() > 0:
            raise NotImplementedError(
                "sparse / tensor: only division by a scalar or a 0-dim tensor is "
                f"supported for tensors with layout {self.layout}"
            )
        return self._with_values(self._sp_values / other)

    div = __truediv__

    def __neg__(self) -> SparseBase:
        return self._with_values(-self._sp_values)


#: Elementwise functions with ``f(0) == 0``: on a sparse tensor they act on the values and
#: keep the pattern (a COO tensor is coalesced first, since ``f(a + b) != f(a) + f(b)``).
ZERO_PRESERVING = (
    "abs neg negative positive sin sinh tan tanh asin asinh atan atanh arcsin arcsinh arctan "
    "arctanh sqrt square relu sign sgn signbit ceil floor round trunc fix frac expm1 log1p erf "
    "erfinv rad2deg deg2rad isnan isinf isposinf isneginf nan_to_num conj_physical"
).split()


def _on_values(name: str) -> Any:
    def method(self: SparseBase, *args: Any, **kwargs: Any) -> SparseBase:
        s = self.coalesce() if self.layout.name == "sparse_coo" else self
        return s._with_values(getattr(s._sp_values, name)(*args, **kwargs))

    method.__name__ = name
    method.__doc__ = f"``{name}`` of the specified values (``{name}(0) == 0``, so the pattern is kept)."
    return method


for _name in ZERO_PRESERVING:
    setattr(SparseBase, _name, _on_values(_name))
del _name
