"""``torch.library``: custom operators defined in Python with ``custom_op``.

``custom_op("ns::name", mutates_args=())`` wraps a function of tensors as an operator that
runs eagerly; ``register_autograd(backward, setup_context=...)`` gives it a gradient (it
runs through the autograd engine like every built-in op), ``register_kernel`` adds a
per-device implementation (only ``"cpu"`` can run here) and ``register_fake`` records the
shape function (kept, never needed without a tracer). The low-level registration API
(``Library``, ``define``, ``impl``), which fills ATen's dispatcher, is not provided: its
calls raise ``NotImplementedError``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from .autograd.function import Function

__all__ = [
    "CustomOpDef",
    "Library",
    "custom_op",
    "define",
    "impl",
    "register_autograd",
    "register_fake",
    "register_kernel",
]


class CustomOpDef:
    """A custom operator: call it like its function."""

    def __init__(self, name: str, fn: Callable, mutates_args: Iterable[str] | str) -> None:
        if "::" not in name:
            raise ValueError(f"custom_op: name must be 'namespace::op_name', got {name!r}")
        self._name, self._fn, self._mutates = name, fn, mutates_args
        self._kernels: dict[str, Callable] = {}
        self._fake: Callable | None = None
        self._backward: Callable | None = None
        self._setup: Callable | None = None
        functools.update_wrapper(self, fn)

    def register_kernel(self, device_types: str | Iterable[str], fn: Callable | None = None) -> Any:
        """Use ``fn`` on ``device_types`` (decorator when ``fn`` is omitted)."""

        def register(f: Callable) -> Callable:
            for d in [device_types] if isinstance(device_types, str) else device_types:
                self._kernels[d] = f
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

    def _impl(self) -> Callable:
        return self._kernels.get("cpu", self._fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._backward is None:
            return self._impl()(*args, **kwargs)
        op = self

        class CustomOpFunction(Function):
            @staticmethod
            def forward(ctx: Any, *inputs: Any) -> Any:
                out = op._impl()(*inputs, **kwargs)
                if op._setup is not None:
                    op._setup(ctx, inputs, out)
                return out

            @staticmethod
            def backward(ctx: Any, *grads: Any) -> Any:
                return op._backward(ctx, *grads)

        CustomOpFunction.__name__ = self._name.split("::")[1]
        return CustomOpFunction.apply(*args)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._name})>"


def custom_op(
    name: str,
    fn: Callable | None = None,
    /,
    *,
    mutates_args: Iterable[str] | str,
    device_types: str | Iterable[str] | None = None,
    schema: str | None = None,
) -> Any:
    """Make ``fn`` the custom operator ``name`` (``"ns::op"``); a decorator when ``fn`` is omitted.
    ``mutates_args`` (required, as in PyTorch) names the arguments it writes to (or ``"unknown"``)."""

    def wrap(f: Callable) -> CustomOpDef:
        op = CustomOpDef(name, f, mutates_args)
        if device_types is not None:
            op.register_kernel(device_types, f)
        return op

    return wrap if fn is None else wrap(fn)


def register_autograd(
    op: CustomOpDef, backward: Callable, *, setup_context: Callable | None = None, lib: Any = None
) -> None:
    """``op.register_autograd(backward, setup_context=...)`` for a ``custom_op``."""
    _custom(op, "register_autograd").register_autograd(backward, setup_context=setup_context)


def register_fake(
    op: CustomOpDef, fn: Callable | None = None, /, *, lib: Any = None, _stacklevel: int = 1
) -> Any:
    """``op.register_fake(fn)`` for a ``custom_op`` (decorator when ``fn`` is omitted)."""
    target = _custom(op, "register_fake")
    return target.register_fake if fn is None else target.register_fake(fn)


def register_kernel(
    op: CustomOpDef, device_types: str | Iterable[str], fn: Callable | None = None, /, *, lib: Any = None
) -> Any:
    """``op.register_kernel(device_types, fn)`` for a ``custom_op``."""
    return _custom(op, "register_kernel").register_kernel(device_types, fn)


def _custom(op: Any, api: str) -> CustomOpDef:
    if not isinstance(op, CustomOpDef):
        raise NotImplementedError(
            f"torch.library.{api}: only operators made with torch.library.custom_op "
            f"can be registered here (got {op!r}); ATen's dispatcher is not modelled"
        )
    return op


def _no_dispatcher(api: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.library.{api}: disttorch has no ATen dispatcher to register schemas or "
        "kernels in; define the operator with torch.library.custom_op instead"
    )


class Library:
    """``torch.library.Library(ns, kind)``: raises ``NotImplementedError`` (no ATen dispatcher)."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        raise _no_dispatcher("Library")


def define(qualname: str, schema: str, *, lib: Any = None, tags: Any = ()) -> None:
    """Raises ``NotImplementedError`` (no ATen dispatcher); use ``custom_op``."""
    raise _no_dispatcher("define")


def impl(qualname: str, types: Any, func: Callable | None = None, *, lib: Any = None) -> None:
    """Raises ``NotImplementedError`` (no ATen dispatcher); use ``custom_op``."""
    raise _no_dispatcher("impl")
