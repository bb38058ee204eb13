"""``torch.jit``: ``script`` and ``trace`` return what computes the same thing, and
``save``/``load`` keep it in a file.

There is no TorchScript compiler in disttorch; nothing is compiled or sped up, and results
are those of the eager program. For an ``nn.Module``, ``script`` and ``trace`` return a
script module (``jit/_script_module.py``): a view of the module that shares its parameters
and runs its Python, prints as PyTorch's script modules print, and ``save``s an archive
that ``load`` reads back in any disttorch process (``_module_archive.py``:
the module pickled with its classes from ``__main__``; PyTorch's TorchScript archives
cannot be read, nor ours by PyTorch). ``trace`` runs the module on the example inputs as
often as PyTorch's trace does (once, and four more times without grad when it checks the
trace), so batch-norm statistics and the random stream move as they would. A function
given to ``script`` or ``trace`` comes back unchanged.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any, BinaryIO, TypeVar

from .._module_archive import SCRIPT_MODULE
from .._module_archive import read as read_archive
from ..nn.modules.module import Module
from . import _recursive  # noqa: F401 (torch.jit._recursive, reached as an attribute)
from ._fuser import (
    enable_onednn_fusion,
    fuser,
    onednn_fusion_enabled,
    optimized_execution,
    set_fusion_strategy,
)
from ._script_module import (
    Attribute,
    RecursiveScriptModule,
    ScriptModule,
    TopLevelTracedModule,
    TracedModule,
    script_view,
    traced_output,
)

__all__ = [
    "Attribute",
    "Final",
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptModule",
    "TopLevelTracedModule",
    "TracedModule",
    "TracerWarning",
    "annotate",
    "enable_onednn_fusion",
    "export",
    "fork",
    "freeze",
    "fuser",
    "ignore",
    "is_scripting",
    "is_tracing",
    "load",
    "onednn_fusion_enabled",
    "optimize_for_inference",
    "optimized_execution",
    "save",
    "script",
    "script_if_tracing",
    "script_method",
    "set_fusion_strategy",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

T = TypeVar("T")


class TracerWarning(Warning):
    """The warning a trace gives where it may not generalise (programs filter it by this
    class; disttorch's trace runs the eager code and never raises it)."""

    @staticmethod
    def ignore_lib_warnings() -> None:
        """Hide tracer warnings raised from inside the library, as PyTorch's."""
        warnings.filterwarnings("ignore", category=TracerWarning, module="torch.(?!jit)")


def script(
    obj: T, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None, example_inputs: Any = None
) -> T:
    """A script module of an ``nn.Module`` (see the module docstring); a function or class
    unchanged: it computes what the scripted version would. No compilation happens."""
    _deprecated("torch.jit.script", "Please switch to `torch.compile` or `torch.export`.")
    if not callable(obj) and not isinstance(obj, type):
        raise RuntimeError(
            f"torch.jit.script expects a function, a class or an nn.Module, got "  # noqa: TRY004
            f"{type(obj).__name__}"
        )
    if isinstance(obj, Module) and not isinstance(obj, ScriptModule):
        return script_view(obj, RecursiveScriptModule)
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
    """Run ``func`` on ``example_inputs`` (a tensor or a tuple of them) as PyTorch's trace
    runs it: once, and with ``check_trace`` four more times without grad (the check
    re-traces and compares). Return a traced module for an ``nn.Module``, else ``func``
    unchanged: it computes what the traced version would (including data-dependent control
    flow, which a real trace would freeze). An output a trace cannot record (a number,
    ``None``, a dict under ``strict``) is refused with PyTorch's error; a traced module
    returns its outputs in a trace's containers (a named tuple as a tuple, a dict subclass
    as a dict)."""
    _deprecated("torch.jit.trace", "Please switch to `torch.compile` or `torch.export`.")
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
    traced_output(func(*args, **(example_kwarg_inputs or {})), strict)
    if check_trace:
        with no_grad():
            for _ in range(4):
                func(*args, **(example_kwarg_inputs or {}))
    if isinstance(func, Module) and not isinstance(func, ScriptModule):
        traced = script_view(func, TopLevelTracedModule, TracedModule)
        traced.__dict__["_trace_strict"] = strict
        return traced
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


class ScriptFunction:
    """Placeholder type for ``isinstance(f, torch.jit.ScriptFunction)`` checks: a scripted
    function is the function itself in disttorch."""


def script_method(fn: Callable) -> Callable:
    """Decorator of the legacy ``ScriptModule`` subclass API: returns the method unchanged."""
    return fn


def save(m: Any, f: str | os.PathLike | BinaryIO, _extra_files: dict | None = None) -> None:
    """Write the script module ``m`` to ``f`` (a path or a writable binary file), with
    ``_extra_files`` (name -> str or bytes) beside it; :func:`load` reads it back."""
    _deprecated("torch.jit.save", "Please switch to `torch.export`.")
    if not isinstance(m, ScriptModule):
        method = "save_to_buffer" if hasattr(f, "write") else "save"
        raise AttributeError(f"'{type(m).__name__}' object has no attribute '{method}'")
    m.save(f, _extra_files)


def load(
    f: str | os.PathLike | BinaryIO, map_location: Any = None, _extra_files: dict | None = None
) -> RecursiveScriptModule:
    """The script module in a file :func:`save` wrote (everything lives on the CPU, so
    ``map_location`` changes nothing); fills ``_extra_files`` (name -> anything) with the
    saved extra files' bytes. Loading unpickles the file, which can run code from it: load
    only archives you trust. PyTorch's own TorchScript archives cannot be read (no
    TorchScript interpreter): the error says so."""
    _deprecated("torch.jit.load", "Please switch to `torch.export`.")
    return script_view(read_archive(f, SCRIPT_MODULE, _extra_files), RecursiveScriptModule)


def freeze(
    mod: ScriptModule, preserved_attrs: list | None = None, optimize_numerics: bool = True
) -> RecursiveScriptModule:
    """A script module of ``mod``, which must be a script module in eval mode (as PyTorch
    requires); nothing is inlined or folded here."""
    _deprecated("torch.jit.freeze", "Please use `torch.compile` instead.")
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "Freezing expects a ScriptModule as input. Please use torch.jit.script or "
            "torch.jit.trace to script your 'nn.Module'."
        )
    if mod.training:
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. Please call "
            ".eval() on your module before freezing."
        )
    return script_view(mod, RecursiveScriptModule)


def optimize_for_inference(mod: ScriptModule, other_methods: list | None = None) -> RecursiveScriptModule:
    """:func:`freeze` of ``mod`` (in eval mode); no graph rewriting happens here."""
    _deprecated("torch.jit.optimize_for_inference", "Please use `torch.compile` instead.")
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "optimize_for_inference expects a ScriptModule as input. Please use torch.jit.script "
            "or torch.jit.trace to script your 'nn.Module'."
        )
    return freeze(mod.eval() if mod.training else mod)


def _deprecated(name: str, instead: str) -> None:
    """PyTorch 2.13's deprecation warning for ``name``: a ``DeprecationWarning`` raised from
    inside the library, so that Python's default filters hide it, as they hide PyTorch's."""
    warnings.warn(f"`{name}` is deprecated. {instead}", DeprecationWarning, stacklevel=2)
