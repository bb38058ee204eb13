"""The arguments ``torch.compile`` and ``Module.compile`` accept, checked as PyTorch checks
them (so a typo in ``mode`` still fails where nothing is compiled; see ``compiler.py``), and
the state of compiled calls: how deep in them this thread is, and the stance."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ._compile_errors import InvalidBackend

__all__ = ["check_arguments", "set_stance"]

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
        raise InvalidBackend(backend)
    if model is not None and not callable(model):
        raise RuntimeError("The torch.compile model argument must be callable")  # noqa: TRY004 (PyTorch raises RuntimeError)


#: PyTorch's stances; those about recompiling act as "default" here (nothing recompiles)
_STANCES = (
    "default",
    "force_eager",
    "eager_on_recompile",
    "fail_on_recompile",
    "eager_then_compile",
    "aot_eager_then_compile",
)


class _State(threading.local):
    """How deep in compiled calls this thread is; the stance is the process's (as PyTorch's:
    one set on a thread holds on every thread)."""

    depth = 0  # compiled calls running on this thread (0 inside a disabled function)
    exporting = False  # a torch.export capture runs on this thread
    stance: tuple[str, bool, Any] = ("default", False, None)  # (a class attribute: shared)
    #: while an outermost compiled call runs: id -> (view, source, remake) of the views it made
    views: dict[int, tuple] | None = None


_state = _State()


@contextmanager
def _export_region() -> Iterator[None]:
    """Run a ``torch.export`` capture: ``is_exporting()`` and ``is_compiling()`` are True
    inside, as for PyTorch's (non-strict) export tracing the forward."""
    before = _state.depth, _state.exporting
    _state.depth, _state.exporting = before[0] + 1, True
    try:
        yield
    finally:
        _state.depth, _state.exporting = before


@contextmanager
def _compiled_region(depth: int | None = None) -> Iterator[None]:
    """Run a compiled call (``depth`` None) or a disabled one (``depth`` 0)."""
    stance, skip_guard_eval_unsafe, backend = _State.stance
    if stance not in _STANCES:
        raise RuntimeError(
            f"invalid torch.compile stance 'DynamoStance(stance={stance!r}, "
            f"skip_guard_eval_unsafe={skip_guard_eval_unsafe}, backend={backend!r})'"
        )
    before = _state.depth
    if depth is not None or stance != "force_eager":
        _state.depth = before + 1 if depth is None else depth
    try:
        yield
    finally:
        _state.depth = before


class set_stance:  # noqa: N801 (PyTorch's class name)
    """A compile stance, already in force when made (``torch.compiler.set_stance(...)``); as
    a context manager it is restored on exit, as a decorator it is in force during each call."""

    def __init__(self, stance: tuple[str, bool, Any]) -> None:
        self.stance, self.prev = stance, _State.stance
        _State.stance = stance

    def __enter__(self) -> None:
        _State.stance = self.stance

    def __exit__(self, *exc: object) -> None:
        _State.stance = self.prev

    def __call__(self, fn: Callable) -> Callable:
        _State.stance = self.prev  # decorating sets nothing: each call of ``fn`` does

        @functools.wraps(fn)
        def staged(*args: Any, **kwargs: Any) -> Any:
            if _state.depth:
                raise AssertionError(f"Attempt to trace forbidden callable {staged!r}")
            with self:
                return fn(*args, **kwargs)

        return staged
