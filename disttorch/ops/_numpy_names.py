"""NumPy's keyword names for PyTorch's: ``axis`` for ``dim`` and ``keepdims`` for ``keepdim``.

PyTorch's argument parser accepts these aliases on every native function and Tensor method
(``torch.sum(x, axis=0, keepdims=True)``, ``x.max(axis=1)``), so programs written with NumPy
habits run. ``accept_numpy_names`` gives an op the same courtesy: it wraps the functions
that take ``dim`` or ``keepdim`` (and no parameter of the alias's own name) so the alias is
renamed before the call; other functions are returned unchanged. The same wrapper applies
the parser's one rule on ``keepdim`` itself: a bool, not an int (``x.sum(0, 1)`` is its
TypeError, not ``keepdim=True``).
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable

__all__ = ["accept_numpy_names"]

_ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def accept_numpy_names(fn: Callable) -> Callable:
    """``fn`` accepting ``axis=``/``keepdims=`` for its ``dim``/``keepdim`` parameters."""
    if not isinstance(fn, types.FunctionType):
        return fn
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return fn
    renames = {alias: name for alias, name in _ALIASES.items() if name in params and alias not in params}
    if not renames:
        return fn
    positional = [n for n, p in params.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    at = positional.index("keepdim") if "keepdim" in positional else None

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            for alias in renames.keys() & kwargs.keys():
                name = renames[alias]
                if name in kwargs:
                    raise TypeError(
                        f"{fn.__name__}() got multiple values for argument '{name}' (as '{alias}')"
                    )
                kwargs[name] = kwargs.pop(alias)
            if "keepdim" in kwargs:
                _check_keepdim(fn, kwargs["keepdim"])
        if at is not None and len(args) > at:
            _check_keepdim(fn, args[at])
        return fn(*args, **kwargs)

    call._numpy_names = True  # type: ignore[attr-defined]
    return call


def _check_keepdim(fn: Callable, keepdim: Any) -> None:
    """PyTorch's TypeError for a ``keepdim`` that is not a bool (None: the default)."""
    if keepdim is not None and keepdim.__class__ is not bool:
        name = (
            type(keepdim).__name__
            if type(keepdim).__module__ == "builtins"
            else type(keepdim).__module__ + "." + type(keepdim).__name__
        )
        raise TypeError(f"{fn.__name__}(): argument 'keepdim' must be bool, not {name}")
