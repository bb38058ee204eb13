"""Symbolic tracing: ``Tracer`` runs a module's ``forward`` on proxies and records what it
does as a :class:`Graph`; ``symbolic_trace`` wraps the result in a :class:`GraphModule`;
``wrap`` marks a module-level function to be recorded as one call instead of traced into.

While a trace runs, ``Module.__call__`` and ``Module.__getattr__`` are patched so that
submodule calls go through :meth:`Tracer.call_module` (leaves become ``call_module``
nodes) and parameters read in ``forward`` become ``get_attr`` nodes; functions marked by
``wrap`` (and ``math`` functions) are patched in the globals that name them. Everything
is restored when the trace ends, however it ends."""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import types
import typing
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .._tensor import Tensor
from ..nn.modules.container import Sequential
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .graph import Graph
from .graph_module import GraphModule
from .node import Argument, map_aggregate
from .proxy import Proxy, TracerBase

__all__ = ["PH", "Tracer", "symbolic_trace", "wrap"]

#: (globals dict, name) of every function ``wrap`` marked
_WRAPPED: list[tuple[dict, str]] = []


class _PlaceholderMarker:
    """``PH``: in ``concrete_args``, an argument that stays an input of the graph."""

    def __repr__(self) -> str:
        return "PH"


PH = _PlaceholderMarker()


def wrap(fn_or_name: Callable | str) -> Callable | str:
    """Record calls of the module-level function ``fn_or_name`` (or the function of that
    name in the caller's module) as ``call_function`` nodes instead of tracing into them.
    Call it at module scope; returns its argument."""
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    name = fn_or_name if isinstance(fn_or_name, str) else getattr(fn_or_name, "__name__", None)
    if not isinstance(name, str):
        raise AssertionError("wrap must be called with a function or the name of one")
    if not any(g is caller.f_globals and n == name for g, n in _WRAPPED):
        _WRAPPED.append((caller.f_globals, name))
    return fn_or_name


def _find_proxy(*values: Any) -> Proxy | None:
    found: list[Proxy] = []
    map_aggregate(values, lambda a: found.append(a) if isinstance(a, Proxy) else None)
    return found[0] if found else None


def _recording(fn: Callable) -> Callable:
    """``fn`` that, given a proxy, records one ``call_function`` node instead of running."""

    @functools.wraps(fn)
    def patched(*args: Any, **kwargs: Any) -> Any:
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return fn(*args, **kwargs)
        out = proxy.tracer.create_proxy("call_function", fn, args, kwargs)
        out.node.meta["is_wrapped"] = True
        return out

    return patched


_ABSENT = object()


@contextmanager
def _patched(targets: list[tuple[Any, str, Any]]) -> Iterator[None]:
    """Set ``setattr(obj, name, value)`` (or ``dict[name] = value``) for each, restore after."""
    saved = []
    try:
        for obj, name, value in targets:
            if isinstance(obj, dict):
                saved.append((obj, name, obj.get(name, _ABSENT)))
                obj[name] = value
            else:
                saved.append((obj, name, obj.__dict__[name]))
                setattr(obj, name, value)
        yield
    finally:
        for obj, name, old in reversed(saved):
            if isinstance(obj, dict) and old is _ABSENT:
                del obj[name]  # a builtin wrap("len") shadowed in the module for the trace
            elif isinstance(obj, dict):
                obj[name] = old
            else:
                setattr(obj, name, old)


class Tracer(TracerBase):
    """Records a module's ``forward`` (or a function) as a :class:`Graph`. Override
    :meth:`is_leaf_module`, :meth:`call_module`, :meth:`create_proxy`, :meth:`create_node`
    or :meth:`create_arg` to change what is recorded."""

    def __init__(
        self,
        autowrap_modules: tuple = (math,),
        autowrap_functions: tuple = (),
        param_shapes_constant: bool = False,
    ) -> None:
        super().__init__()
        self._autowrap_ids = {
            id(v)
            for m in autowrap_modules
            for k, v in vars(m).items()
            if not k.startswith("_") and callable(v)
        }
        self._autowrap_ids |= {id(f) for f in autowrap_functions}
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict[Module, str] | None = None
        self.tensor_attrs: dict[int, str] = {}

    # ------------------------------------------------------------------ overridable policy
    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """Whether ``m`` is recorded as one ``call_module`` node: the modules of ``torch.nn``
        are, but ``Sequential``; user modules are traced into."""
        module = type(m).__module__
        from_nn = module.startswith(("disttorch.nn.", "torch.nn.", "torch.ao.nn."))
        return from_nn and not isinstance(m, Sequential)

    def path_of_module(self, mod: Module) -> str:
        """The qualified name of ``mod`` in the root module; ``NameError`` if it is not one."""
        if self.submodule_paths is None:
            self.submodule_paths = {m: name for name, m in self.root.named_modules()}
        path = self.submodule_paths.get(mod)
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m: Module, forward: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        """A submodule call: a ``call_module`` node for a leaf, else trace into ``forward``."""
        qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", qualified_name, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Any]) -> Any:
        """A module attribute read in ``forward``: a parameter becomes a ``get_attr`` proxy."""
        if isinstance(attr_val, Parameter):
            for name, p in self.root.named_parameters():
                if attr_val is p:
                    if name not in parameter_proxy_cache:
                        parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                    return parameter_proxy_cache[name]
        return attr_val

    def create_arg(self, a: Any) -> Argument:
        """As :meth:`TracerBase.create_arg`, and: a parameter, buffer or tensor attribute of
        the root becomes a ``get_attr`` node; another tensor is stored on the root as
        ``_tensor_constant<N>`` and read by ``get_attr``; a submodule is read by ``get_attr``."""
        if isinstance(a, Parameter):
            for name, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Module):
            return self.create_node("get_attr", self.path_of_module(a), (), {})
        if isinstance(a, Tensor):
            name = self.tensor_attrs.get(id(a))
            if name is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                name = f"_tensor_constant{i}"
                setattr(self.root, name, a)
                self.tensor_attrs[id(a)] = name
            return self.create_node("get_attr", name, (), {})
        return super().create_arg(a)

    # ------------------------------------------------------------------ the trace
    def trace(self, root: Module | Callable[..., Any], concrete_args: dict[str, Any] | None = None) -> Graph:
        """Run ``root`` (a module's ``forward``, or a function) on proxies; return the graph.
        ``concrete_args`` fixes some inputs to values (``PH`` keeps one an input)."""
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            bound: tuple = (root,)
        else:
            self.root = Module()
            fn = root
            bound = ()
        self.graph = Graph(tracer_cls=type(self))
        self.submodule_paths = None
        self.tensor_attrs = self._collect_tensor_attrs(self.root)
        fn, args = self._placeholders(fn, len(bound), concrete_args or {})
        parameter_proxy_cache: dict[str, Any] = {}
        original_call, original_getattr = Module.__call__, Module.__getattr__
        tracer = self

        def module_call(mod: Module, *a: Any, **k: Any) -> Any:
            return tracer.call_module(mod, lambda *a2, **k2: original_call(mod, *a2, **k2), a, k)

        def module_getattr(mod: Module, attr: str) -> Any:
            return tracer.getattr(attr, original_getattr(mod, attr), parameter_proxy_cache)

        patches: list[tuple[Any, str, Any]] = [
            (Module, "__call__", module_call),
            (Module, "__getattr__", module_getattr),
        ]
        patches += [
            (g, name, _recording(g[name] if name in g else getattr(builtins, name)))
            for g, name in _WRAPPED
            if name in g or hasattr(builtins, name)
        ]
        fn_globals = getattr(fn, "__globals__", {})
        patches += [
            (fn_globals, k, _recording(v)) for k, v in fn_globals.items() if id(v) in self._autowrap_ids
        ]
        with _patched(patches):
            result = fn(*bound, *args)
        self.create_node(
            "output",
            "output",
            (self.create_arg(result),),
            {},
            type_expr=_annotations(fn).get("return"),
        )
        return self.graph

    def _placeholders(self, fn: Callable, skip: int, concrete_args: dict[str, Any]) -> tuple[Callable, list]:
        """``fn`` (made to take every parameter positionally when it has ``*args`` or
        ``**kwargs``) and the placeholders (or concrete values) to call it with."""
        params = list(inspect.signature(fn).parameters.values())
        hints = _annotations(fn)
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            fn = _all_positional(fn)
            params.sort(key=lambda p: _CODE_ORDER[p.kind])
        args = []
        for p in params[skip:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                stars = "*" if p.kind is p.VAR_POSITIONAL else "**"
                args.append(self.create_proxy("placeholder", f"{stars}{p.name}", (), {}))
                continue
            if p.name in concrete_args:
                args.append(self._concrete(p.name, concrete_args[p.name]))
                continue
            default = () if p.default is p.empty else (p.default,)
            args.append(self.create_proxy("placeholder", p.name, default, {}, type_expr=hints.get(p.name)))
        return fn, args

    def _concrete(self, name: str, value: Any) -> Any:
        """A ``concrete_args`` entry: still an input (``<name>_1``), but the program is
        specialised on ``value`` and checks, when run, that it is given that value."""
        proxy = self.create_proxy("placeholder", f"{name}_1", (), {})
        if value is PH:
            return proxy
        message = f"{name} has been specialized to have value {value} but got another value"
        if value is None:
            self.create_proxy("call_function", _assert_is_none, (proxy, message), {})
        elif isinstance(value, (str, int, float, bool, complex)):
            import disttorch

            disttorch._assert(proxy == value, message)
        else:
            warnings.warn(
                f"Was not able to add assertion to guarantee correct input {name} to specialized "
                "function. It is up to the user to make sure that your inputs match the inputs "
                "you specialized the function with.",
                stacklevel=3,
            )
        return value

    @staticmethod
    def _collect_tensor_attrs(root: Module) -> dict[int, str]:
        found = {id(t): name for name, t in root.named_buffers()}
        for prefix, m in root.named_modules():
            for k, v in vars(m).items():
                if isinstance(v, Tensor) and not isinstance(v, Parameter):
                    found.setdefault(id(v), f"{prefix}.{k}" if prefix else k)
        return found


#: where each kind of parameter sits in a code object: positional, keyword-only, *args, **kwargs
_CODE_ORDER = {
    inspect.Parameter.POSITIONAL_ONLY: 0,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: 0,
    inspect.Parameter.KEYWORD_ONLY: 1,
    inspect.Parameter.VAR_POSITIONAL: 2,
    inspect.Parameter.VAR_KEYWORD: 3,
}


def _all_positional(fn: Callable) -> Callable:
    """``fn`` taking all its parameters positionally, in its code's order, ``*args`` and
    ``**kwargs`` included as plain parameters (so a proxy can stand for each)."""
    if not isinstance(fn, types.FunctionType):
        raise NotImplementedError(f"symbolic_trace: cannot trace *args/**kwargs of {fn!r}")
    co = fn.__code__
    varargs = bool(co.co_flags & inspect.CO_VARARGS) + bool(co.co_flags & inspect.CO_VARKEYWORDS)
    code = co.replace(
        co_argcount=co.co_argcount + co.co_kwonlyargcount + varargs,
        co_kwonlyargcount=0,
        co_flags=co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS),
    )
    return types.FunctionType(
        code, fn.__globals__, fn.__name__, None, fn.__closure__
    )  # (no annotations: as PyTorch)


def _assert_is_none(value: object, msg: str) -> None:
    """The check of a ``concrete_args`` entry fixed to ``None``."""
    if value is not None:
        raise AssertionError(msg)


def _annotations(fn: Callable) -> dict[str, Any]:
    """``fn``'s annotations as types: a string (``from __future__ import annotations``) is
    resolved in ``fn``'s globals, and one that cannot be is left out (the code is written
    without it)."""
    raw = getattr(fn, "__annotations__", None) or {}
    try:
        return typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - a name not defined at run time
        return {k: v for k, v in raw.items() if not isinstance(v, str)}


def symbolic_trace(
    root: Module | Callable[..., Any], concrete_args: dict[str, Any] | None = None
) -> GraphModule:
    """Trace ``root`` into a :class:`GraphModule` named after its class (or function)."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
