"""Torch functions hand foreign arguments to their ``__torch_function__``.

disttorch's ops do not dispatch on ``__torch_function__`` (their hot path stays free of it).
A program that uses ``torch.fx`` needs them to: ``torch.relu(proxy)`` and ``F.linear(proxy,
w)`` must record nodes, while tracing and when a graph is built by hand from proxies. So
importing ``torch.fx`` swaps the public functions of ``torch`` that take tensors, and those of
``torch.nn.functional``, for twins that first look for an argument that is not a Tensor but has a
``__torch_function__`` (a :class:`~disttorch.fx.Proxy`), directly or inside a list or tuple
argument (``torch.cat([p, q])``), and if it finds one calls
:func:`~disttorch.overrides.handle_torch_function`. The twin replaces the function wherever
a disttorch module bound it (``from .functional import relu`` included), carries the
function's name and the public module it lives in (``torch.relu`` prints, pickles and
generates code as ``torch.relu``), and costs other calls one scan of their arguments.

PyTorch's Python-level ``torch.nn.functional`` functions hand ``__torch_function__`` their
required parameters positionally and every parameter with a default by keyword, defaults
included (``F.relu(p)`` is recorded as ``relu(p, inplace=False)``); their twins do the
same. Those PyTorch implements in C++ (``F.linear``, ``F.conv2d``, ...) pass the call as
written, like the functions of ``torch``.

A tensor on the left of an operator with a proxy on the right (``self.buf + x``) records, as
in PyTorch, the tensor method the operator stands for (``buf.add(x)``): Tensor's binary
operators get twins too."""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any

from .._tensor import Tensor
from .._torch_function import handle_torch_function

__all__ = ["install"]

#: functions of ``torch.nn.functional`` that PyTorch implements in C++ (calls pass as written)
_NATIVE_FUNCTIONAL = frozenset(
    "adaptive_avg_pool1d avg_pool1d avg_pool2d avg_pool3d bilinear celu_ channel_shuffle conv1d "
    "conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d cosine_similarity "
    "elu_ gelu hardshrink hardtanh_ leaky_relu_ linear logsigmoid native_channel_shuffle one_hot "
    "pairwise_distance pdist pixel_shuffle pixel_unshuffle prelu relu_ rrelu_ "
    "scaled_dot_product_attention selu_ softplus softshrink threshold_".split()
)
_FOREIGN: dict[type, bool] = {}
_installed = False


def _is_foreign(value: Any) -> bool:
    kind = type(value)
    verdict = _FOREIGN.get(kind)
    if verdict is None:
        verdict = _FOREIGN[kind] = (
            not issubclass(kind, Tensor) and getattr(kind, "__torch_function__", None) is not None
        )
    return verdict


def _foreign_args(values: Iterable[Any]) -> list:
    found = []
    for v in values:
        if type(v) in (list, tuple):
            found.extend(x for x in v if _is_foreign(x))
        elif _is_foreign(v):
            found.append(v)
    return found


def _by_keyword(signature: inspect.Signature, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``args``/``kwargs`` as PyTorch's Python functionals pass them on: required parameters
    positionally, the others (defaults filled in) by keyword."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs  # the function itself will say what is wrong
    bound.apply_defaults()
    positional, keywords = [], {}
    for name, value in bound.arguments.items():
        param = signature.parameters[name]
        if param.kind is param.VAR_POSITIONAL:
            positional.extend(value)
        elif param.kind is param.VAR_KEYWORD:
            keywords.update(value)
        elif param.default is param.empty and param.kind is not param.KEYWORD_ONLY and not keywords:
            positional.append(value)
        else:
            keywords[name] = value
    return tuple(positional), keywords


def _dispatching(fn: Callable, module: str, name: str) -> Callable:
    normalise = module.endswith(".functional") and name not in _NATIVE_FUNCTIONAL
    signature = inspect.signature(fn) if normalise else None

    @functools.wraps(fn)
    def twin(*args: Any, **kwargs: Any) -> Any:
        foreign = _foreign_args(args)
        if kwargs:
            foreign += _foreign_args(kwargs.values())
        if foreign:
            if signature is not None:
                args, kwargs = _by_keyword(signature, args, kwargs)
            return handle_torch_function(twin, foreign, *args, **kwargs)
        return fn(*args, **kwargs)

    twin.__module__ = module
    twin.__name__ = twin.__qualname__ = name  # an alias (torch.arctan of atan) keeps its own name
    return twin


#: where the functions of ``torch`` that take tensors come from (not its settings and switches)
_TENSOR_MODULES = ("disttorch.ops.", "disttorch._tensor", "disttorch._random", "disttorch._creation")


def _takes_tensors(namespace: types.ModuleType, value: Any) -> bool:
    if not isinstance(value, types.FunctionType):
        return False
    return namespace.__name__ != "disttorch" or value.__module__.startswith(_TENSOR_MODULES)


#: Tensor operator -> the method PyTorch records for it when the right operand is a proxy
_TENSOR_OPERATORS = {
    "__add__": "add",
    "__sub__": "sub",
    "__mul__": "mul",
    "__truediv__": "div",
    "__floordiv__": "__floordiv__",
    "__mod__": "remainder",
    "__pow__": "pow",
    "__matmul__": "matmul",
    "__eq__": "eq",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
    "__getitem__": "__getitem__",
    "__and__": "__and__",
    "__or__": "__or__",
    "__xor__": "__xor__",
    "__lshift__": "__lshift__",
    "__rshift__": "__rshift__",
}


def _operator_twin(operator: Callable, dunder: str, method: str) -> Callable:
    @functools.wraps(operator)
    def twin(self: Tensor, other: Any) -> Any:
        foreign = _foreign_args((other,))
        if foreign:
            return handle_torch_function(getattr(Tensor, method), foreign, self, other)
        return operator(self, other)

    twin.__name__ = twin.__qualname__ = dunder  # Tensor.__floordiv__ is named so (not floor_divide)
    return twin


def install() -> None:
    """Swap the public functions of ``torch`` and ``torch.nn.functional`` for dispatching
    twins, in every loaded disttorch module (once per process)."""
    global _installed
    if _installed:
        return
    _installed = True
    for dunder, method in _TENSOR_OPERATORS.items():
        if hasattr(Tensor, dunder):  # (shifts exist only where Tensor has them)
            setattr(Tensor, dunder, _operator_twin(getattr(Tensor, dunder), dunder, method))
    import disttorch
    import disttorch.nn.functional as functional

    twins: dict[int, dict[str, Callable]] = {}  # original -> its twin under each public name
    for namespace in (functional, disttorch):  # a function in both is named after torch
        for name, value in list(vars(namespace).items()):
            if _takes_tensors(namespace, value) and not name.startswith("_") and name.islower():
                home = namespace.__name__
                if name in _NATIVE_FUNCTIONAL and getattr(disttorch, name, None) is value:
                    home = "disttorch"  # F.conv2d is torch.conv2d in PyTorch, and prints so
                twins.setdefault(id(value), {})[name] = _dispatching(value, home, name)

    def twin_of(name: str, value: Any) -> Callable | None:
        named = twins.get(id(value)) if isinstance(value, types.FunctionType) else None
        return None if named is None else named.get(name) or next(iter(named.values()))

    for mod_name, module in list(sys.modules.items()):
        if module is None or not mod_name.startswith("disttorch") or mod_name.startswith("disttorch.fx"):
            continue
        namespace = vars(module)
        for name, value in list(namespace.items()):
            twin = twin_of(name, value)
            if twin is not None:
                namespace[name] = twin
            elif isinstance(value, types.FunctionType) and value.__module__ == mod_name:
                _retarget_defaults(value, twin_of)
            elif isinstance(value, type) and value.__module__ == mod_name:
                _retarget_class(value, twin_of)
    _forget_mode_swaps()


def _retarget_class(cls: type, twin_of: Callable[[str, Any], Callable | None]) -> None:
    """A class's staticmethods holding a function (``_conv = staticmethod(conv2d)``) and its
    methods' defaults (``activation=F.relu``) name the twins, so ``activation is F.relu``
    still holds."""
    for attr, kept in list(vars(cls).items()):
        inner = kept.__func__ if isinstance(kept, (staticmethod, classmethod)) else kept
        if not isinstance(inner, types.FunctionType):
            continue
        twin = twin_of(inner.__name__, inner) if isinstance(kept, staticmethod) else None
        if twin is not None:
            setattr(cls, attr, staticmethod(twin))
        else:
            _retarget_defaults(inner, twin_of)


def _retarget_defaults(fn: types.FunctionType, twin_of: Callable[[str, Any], Callable | None]) -> None:
    if fn.__defaults__:
        fn.__defaults__ = tuple(twin_of(getattr(d, "__name__", ""), d) or d for d in fn.__defaults__)
    if fn.__kwdefaults__:
        fn.__kwdefaults__ = {
            k: twin_of(getattr(d, "__name__", ""), d) or d for k, d in fn.__kwdefaults__.items()
        }


def _forget_mode_swaps() -> None:
    """``torch.overrides`` modes cache, on first use, the functions they wrap: let them find
    the twins instead (unless a mode is active now, whose swaps stay as they are)."""
    from .. import overrides

    with overrides._PATCHES.lock:
        if overrides._PATCHES.entered == 0:
            overrides._PATCHES.swaps = None
