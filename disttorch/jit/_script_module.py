"""What ``torch.jit.script`` and ``torch.jit.trace`` return for an ``nn.Module``: a view of
it that runs the module's own Python.

disttorch has no TorchScript compiler. A *script module* here is a new module object of a
class made for it (``RecursiveScriptModule``, or ``TopLevelTracedModule``/``TracedModule``
for a trace) that derives from both :class:`ScriptModule` and the module's own class. It
shares the original's parameters, buffers and attributes (as PyTorch's script modules
share the parameter tensors of the module they came from), wraps each child the same way,
and prints as PyTorch prints its script modules (``original_name=...``). Its ``save``
writes an archive that :func:`disttorch.jit.load` reads back
(``_module_archive.py``).
"""

from __future__ import annotations

import copy
from typing import Any, BinaryIO, Callable, NamedTuple

from .._module_archive import SCRIPT_MODULE
from .._module_archive import write as write_archive
from .._tensor import Tensor
from ..nn.modules.module import Module

__all__ = [
    "Attribute",
    "RecursiveScriptModule",
    "ScriptModule",
    "TopLevelTracedModule",
    "TracedModule",
    "is_view",
    "original_module",
    "script_view",
    "traced_output",
]


class Attribute(NamedTuple):
    """``torch.jit.Attribute(value, type)``: ``value`` declared as an attribute of ``type`` for
    the TorchScript compiler. A ``ScriptModule`` stores ``value`` itself; elsewhere it is
    this pair, as in PyTorch's eager mode."""

    value: Any
    type: Any


class ScriptModule(Module):
    """The base of every script module: ``isinstance(m, torch.jit.ScriptModule)`` holds for
    what ``torch.jit.script``/``trace`` return for a module and what ``torch.jit.load``
    loads."""

    original_name: str
    #: a trace's ``strict``, on the module ``trace`` returned (kept by ``save``/``load`` and
    #: ``freeze``): its outputs come back in the containers a trace records
    #: (``traced_output``: a named tuple as a tuple, a dict subclass such as transformers'
    #: ``ModelOutput`` as a dict); None for a module that was not traced
    _trace_strict: bool | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value.value if isinstance(value, Attribute) else value)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        out = super().forward(*args, **kwargs)
        return out if self._trace_strict is None else traced_output(out, self._trace_strict)

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"

    def save(self, f: str | BinaryIO, _extra_files: dict | None = None) -> None:
        """Write this module to ``f`` (a path or a binary file), as ``torch.jit.save``."""
        write_archive(original_module(self), f, SCRIPT_MODULE, _extra_files)

    def save_to_buffer(self, _extra_files: dict | None = None) -> bytes:
        """The archive :meth:`save` would write, as bytes."""
        import io

        buffer = io.BytesIO()
        self.save(buffer, _extra_files)
        return buffer.getvalue()


class RecursiveScriptModule(ScriptModule):
    """What ``torch.jit.script(module)`` and ``torch.jit.load`` return."""


class TracedModule(ScriptModule):
    """A child of a traced module; prints under its original class name."""

    def _get_name(self) -> str:
        return self.original_name


class TopLevelTracedModule(TracedModule):
    """What ``torch.jit.trace(module, inputs)`` returns."""


_DICT_OUTPUT = (
    "Encountering a dict at the output of the tracer might cause the trace to be incorrect, this is "
    "only valid if the container structure does not change based on the module's inputs. Consider "
    "using a constant container instead (e.g. for `list`, use a `tuple` instead. for `dict`, use a "
    "`NamedTuple` instead). If you absolutely need this and know the side effects, pass strict=False "
    "to trace() to allow this behavior."
)


def traced_output(value: Any, strict: bool) -> Any:
    """``value`` in the containers PyTorch's trace gives back: tensors as they are, tuples
    (named ones too) as tuples, lists as lists, dicts (and dict subclasses) as dicts when not
    ``strict``. Anything else is refused with PyTorch's errors."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, tuple):
        return tuple(traced_output(v, strict) for v in value)
    if isinstance(value, list):
        return [traced_output(v, strict) for v in value]
    if isinstance(value, dict):
        if strict:
            raise RuntimeError(_DICT_OUTPUT)
        return {k: traced_output(v, strict) for k, v in value.items()}
    raise RuntimeError(
        "Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from traced "
        f"functions (got {type(value).__name__})"
    )


_VIEW_CLASSES: dict[tuple[type, type], type] = {}


def _view_class(kind: type, cls: type) -> type:
    """``kind`` (a script-module class) mixed into the module class ``cls``, made once."""
    key = (kind, cls)
    if key not in _VIEW_CLASSES:
        namespace = {"__module__": kind.__module__, "_viewed_class": cls}
        _VIEW_CLASSES[key] = type(kind.__name__, (kind, cls), namespace)
    return _VIEW_CLASSES[key]


def is_view(module: Any) -> bool:
    """Whether ``module`` is a view :func:`script_view` made."""
    return "_viewed_class" in type(module).__dict__


def script_view(module: Module, kind: type, child_kind: type | None = None) -> ScriptModule:
    """A ``kind`` view of ``module``: the same parameters, buffers and attributes, each
    child a ``child_kind`` view (``kind`` when None)."""
    source = original_module(module)
    view = _rebuilt(source, _view_class(kind, type(source)), lambda c: script_view(c, child_kind or kind))
    view.__dict__["original_name"] = type(source).__name__
    return view


def original_module(module: Module) -> Module:
    """A module of the user's own class holding what the view ``module`` holds (``module``
    itself when it is no view): what an archive pickles."""
    if not is_view(module):
        return module
    plain = _rebuilt(module, type(module)._viewed_class, original_module)
    del plain.__dict__["original_name"]
    return plain


def _rebuilt(source: Module, cls: type, child: Callable[[Module], Module]) -> Any:
    """A ``cls`` object with the attributes of ``source`` (its dicts and sets copied one
    level, so that adding a parameter or a hook to one does not add it to the other) and
    ``child(c)`` for each child ``c``."""
    new = object.__new__(cls)
    for name, value in source.__dict__.items():
        new.__dict__[name] = copy.copy(value) if isinstance(value, (dict, set)) else value
    for name, c in source._modules.items():
        if c is not None:
            new._modules[name] = child(c)
    return new
