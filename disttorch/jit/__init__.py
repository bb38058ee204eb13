"""``torch.jit``: ``script`` and ``trace`` return a callable that computes the same thing.

There is no TorchScript compiler in disttorch: ``script(obj)`` returns ``obj`` itself and
``trace(func, example_inputs)`` runs ``func`` once on the example inputs (so a wrong
signature fails there, as tracing would) and returns ``func``. Results are identical to
the eager program; nothing is compiled or sped up. ``save``/``load`` of TorchScript
archives are not available (use ``torch.save`` of a ``state_dict``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "Final",
    "ScriptFunction",
    "ScriptModule",
    "annotate",
    "export",
    "fork",
    "ignore",
    "is_scripting",
    "is_tracing",
    "load",
    "save",
    "script",
    "script_if_tracing",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

T = TypeVar("T")


def script(
    obj: T, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None, example_inputs: Any = None
) -> T:
    """Return ``obj`` (a function or ``nn.Module``) unchanged: it computes what the
    scripted version would. No compilation happens."""
    if not callable(obj) and not isinstance(obj, type):
        raise RuntimeError(
            f"torch.jit.script expects a function, a class or an nn.Module, got "  # noqa: TRY004
            f"{type(obj).__name__}"
        )
    return obj


def trace(
    func: T,
    example_inputs: Any = None,
    optimize: Any = None,
    check_trace: bool = True,
    check_inputs: Any = None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    example_kwarg_inputs: dict | None = None,
    **kwargs: Any,
) -> T:
    """Run ``func`` once on ``example_inputs`` (a tensor or a tuple of them) and return
    ``func`` unchanged: it computes what the traced version would (including data-dependent
    control flow, which a real trace would freeze)."""
    if not callable(func):
        raise RuntimeError(f"torch.jit.trace expects a function or an nn.Module, got {type(func).__name__}")  # noqa: TRY004
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("torch.jit.trace needs example_inputs (or example_kwarg_inputs)")
    from ..autograd import no_grad

    args = (
        example_inputs
        if isinstance(example_inputs, tuple)
        else (() if example_inputs is None else (example_inputs,))
    )
    with no_grad():
        func(*args, **(example_kwarg_inputs or {}))
    return func


def trace_module(mod: T, inputs: dict, **kwargs: Any) -> T:
    """Run each named method of ``mod`` on its example inputs and return ``mod`` unchanged."""
    for name, example in inputs.items():
        trace(getattr(mod, name), example)
    return mod


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Decorator marking a function for TorchScript to leave alone: returns it unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: Callable) -> Callable:
    """Decorator marking a method unused by TorchScript: returns it unchanged."""
    return fn


def script_if_tracing(fn: Callable) -> Callable:
    """Decorator that compiles ``fn`` only while tracing: nothing is traced here, so it
    returns ``fn`` unchanged (transformers' ViTDet decorates a helper with it)."""
    return fn


def _overload(func: Callable) -> Callable:
    """Declare a TorchScript overload signature of ``func``: returns it unchanged (in eager
    Python the last definition, the implementation, is the one that runs)."""
    return func


def _overload_method(func: Callable) -> Callable:
    """Declare a TorchScript overload of a method: returns it unchanged."""
    return func


def export(fn: Callable) -> Callable:
    """Decorator marking a method for TorchScript export: returns it unchanged."""
    return fn


def is_scripting() -> bool:
    """False: code never runs under TorchScript here."""
    return False


def is_tracing() -> bool:
    """False: code never runs under a TorchScript trace here."""
    return False


class _Future:
    def __init__(self, value: Any) -> None:
        self._value = value

    def wait(self) -> Any:
        return self._value


def fork(func: Callable, *args: Any, **kwargs: Any) -> _Future:
    """Run ``func(*args, **kwargs)`` now and return a future holding its result."""
    return _Future(func(*args, **kwargs))


def wait(future: _Future) -> Any:
    """The result of a :func:`fork`."""
    return future.wait()


def annotate(the_type: Any, the_value: T) -> T:
    """TorchScript type annotation: returns ``the_value``."""
    return the_value


try:
    from typing import Final
except ImportError:  # pragma: no cover
    Final = Any  # type: ignore[assignment,misc]


class ScriptModule:
    """Placeholder type for ``isinstance(m, torch.jit.ScriptModule)`` checks: nothing is
    ever a ScriptModule in disttorch."""


class ScriptFunction:
    """Placeholder type for ``isinstance(f, torch.jit.ScriptFunction)`` checks: nothing is
    ever a ScriptFunction in disttorch."""


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Not available: there are no TorchScript archives (use ``torch.save(m.state_dict(), f)``)."""
    raise RuntimeError(
        "torch.jit.save is not available in disttorch (no TorchScript): save the "
        "weights with torch.save(model.state_dict(), path)"
    )


def load(f: Any, map_location: Any = None, _extra_files: Any = None) -> Any:
    """Not available: there are no TorchScript archives (use ``torch.load`` of a state_dict)."""
    raise RuntimeError(
        "torch.jit.load is not available in disttorch (no TorchScript archives): "
        "load a state_dict with torch.load and model.load_state_dict"
    )
