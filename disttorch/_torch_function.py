"""The ``__torch_function__`` protocol's dispatch, at the core layer so that Tensor methods
(``Tensor.module_load``) can offer it; ``torch.overrides`` re-exports it with the rest of
the protocol's helpers. ``torch._assert`` (an assert that tracing records) dispatches here.

Which arguments dispatch is PyTorch's rule: any object whose type has a
``__torch_function__`` other than ``torch._C._disabled_torch_function_impl``, except a plain
``Tensor`` (a ``Parameter`` opts out with the disabled one). A user's ``Tensor`` subclass
inherits ``Tensor.__torch_function__``, which runs the function with subclass dispatch off and
gives the result the subclass's type (``_convert``), so ``MyT`` stays ``MyT`` through ops.
disttorch's own subclasses (sparse, quantized, nested, masked, ``DTensor``...) stand for
PyTorch's plain tensors or dispatch by their own means: they never dispatch here, except one
whose class sets ``_function_dispatch`` (``vmap``'s batched tensor)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from ._public_name import is_disttorch_class
from ._tensor import Tensor

__all__ = [
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "_assert",
    "_disabled_torch_dispatch_impl",
    "_disabled_torch_function_impl",
    "dispatch_args",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
]


def _disabled_torch_function_impl(
    func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
) -> Any:
    """``__torch_function__ = torch._C._disabled_torch_function_impl`` makes a Tensor subclass
    opt out of the protocol: the function runs as on a plain tensor."""
    return func(*args, **(kwargs or {}))


class _State(threading.local):
    """Per thread: how many ``DisableTorchFunction(Subclass)`` blocks are open."""

    def __init__(self) -> None:
        self.disabled = 0


_STATE = _State()


class DisableTorchFunctionSubclass:
    """``torch._C.DisableTorchFunctionSubclass``: inside, arguments' ``__torch_function__``
    are not called (functions run as on plain tensors); ``Tensor.__torch_function__`` runs the
    function inside one."""

    def __enter__(self) -> None:
        _STATE.disabled += 1

    def __exit__(self, *exc: object) -> None:
        _STATE.disabled -= 1


#: ``torch._C.DisableTorchFunction``: the same here (function modes are not told apart)
DisableTorchFunction = DisableTorchFunctionSubclass


def _is_torch_function_enabled() -> bool:
    """``torch._C._is_torch_function_enabled``: False inside a ``DisableTorchFunction`` block."""
    return _STATE.disabled == 0


#: type -> whether its objects dispatch (filled on first sight of each type)
_VERDICT: dict[type, bool] = {
    Tensor: False,
    int: False,
    float: False,
    bool: False,
    complex: False,
    str: False,
    type(None): False,
    slice: False,
    type(Ellipsis): False,
}


def _disabled_torch_dispatch_impl(
    func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
) -> Any:
    """``Tensor.__torch_dispatch__`` (``torch._C._disabled_torch_dispatch_impl``): a type
    that keeps it does not dispatch below the public functions."""
    return func(*args, **(kwargs or {}))


#: types whose ``__torch_function__`` dispatches, and those with a ``__torch_dispatch__``
_TF: set[type] = set()
_TD: set[type] = set()


def _type_dispatches(kind: type) -> bool:
    """Whether objects of type ``kind`` dispatch, through ``__torch_function__`` or (a Tensor
    subclass) ``__torch_dispatch__`` (remembered per type; never lists and tuples, whose
    items callers look into)."""
    if kind is list or kind is tuple:
        return False
    own = (
        issubclass(kind, Tensor)
        and is_disttorch_class(kind)
        and not getattr(kind, "_function_dispatch", False)
    )
    tf = getattr(kind, "__torch_function__", None)
    td = getattr(kind, "__torch_dispatch__", None)
    if not own and tf is not None and tf is not _disabled_torch_function_impl:
        _TF.add(kind)
    if not own and issubclass(kind, Tensor) and td is not None and td is not _disabled_torch_dispatch_impl:
        _TD.add(kind)
    verdict = _VERDICT[kind] = kind in _TF or kind in _TD
    return verdict


def _forget_type(kind: type) -> None:
    """Drop what was decided for ``kind`` (decided again on its next sight)."""
    _VERDICT.pop(kind, None)
    _TF.discard(kind)
    _TD.discard(kind)


def _overrides(obj: Any) -> bool:
    """Whether ``obj``'s ``__torch_function__`` dispatches."""
    kind = type(obj)
    if _VERDICT.get(kind) is None:
        _type_dispatches(kind)
    return kind in _TF


def relevant_args(args: tuple, kwargs: dict | None = None) -> list:
    """The arguments of a call (directly, or one level down in a list or tuple) whose
    ``__torch_function__`` dispatches; empty inside a ``DisableTorchFunction`` block."""
    if _STATE.disabled:
        return []
    return [v for v in _flat(args, kwargs) if _overrides(v)]


def dispatch_args(args: tuple, kwargs: dict | None = None) -> list:
    """The tensor arguments of a call (as :func:`relevant_args` finds them) whose type has
    a ``__torch_dispatch__``."""
    return [v for v in _flat(args, kwargs) if _VERDICT.get(type(v)) and type(v) in _TD]


def _flat(args: tuple, kwargs: dict | None) -> list:
    found: list = []
    for values in (args, kwargs.values()) if kwargs else (args,):
        for v in values:
            kind = type(v)
            if kind is list or kind is tuple:
                found.extend(x for x in v if _VERDICT.get(type(x)) is not False)
            elif _VERDICT.get(kind) is not False:
                found.append(v)
    for v in found:
        if _VERDICT.get(type(v)) is None:
            _type_dispatches(type(v))
    return found


#: the entered ``TorchDispatchMode``s, innermost last (``torch.utils._python_dispatch``)
DISPATCH_MODES: list = []


def handle_torch_dispatch(func: Callable, dispatching: list, args: tuple, kwargs: dict) -> Any:
    """Call ``__torch_dispatch__(func, types, args, kwargs)`` of the types of ``dispatching``
    (subclasses first) until one returns something other than ``NotImplemented``."""
    kinds: list = []
    for kind in (type(a) for a in dispatching):
        if kind not in kinds:
            at = next((i for i, k in enumerate(kinds) if issubclass(kind, k)), len(kinds))
            kinds.insert(at, kind)
    types = tuple(kinds)
    for kind in kinds:
        result = kind.__torch_dispatch__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(
        f"no implementation found for '{func}' on types that implement __torch_dispatch__: {kinds}"
    )


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether any of ``relevant_args`` overrides ``__torch_function__`` (never inside a
    ``DisableTorchFunction`` block)."""
    return _STATE.disabled == 0 and any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(obj: Any) -> bool:
    """``has_torch_function((obj,))``."""
    return has_torch_function((obj,))


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``."""
    return has_torch_function(args)


def _overloaded_args(relevant_args: Iterable[Any]) -> list:
    out: list = []
    for arg in relevant_args:
        if not _overrides(arg) or any(type(a) is type(arg) for a in out):
            continue
        at = next((i for i, a in enumerate(out) if issubclass(type(arg), type(a))), len(out))
        out.insert(at, arg)
    return out


def handle_torch_function(
    public_api: Callable, relevant_args: Iterable[Any], *args: Any, **kwargs: Any
) -> Any:
    """Call ``__torch_function__(public_api, types, args, kwargs)`` of the overriding arguments
    until one returns something other than ``NotImplemented``; raise ``TypeError`` if none does."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__name__", repr(public_api))
    raise TypeError(
        f"no implementation found for '{name}' on types that implement __torch_function__: "
        f"{[type(a) for a in overloaded]}"
    )


def _tensor_torch_function(
    cls: type, func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
) -> Any:
    """``Tensor.__torch_function__``: run ``func`` with subclass dispatch off, then give its
    tensor results the type ``cls`` (``NotImplemented`` when an argument's type is not a base
    of ``cls``)."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        return _convert(func(*args, **(kwargs or {})), cls)


def _convert(ret: Any, cls: type) -> Any:
    """``ret`` with its tensors (also inside a list or tuple) shown as ``cls``."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor):
        return ret if isinstance(ret, cls) else ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        make = getattr(type(ret), "_make", None)  # a named tuple (torch.return_types.max)
        return make(items) if make is not None else type(ret)(items)
    return ret


Tensor.__torch_function__ = classmethod(_tensor_torch_function)
Tensor.__torch_dispatch__ = staticmethod(_disabled_torch_dispatch_impl)


def _assert(condition: Any, message: str) -> None:
    """``torch._assert``: ``assert condition, message`` that a tracer can record (a proxy
    condition goes to its ``__torch_function__``)."""
    if type(condition) is not Tensor and has_torch_function((condition,)):
        return handle_torch_function(_assert, (condition,), condition, message)
    if not condition:
        raise AssertionError(message)
    return None


_assert.__module__ = "disttorch"  # published as torch._assert: pickles and prints by that name
