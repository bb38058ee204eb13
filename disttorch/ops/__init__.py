"""The op families, and the step that attaches them to ``Tensor`` as methods and operators.

Each family module lists the names it contributes as tensor methods in
``TENSOR_METHODS``; the functions themselves are exported at the top level
(``disttorch.add``) by ``disttorch/__init__.py``.

``Tensor`` (``disttorch/_tensor.py``) sits below autograd and the ops and imports neither:
every method that needs them (the operators, ``to``, ``backward``, a view's refresh after an
in-place change) is attached here, in one binding step, ``_bind``.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import importlib.util
import types
from typing import Any

import numpy as np

from .. import _storage
from .._tensor import Tensor
from ..autograd import backprop
from ..autograd import profiler as _profiler  # not `ops.profiler`, the operator namespace
from . import (
    as_strided,
    comparison,
    complex,
    elementwise,
    fake_quantize,
    indexing,
    inplace,
    linalg,
    linalg_householder,
    linalg_lowrank,
    mathfns,
    numeric_gradient,
    op_namespace,
    python_map,
    reduction,
    scatter_reduce,
    set_storage,
    shape,
    sparse,
    sparse_compressed,
    sparse_products,
    special,
    spectral,
    tensor_attributes,
    view_copies,
)
from ._numpy_names import accept_numpy_names
from .tensor_only import NO_ARRAYS, TENSOR_ONLY, refuse_arrays, require_tensors

FAMILIES = [
    complex,  # first: its result_type (of tensors and numbers) is the public one
    elementwise,
    reduction,
    shape,
    indexing,
    linalg,
    linalg_householder,
    linalg_lowrank,
    comparison,
    inplace,
    sparse,
    sparse_compressed,
    sparse_products,
    special,
    mathfns,
    tensor_attributes,
    scatter_reduce,
    numeric_gradient,
    python_map,
    spectral,
    as_strided,
    set_storage,
    fake_quantize,
    view_copies,
]


def _checked_operands(method: Any, name: str) -> Any:
    """Tensor method ``name`` refusing, as PyTorch's, a number where it takes only tensors
    (``t.atan2_(2)``) or a NumPy array where it takes a tensor or a number (``t.add(array)``)."""
    if name.rstrip("_") in TENSOR_ONLY:
        return require_tensors(method, name, method=True)
    return refuse_arrays(method, name, method=True) if name in NO_ARRAYS else method


def _reflected(fn: Any) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        return fn(other, self)

    return method


def _bind() -> None:
    for mod in FAMILIES:
        for name in mod.TENSOR_METHODS:
            setattr(Tensor, name, _checked_operands(accept_numpy_names(getattr(mod, name)), name))
    tensor_attributes.bind()
    complex.bind()
    for name, fn in _storage.TENSOR_METHODS.items():
        setattr(Tensor, name, fn)
    ew, la = elementwise, linalg
    Tensor.__add__ = Tensor.__radd__ = lambda a, b: ew.Add.apply(a, b)
    Tensor.__sub__ = lambda a, b: ew.Sub.apply(a, b)
    Tensor.__rsub__ = lambda a, b: ew.Sub.apply(b, a)
    Tensor.__mul__ = Tensor.__rmul__ = lambda a, b: ew.Mul.apply(a, b)
    Tensor.__truediv__ = lambda a, b: ew.Div.apply(a, b)
    Tensor.__rtruediv__ = lambda a, b: ew.Mul.apply(ew.reciprocal(a), b)  # PyTorch's: 1/a times b
    Tensor.__div__, Tensor.__rdiv__ = (
        Tensor.__truediv__,
        Tensor.__rtruediv__,
    )  # PyTorch keeps Python 2's names
    Tensor.__pow__ = ew.pow  # (its exponent's overflow check)
    Tensor.__rpow__ = lambda a, b: ew.Pow.apply(b, a)
    Tensor.__matmul__ = lambda a, b: la.matmul(a, b)  # through autocast
    Tensor.__rmatmul__ = lambda a, b: la.matmul(b, a)
    Tensor.__neg__ = lambda a: ew.Neg.apply(a)
    Tensor.__reversed__ = lambda a: a if a.dim() == 0 else a.flip(0)
    Tensor.__long__, Tensor.__nonzero__ = Tensor.__int__, Tensor.__bool__
    Tensor.backward = backprop.tensor_backward
    Tensor._refresh_view = inplace.refresh_view
    Tensor.mT = property(shape._matrix_transpose)
    Tensor.T = property(shape._reversed_dims)
    for mod in FAMILIES:
        for name, fn in getattr(mod, "TENSOR_OPERATORS", {}).items():
            setattr(Tensor, name, _checked_operands(_as_method(accept_numpy_names(fn)), name))
    _profiler.PROFILED_METHODS.update(  # a profiler times each as PyTorch's operator
        {name: f"aten::{name}" for name in inplace.TENSOR_METHODS if not name.startswith("__")}
    )
    _profiler.PROFILED_METHODS.update(
        {name: f"aten::{fn.__name__}" for name, fn in inplace.TENSOR_OPERATORS.items()}
    )
    for name in _BINARY_OPERATORS:
        setattr(Tensor, name, _numbers_and_tensors_only(getattr(Tensor, name)))
    for name in _NUMPY_DEFERRING:
        setattr(Tensor, name, _defer_to_numpy_arrays(getattr(Tensor, name)))
    Tensor.__rtruediv__ = _rtruediv(Tensor.__rtruediv__)


#: the binary operators that, as PyTorch's, take tensors, numbers and NumPy scalars only
_BINARY_OPERATORS = tuple(
    f"__{r}{name}__"
    for name in (
        "add",
        "sub",
        "mul",
        "truediv",
        "div",
        "pow",
        "matmul",
        "and",
        "or",
        "xor",
        "floordiv",
        "mod",
    )
    + ("lshift", "rshift")
    for r in ("", "r")
)
_OPERANDS = (
    Tensor,
    bool,
    int,
    float,
    builtins.complex,
    np.generic,
)  # (complex: the ops module here)
#: the operators that, as PyTorch's, leave a NumPy array operand to NumPy: ``t + np.array(2.0)``
#: is NumPy's ``add`` (its dtype rule; a tensor back through ``__array_wrap__``), and
#: ``np.array(2.0) + t`` a TypeError (NumPy defers to the tensor's reflected operator)
_NUMPY_DEFERRING = (
    _BINARY_OPERATORS
    + tuple(f"__{name}__" for name in ("ne", "lt", "le", "gt", "ge"))
    + tuple(
        f"__i{name}__" for name in "add sub mul truediv div pow and or xor floordiv mod lshift rshift".split()
    )
)


def _numbers_and_tensors_only(method: Any) -> Any:
    """``method`` returning ``NotImplemented`` for another operand than a tensor, a number or
    a NumPy value (one without ``__torch_function__``), as PyTorch's operators do: Python then
    tries the operand's reflected method, or raises its ``unsupported operand type(s)``."""

    @functools.wraps(method)
    def operator(a: Tensor, b: Any) -> Any:
        if not isinstance(b, _OPERANDS) and not hasattr(b, "__torch_function__"):
            return NotImplemented
        return method(a, b)

    return operator


def _defer_to_numpy_arrays(method: Any) -> Any:
    """``method`` returning ``NotImplemented`` for a NumPy array operand."""

    @functools.wraps(method)
    def operator(a: Tensor, b: Any) -> Any:
        if isinstance(b, np.ndarray):
            return NotImplemented
        return method(a, b)

    return operator


def _rtruediv(method: Any) -> Any:
    """``__rtruediv__``: PyTorch's ``reciprocal(a) * b``, so NumPy's multiply for an array."""

    @functools.wraps(method)
    def operator(a: Tensor, b: Any) -> Any:
        if isinstance(b, np.ndarray):
            return np.multiply(elementwise.reciprocal(a), b)
        return method(a, b)

    return operator


def _as_method(fn: Any) -> Any:
    """Python passes ``self`` to a class attribute only if it is a plain function (a bound
    ``Function.apply`` would lose it), so wrap anything else."""
    if isinstance(fn, types.FunctionType):
        return fn

    def method(self: Tensor, *args: Any) -> Any:
        return fn(self, *args)

    return method


_bind()

_NAMESPACES: dict[str, op_namespace.OpNamespace] = {}


def __getattr__(name: str) -> Any:
    """``torch.ops.aten`` and other operator namespaces (:mod:`.op_namespace`); a submodule
    of this package that is not imported yet is imported instead."""
    if name.startswith("_"):
        raise AttributeError(f"module 'disttorch.ops' has no attribute '{name}'")
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    if name not in _NAMESPACES:
        if name != "aten":
            _NAMESPACES[name] = op_namespace.OpNamespace(name)
            return _NAMESPACES[name]

        def aten_function(op: str) -> Any:
            """An ATen operator no op family has: one the modules registering ATen steps
            register (whether or not they were loaded yet), else ``torch.<op>`` or
            ``torch.nn.functional.<op>`` (a lazy re-export, looked up on first call)."""
            import disttorch

            from ..nn import functional
            from . import aten_impls  # noqa: F401  (registers its operators)

            registered = op_namespace.REGISTERED.get(f"aten::{op}")
            if registered is not None:
                return registered
            for home in (disttorch, functional):
                fn = getattr(home, op, None)
                if callable(fn) and not isinstance(fn, type):
                    return fn
            return None

        _NAMESPACES[name] = op_namespace.OpNamespace(name, FAMILIES, aten_function)
    return _NAMESPACES[name]
