"""``torch.compile``: returns the model or function itself (documented: no compilation).

disttorch has no graph compiler; ``torch.compile(model)`` returns ``model`` unchanged (so
its ``state_dict`` keys are the model's own, without PyTorch's ``_orig_mod.`` prefix) and
``@torch.compile`` / ``@torch.compile(mode=...)`` leave the function as written. Arguments
are checked as PyTorch checks them, so a typo in ``mode`` still fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["compile"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "onnxrt", "openxla", "tvm")


def compile(
    model: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable = "inductor",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
) -> Any:
    """Return ``model`` unchanged (or, with no ``model``, a decorator that does): it
    computes exactly what the eager model computes. No compilation happens in disttorch."""
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise RuntimeError(
            f"Invalid backend: {backend!r}, expected one of {', '.join(_BACKENDS)} (or a callable)"
        )
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise RuntimeError("The torch.compile model argument must be callable")  # noqa: TRY004 (PyTorch raises RuntimeError)
    return model
