"""``torch.library``: operators defined in Python and registered by name.

Every operator lives in one registry under its qualified name ``"ns::op"`` and is called as
``torch.ops.ns.op(...)`` (or ``torch.ops.ns.op.default(...)``). Two ways make one, as in
PyTorch:

- ``custom_op("ns::op", fn, mutates_args=())`` wraps a function of tensors; the returned
  :class:`CustomOpDef` is callable too.
- ``define("ns::op", "(Tensor x) -> Tensor")`` declares it and ``impl("ns::op", "cpu", fn)``
  gives its kernel (``Library(ns, "DEF"/"FRAGMENT"/"IMPL")`` does the same per namespace).

``register_autograd(op, backward, setup_context=...)`` gives an operator its gradient (it runs
through the autograd engine as every built-in op does); without one, backward through its
output raises as in PyTorch. ``register_kernel`` adds a per-device kernel (only ``"cpu"`` runs
here) and ``register_fake`` records the shape function, which needs a tracer to be used and
so is only kept. ``op`` may be the name, the ``CustomOpDef`` or the ``torch.ops`` object.
The schema string is kept, not parsed: arguments bind by the kernel's own signature.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import _library_opcheck
from ._tensor import Tensor
from .autograd.function import Function
from .ops import op_namespace

__all__ = [
    "CustomOpDef",
    "Library",
    "custom_op",
    "define",
    "impl",
    "opcheck",
    "register_autograd",
    "register_fake",
    "register_kernel",
]

#: dispatch keys whose kernel runs on CPU tensors (PyTorch's names, compared lower-cased)
_CPU_KEYS = {"cpu", "default", "compositeimplicitautograd", "compositeexplicitautograd", "autograd"}


class CustomOpDef:
    """An operator registered under ``"ns::op"``: call it like its function."""

    def __init__(
        self, name: str, schema: str | None, fn: Callable | None = None, mutates_args: Any = ()
    ) -> None:
        self._name, self._schema, self._mutates = name, schema, mutates_args
        self._kernels: dict[str, Callable] = {} if fn is None else {"cpu": fn}
        self._fake: Callable | None = None
        self._backward: Callable | None = None
        self._setup: Callable | None = None
        if fn is not None:
            functools.update_wrapper(self, fn)

    def register_kernel(self, device_types: str | Iterable[str], fn: Callable | None = None) -> Any:
        """Use ``fn`` on ``device_types`` (decorator when ``fn`` is omitted)."""

        def register(f: Callable) -> Callable:
            for d in [device_types] if isinstance(device_types, str) else device_types:
                self._kernels["cpu" if d.lower() in _CPU_KEYS else d.lower()] = f
            return f

        return register if fn is None else register(fn)

    def register_fake(self, fn: Callable) -> Callable:
        """Record the shape ("fake") implementation; returns ``fn``."""
        self._fake = fn
        return fn

    def register_autograd(self, backward: Callable, *, setup_context: Callable | None = None) -> None:
        """``setup_context(ctx, inputs, output)`` saves what ``backward(ctx, *grads)`` needs; the
        backward returns one gradient (or None) per input."""
        self._backward, self._setup = backward, setup_context

    def _kernel(self) -> Callable:
        kernel = self._kernels.get("cpu")
        if kernel is None:
            raise NotImplementedError(
                f"Could not run '{self._name}' with arguments from the 'CPU' backend: no CPU kernel "
                f"is registered (give one with torch.library.impl({self._name!r}, 'cpu', fn))"
            )
        return kernel

    def _bind(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        """The call's arguments by the kernel's parameter names (defaults filled in)."""
        bound = inspect.signature(self._kernel()).bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kernel = self._kernel()
        inputs = tuple(self._bind(args, kwargs).values())
        op = self

        class CustomOpFunction(Function):
            @staticmethod
            def forward(ctx: Any, *inputs: Any) -> Any:
                out = kernel(*(_below_autograd(a) for a in inputs))
                if op._setup is not None and any(ctx.needs_input_grad):  # a graph is recorded
                    op._setup(ctx, inputs, out)
                return out

            @staticmethod
            def backward(ctx: Any, *grads: Any) -> Any:
                if op._backward is None:
                    raise RuntimeError(
                        f"Trying to backward through {op._name.replace('::', '.')}.default but no "
                        "autograd formula was registered. Please use register_autograd to add one."
                    )
                return op._backward(ctx, *grads)

        CustomOpFunction.__name__ = f"GeneratedBackwardFor_{self._name.replace('::', '_')}_default"
        return CustomOpFunction.apply(*inputs)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._name})>"


def _below_autograd(value: Any) -> Any:
    """An argument as an operator's kernel sees it, below autograd: tensors (also in a list
    or tuple) detached, sharing their memory, so ``x.numpy()`` works on an input that
    requires grad and a mutated argument is written in place."""
    if isinstance(value, Tensor):
        return value.detach()
    if isinstance(value, (list, tuple)):
        return type(value)(_below_autograd(v) for v in value)
    return value


def _register(qualname: str, schema: str | None, fn: Callable | None, mutates_args: Any = ()) -> CustomOpDef:
    if not isinstance(qualname, str) or qualname.count("::") != 1 or not all(qualname.split("::")):
        raise ValueError(f"expected the operator's name as 'namespace::op_name', got {qualname!r}")
    if qualname in op_namespace.REGISTERED:
        raise RuntimeError(
            f"Tried to register an operator ({qualname}) with the same name and overload name multiple "
            "times. Each overload's schema should only be registered with a single call to def()."
        )
    op = CustomOpDef(qualname, schema, fn, mutates_args)
    op_namespace.REGISTERED[qualname] = op
    return op


def custom_op(
    name: str,
    fn: Callable | None = None,
    /,
    *,
    mutates_args: Iterable[str] | str,
    device_types: str | Iterable[str] | None = None,
    schema: str | None = None,
) -> Any:
    """Make ``fn`` the operator ``name`` (``"ns::op"``), callable as ``torch.ops.ns.op``; a
    decorator when ``fn`` is omitted. ``mutates_args`` (required, as in PyTorch) names the
    arguments it writes to (or ``"unknown"``)."""

    def wrap(f: Callable) -> CustomOpDef:
        op = _register(name, schema, None if device_types is not None else f, mutates_args)
        if device_types is not None:
            op.register_kernel(device_types, f)
        functools.update_wrapper(op, f)
        return op

    return wrap if fn is None else wrap(fn)


def _lookup(op: Any) -> CustomOpDef:
    """The registered operator that ``op`` (a name, a ``CustomOpDef`` or a ``torch.ops`` object) is."""
    if isinstance(op, CustomOpDef):
        return op
    name = op.name() if isinstance(op, op_namespace.OpOverload) else op
    if isinstance(op, op_namespace.OpOverloadPacket):
        name = f"{op._namespace}::{op._name}"
    if isinstance(name, str) and name in op_namespace.REGISTERED:
        return op_namespace.REGISTERED[name]
    if isinstance(name, str) and name.startswith("aten::"):
        raise NotImplementedError(f"{name}: ATen's built-in operators cannot be re-registered in disttorch")
    raise RuntimeError(f"operator {name} does not exist")


def opcheck(
    op: Any,
    args: tuple,
    kwargs: dict | None = None,
    *,
    test_utils: str | Sequence[str] = _library_opcheck.DEFAULT_TEST_UTILS,
    raise_exception: bool = True,
    atol: float | None = None,
    rtol: float | None = None,
) -> dict[str, Any]:
    """Check that the custom operator ``op`` keeps its registration's promises on the sample
    ``args``/``kwargs`` (see :mod:`disttorch._library_opcheck` for the four tests). Returns
    ``{test: "SUCCESS" or the exception}``; with ``raise_exception`` the first failure raises
    ``OpCheckError`` instead."""
    return _library_opcheck.run(_lookup(op), args, kwargs, test_utils, raise_exception)


def define(qualname: str, schema: str, *, lib: Any = None, tags: Any = ()) -> None:
    """Declare the operator ``qualname`` (``"ns::op"``) with its ``schema``, e.g.
    ``"(Tensor x) -> Tensor"``; ``impl`` gives it a kernel."""
    _register(qualname, schema, None)


def impl(qualname: Any, types: str | Iterable[str], func: Callable | None = None, *, lib: Any = None) -> Any:
    """Use ``func`` as the kernel of ``qualname`` for the device ``types`` (decorator when
    ``func`` is omitted)."""
    return _lookup(qualname).register_kernel(types, func)


def register_autograd(
    op: Any, backward: Callable, *, setup_context: Callable | None = None, lib: Any = None
) -> None:
    """``op``'s gradient: ``setup_context(ctx, inputs, output)`` then ``backward(ctx, *grads)``."""
    _lookup(op).register_autograd(backward, setup_context=setup_context)


def register_fake(op: Any, fn: Callable | None = None, /, *, lib: Any = None, _stacklevel: int = 1) -> Any:
    """Record ``op``'s shape ("fake") implementation (decorator when ``fn`` is omitted)."""
    target = _lookup(op)
    return target.register_fake if fn is None else target.register_fake(fn)


def register_kernel(
    op: Any, device_types: str | Iterable[str], fn: Callable | None = None, /, *, lib: Any = None
) -> Any:
    """Use ``fn`` as ``op``'s kernel on ``device_types`` (decorator when ``fn`` is omitted)."""
    return _lookup(op).register_kernel(device_types, fn)


class Library:
    """``Library(ns, kind)``: define (``kind="DEF"`` or ``"FRAGMENT"``) and implement operators of
    the namespace ``ns`` by their short names."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in ("DEF", "FRAGMENT", "IMPL"):
            raise ValueError(f"Unsupported kind: {kind}")
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key

    def define(self, schema: str, alias_analysis: str = "", *, tags: Any = ()) -> str:
        """Declare ``"name(Tensor x) -> Tensor"`` in this namespace; returns the name."""
        if self.kind == "IMPL":
            raise RuntimeError(
                f"Library({self.ns!r}, 'IMPL') cannot define operators; use 'DEF' or 'FRAGMENT'"
            )
        name, paren, rest = schema.partition("(")
        if not paren or not name.strip():
            raise ValueError(f"expected a schema 'name(args) -> returns', got {schema!r}")
        define(f"{self.ns}::{name.strip()}", paren + rest)
        return name.strip()

    def impl(self, op_name: Any, fn: Callable, dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        """Use ``fn`` as the kernel of ``op_name`` for ``dispatch_key`` (the library's by default)."""
        name = op_name if not isinstance(op_name, str) or "::" in op_name else f"{self.ns}::{op_name}"
        impl(name, dispatch_key or self.dispatch_key or "CompositeImplicitAutograd", fn)

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"
