"""``torch._dynamo.eval_frame``: ``OptimizedModule``, ``is_dynamo_supported``, the object
``torch.compiler.set_stance`` returns, and the contexts ``torch._dynamo.optimize`` and
``torch._dynamo.run`` return (decorators: used as a ``with`` block they raise, as PyTorch's)."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from typing import Any

from .. import _compile_cache
from .._compile import check_arguments, set_stance
from ..compiler import OptimizedModule, _guards, _run_compiled, compile

__all__ = [
    "OptimizeContext",
    "OptimizedModule",
    "RunOnlyContext",
    "is_dynamo_supported",
    "optimize",
    "run",
    "set_stance",
]


def is_dynamo_supported() -> bool:
    """True: ``torch.compile`` can be called on this platform (here it runs the model eagerly)."""
    return True


class _TorchDynamoContext:
    """A decorator of functions and modules; PyTorch refuses it as a context manager."""

    def __call__(self, fn: Callable) -> Any:
        raise NotImplementedError

    def __enter__(self) -> None:
        raise RuntimeError(
            "torch._dynamo.optimize(...) is used with a context manager. "
            "Please refer to https://pytorch.org/tutorials/intermediate/torch_compile_tutorial.html "
            "to use torch._dynamo.optimize(...) as an annotation/decorator. "
        )

    def __exit__(self, *exc: Any) -> None:
        return None


class OptimizeContext(_TorchDynamoContext):
    """``torch._dynamo.optimize(backend)``: applied to a function or module, what
    ``torch.compile(..., backend=backend)`` returns."""

    def __init__(self, backend: str | Callable, dynamic: bool | None = None) -> None:
        self._backend, self._dynamic = backend, dynamic

    def __call__(self, fn: Callable) -> Any:
        return compile(fn, backend=self._backend, dynamic=self._dynamic)


class RunOnlyContext(_TorchDynamoContext):
    """``torch._dynamo.run()``: runs what earlier compiles made, compiling nothing new: a
    call that a graph compiled for the function's code takes runs as that compiled call
    (uncounted), any other call runs the function as it is."""

    def __call__(self, fn: Callable) -> Callable:
        code = getattr(fn, "__code__", None)

        @functools.wraps(fn)
        def run_only(*args: Any, **kwargs: Any) -> Any:
            aot = None if code is None else _compile_cache.compiled(code, _guards((), fn, args, kwargs)[0])
            if aot is None:
                return fn(*args, **kwargs)
            return _run_compiled(fn, args, kwargs, aot, code=code)

        return run_only


class _NullDecorator(contextlib.nullcontext):
    """What ``optimize(disable=True)`` returns: a decorator that returns what it decorates."""

    def __call__(self, fn: Callable) -> Callable:
        return fn


def optimize(
    backend: str | Callable = "inductor",
    *,
    nopython: bool = False,
    disable: bool = False,
    dynamic: bool | None = None,
    **options: Any,
) -> OptimizeContext | _NullDecorator:
    """TorchDynamo's older entry point (``torch.compile``'s base): a decorator compiling with
    ``backend``; ``nopython`` is ``fullgraph``; the guard hooks and other options are accepted
    and unused (nothing is traced). ``disable`` or ``TORCHDYNAMO_DISABLE=1``: a no-op."""
    check_arguments(backend=backend)
    if disable or os.environ.get("TORCHDYNAMO_DISABLE", "") == "1":
        return _NullDecorator()
    return OptimizeContext(backend, dynamic)


def run(fn: Callable | None = None) -> Any:
    """Don't compile, run what is compiled: ``fn`` wrapped to run so, or the decorator."""
    if fn is None:
        return RunOnlyContext()
    if not callable(fn):
        raise AssertionError("fn must be callable")
    return RunOnlyContext()(fn)
