"""The arguments ``torch.compile`` and ``Module.compile`` accept, checked as PyTorch checks
them (so a typo in ``mode`` still fails where nothing is compiled; see ``compiler.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["check_arguments"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
#: the backends PyTorch's CPU build registers (without onnxruntime), with their tags
_BACKEND_TAGS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("cudagraphs", "inductor", "openxla", "tvm"), ()),
    "openxla_eval": ("experimental",),
    **dict.fromkeys(
        (
            "aot_eager",
            "aot_eager_decomp_partition",
            "aot_eager_decomp_partition_crossref",
            "aot_eager_decomp_partition_with_mode",
            "aot_eager_default_partitioner",
            "aot_ts",
            "dynamo_accuracy_minifier_backend",
            "dynamo_minifier_backend",
            "eager",
            "eager_debug",
            "eager_noexcept",
            "invoke_subgraph",
            "pre_dispatch_eager",
            "ts",
            # PyTorch's own tests' backends (which fail on purpose there; eager here)
            "non_leaf_compile_error_TESTING_ONLY",
            "relu_accuracy_error_TESTING_ONLY",
            "relu_compile_error_TESTING_ONLY",
            "relu_runtime_error_TESTING_ONLY",
        ),
        ("debug",),
    ),
}
_BACKENDS = tuple(_BACKEND_TAGS)


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
            f"Invalid backend: {backend!r}, see `torch._dynamo.list_backends()` for available backends."
        )
    if model is not None and not callable(model):
        raise RuntimeError("The torch.compile model argument must be callable")  # noqa: TRY004 (PyTorch raises RuntimeError)
