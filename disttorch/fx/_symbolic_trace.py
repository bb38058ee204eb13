"""Symbolic tracing: ``Tracer`` runs a module's ``forward`` on proxies and records what it
does as a :class:`Graph`; ``symbolic_trace`` wraps the result in a :class:`GraphModule`;
``wrap`` marks a module-level function to be recorded as one call instead of traced into.

While a trace runs, ``Module.__call__`` and ``Module.__getattr__`` are patched so that
submodule calls go through :meth:`Tracer.call_module` (leaves become ``call_module``
nodes) and parameters read in ``forward`` become ``get_attr`` nodes; functions marked by
``wrap`` (and ``math`` functions) are patched in the globals that name them. Everything
is restored when the trace ends, however it ends. The patching helpers keep PyTorch's
names (``_Patcher``, ``_autowrap_check``, ``_patch_wrapped_functions``,
``_orig_module_call``...) and ``Tracer.create_args_for_root`` is there, so a library's own
``Tracer.trace`` written against PyTorch's (PyG's ``to_hetero``) runs."""

from __future__ import annotations

import builtins
import contextlib
import functools
import inspect
import math
import types
import typing
import warnings
from collections.abc import Callable, Iterator
from types import FunctionType
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
__all__ += ["FunctionType", "Proxy", "ScriptObject", "compatibility"]  # names PyTorch's module has

#: what a trace patches back to (PyTorch's names; libraries that trace read them)
_orig_module_call = Module.__call__
_orig_module_getattr = Module.__getattr__


class ScriptObject:
    """``torch._C.ScriptObject``: a TorchScript class instance (none exist here)."""


def compatibility(is_backward_compatible: bool = False) -> Callable[[Callable], Callable]:
    """``torch.fx._compatibility.compatibility``: marks an API's stability; returns it."""
    return lambda fn: fn


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


class _Patcher:
    """The patches of one trace: functions in globals dicts (``patch``) and methods of
    classes (``patch_method``), undone in reverse order when the ``with`` block ends,
    however it ends. A patch marked ``deduplicate`` is not patched over again."""

    def __init__(self) -> None:
        self.patches_made: list[tuple[Any, str, Any]] = []
        self.visited: set[int] = set()

    def patch(self, frame_dict: dict, name: str, new_fn: Callable, deduplicate: bool = True) -> None:
        """``frame_dict[name] = new_fn`` (a builtin of that name is shadowed, then unshadowed)."""
        new_fn._fx_already_patched = deduplicate
        old = frame_dict.get(name, _ABSENT)
        if getattr(old, "_fx_already_patched", False):
            return
        self.patches_made.append((frame_dict, name, old))
        frame_dict[name] = new_fn

    def patch_method(self, cls: type, name: str, new_fn: Callable, deduplicate: bool = True) -> None:
        """``cls.<name> = new_fn`` (put back, or removed if ``cls`` only inherited it)."""
        new_fn._fx_already_patched = deduplicate
        if getattr(getattr(cls, name, None), "_fx_already_patched", False):
            return
        self.patches_made.append((cls, name, cls.__dict__.get(name, _ABSENT)))
        setattr(cls, name, new_fn)

    def visit_once(self, thing: Any) -> bool:
        """True the first time ``thing`` is seen by this patcher."""
        if id(thing) in self.visited:
            return False
        self.visited.add(id(thing))
        return True

    def __enter__(self) -> _Patcher:
        return self

    def __exit__(self, *exc: object) -> None:
        while self.patches_made:
            _restore(*self.patches_made.pop())
        self.visited.clear()

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        """The patches undone while the block runs, then made again: code run for real in
        the middle of a trace (kernels compiled then) sees the real functions and methods."""
        made = [
            (owner, name, owner[name] if isinstance(owner, dict) else owner.__dict__[name])
            for owner, name, _ in self.patches_made
        ]
        for patch in reversed(self.patches_made):
            _restore(*patch)
        try:
            yield
        finally:
            for patch in made:
                _restore(*patch)


def _restore(owner: Any, name: str, value: Any) -> None:
    """``owner.<name>`` (or ``owner[name]`` for a dict) set to ``value``, or removed when
    ``value`` is ``_ABSENT``."""
    if isinstance(owner, dict):
        if value is _ABSENT:
            del owner[name]
        else:
            owner[name] = value
    elif value is _ABSENT:
        delattr(owner, name)
    else:
        setattr(owner, name, value)


def _patch_wrapped_functions(patcher: _Patcher) -> None:
    """Record the functions ``wrap`` marked (also builtins, shadowed in their module)."""
    for frame_dict, name in _WRAPPED:
        if name in frame_dict or hasattr(builtins, name):
            original = frame_dict[name] if name in frame_dict else getattr(builtins, name)
            patcher.patch(frame_dict, name, _recording(original))


def _autowrap_check(patcher: _Patcher, frame_dict: dict, function_ids: set[int]) -> None:
    """Record the functions of ``frame_dict`` (a module's globals) whose ids are in
    ``function_ids`` (``math`` functions), once per dict and trace."""
    if patcher.visit_once(frame_dict):
        for name, value in list(frame_dict.items()):
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                patcher.patch(frame_dict, name, _recording(value))


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
        self._autowrap_function_ids = {
            id(v)
            for m in autowrap_modules
            for k, v in vars(m).items()
            if not k.startswith("_") and callable(v)
        }
        self._autowrap_function_ids |= {id(f) for f in autowrap_functions}
        self._autowrap_search: list[types.ModuleType] = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict[Module, str] | None = None
        self.tensor_attrs: dict[Any, str] = {}  # tensor (or ScriptObject) -> its attribute name

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
            name = self.tensor_attrs.get(a)
            if name is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                name = f"_tensor_constant{i}"
                setattr(self.root, name, a)
                self.tensor_attrs[a] = name
            return self.create_node("get_attr", name, (), {})
        return super().create_arg(a)

    # ------------------------------------------------------------------ the trace
    def trace(self, root: Module | Callable[..., Any], concrete_args: dict[str, Any] | None = None) -> Graph:
        """Run ``root`` (a module's ``forward``, or a function) on proxies; return the graph.
        ``concrete_args`` fixes some inputs to values (``PH`` keeps one an input)."""
        is_module = isinstance(root, Module)
        self.root = root if is_module else Module()
        fn = type(root).forward if is_module else root
        self.graph = Graph(tracer_cls=type(self))
        self.submodule_paths = None
        self.tensor_attrs = self._collect_tensor_attrs(self.root)
        fn_globals = getattr(fn, "__globals__", {})  # (before a placeholder rewrite of fn)
        fn, args = self.create_args_for_root(fn, is_module, concrete_args)
        parameter_proxy_cache: dict[str, Any] = {}
        tracer = self

        def module_call(mod: Module, *a: Any, **k: Any) -> Any:
            forward_globals = getattr(getattr(mod, "forward", mod), "__globals__", {})
            _autowrap_check(patcher, forward_globals, tracer._autowrap_function_ids)
            return tracer.call_module(mod, lambda *a2, **k2: _orig_module_call(mod, *a2, **k2), a, k)

        def module_getattr(mod: Module, attr: str) -> Any:
            return tracer.getattr(attr, _orig_module_getattr(mod, attr), parameter_proxy_cache)

        with _Patcher() as patcher:
            self.patcher = patcher
            patcher.patch_method(Module, "__call__", module_call, deduplicate=False)
            patcher.patch_method(Module, "__getattr__", module_getattr, deduplicate=False)
            _patch_wrapped_functions(patcher)
            _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
            for module in self._autowrap_search:
                _autowrap_check(patcher, vars(module), self._autowrap_function_ids)
            result = fn(*args)
        self.create_node(
            "output",
            "output",
            (self.create_arg(result),),
            {},
            type_expr=_annotations(fn).get("return"),
        )
        return self.graph

    def create_args_for_root(
        self, root_fn: Callable, is_module: bool, concrete_args: dict[str, Any] | None = None
    ) -> tuple[Callable, list]:
        """``root_fn`` (rewritten to take ``*args``/``**kwargs`` positionally, if it has them)
        and what to call it with: the root module (for a module's ``forward``), then a
        placeholder proxy (or a ``concrete_args`` value) per parameter."""
        fn, args = self._placeholders(root_fn, int(is_module), concrete_args or {})
        return fn, [self.root, *args] if is_module else args

    def _placeholders(self, fn: Callable, skip: int, concrete_args: dict[str, Any]) -> tuple[Callable, list]:
        """``fn`` (made to take every parameter positionally when it has ``*args`` or
        ``**kwargs``) and the placeholders (or concrete values) to call it with."""
        params = list(inspect.signature(fn).parameters.values())
        hints = _annotations(fn)
        stars = [p for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if stars and all(p.name in concrete_args for p in stars):
            return _spreading(fn, params, skip, concrete_args), [
                self._concrete(p.name, concrete_args[p.name])
                if p.name in concrete_args
                else self.create_proxy(
                    "placeholder",
                    p.name,
                    () if p.default is p.empty else (p.default,),
                    {},
                    type_expr=hints.get(p.name),
                )
                for p in params[skip:]
                if p not in stars
            ]
        if stars:
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
    def _collect_tensor_attrs(root: Module) -> dict[Any, str]:
        found = {t: name for name, t in root.named_buffers()}
        for prefix, m in root.named_modules():
            for k, v in vars(m).items():
                if isinstance(v, Tensor) and not isinstance(v, Parameter):
                    found.setdefault(v, f"{prefix}.{k}" if prefix else k)
        return found


#: where each kind of parameter sits in a code object: positional, keyword-only, *args, **kwargs
_CODE_ORDER = {
    inspect.Parameter.POSITIONAL_ONLY: 0,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: 0,
    inspect.Parameter.KEYWORD_ONLY: 1,
    inspect.Parameter.VAR_POSITIONAL: 2,
    inspect.Parameter.VAR_KEYWORD: 3,
}


_VAR_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _all_positional(fn: Callable) -> Callable:
    """``fn`` taking all its parameters positionally, in its code's order, ``*args`` and
    ``**kwargs`` included as plain parameters (so a proxy can stand for each)."""
    if not isinstance(fn, types.FunctionType):
        raise NotImplementedError(f"symbolic_trace: cannot trace *args/**kwargs of {fn!r}")
    if inspect.unwrap(fn) is not fn:  # PyTorch fails here too ('co_varnames is too small')
        stars = {p.name: p.kind for p in inspect.signature(fn).parameters.values() if p.kind in _VAR_KINDS}
        empty = {n: () if kind is inspect.Parameter.VAR_POSITIONAL else {} for n, kind in stars.items()}
        raise ValueError(
            f"symbolic_trace: {fn.__qualname__} is a decorator's wrapper around a signature with "
            f"{', '.join(stars)}, which cannot be inputs of the graph through it: fix them with "
            f"concrete_args (for instance concrete_args={empty}) or use torch.export.export"
        )
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


def _spreading(fn: Callable, params: list, skip: int, concrete_args: dict[str, Any]) -> Callable:
    """``fn`` taking its named parameters positionally, keyword-only ones included, with its
    ``*args``/``**kwargs`` fixed to their ``concrete_args`` values (spread into the call):
    ``fn``'s code is left as it is, so a ``functools.wraps`` wrapper taking ``(*args,
    **kwargs)`` around the signature is traced through too."""
    named = [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    var_args = next((tuple(concrete_args[p.name]) for p in params if p.kind is p.VAR_POSITIONAL), ())
    var_kwargs = next((dict(concrete_args[p.name]) for p in params if p.kind is p.VAR_KEYWORD), {})

    def call(*values: Any) -> Any:
        given = dict(zip([p.name for p in named], values))
        positional = [given[p.name] for p in named if p.kind is not p.KEYWORD_ONLY]
        keywords = {p.name: given[p.name] for p in named if p.kind is p.KEYWORD_ONLY}
        return fn(*positional, *var_args, **keywords, **var_kwargs)

    functools.update_wrapper(call, fn)
    return call


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
