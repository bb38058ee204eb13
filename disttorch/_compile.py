"""The arguments ``torch.compile`` and ``Module.compile`` accept, checked as PyTorch checks
them (so a typo in ``mode`` still fails where nothing is compiled; see ``compiler.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["check_arguments"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "onnxrt", "openxla", "tvm")


def check_arguments(
    model: Any = None,
    *,
    backend: str | Callable = "inductor",
    mode: str | None = None,
    options: dict | None = None,
) -> None:
    """Raise PyTorch's error for ``torch.compile`` arguments it refuses (a mode that does
    not exist, an unknown backend, both ``mode`` and ``options``, a model that is not
    callable)."""
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
    if model is not None and not callable(model):
        raise RuntimeError("The torch.compile model argument must be callable")  # noqa: TRY004 (PyTorch raises RuntimeError)
