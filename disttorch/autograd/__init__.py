"""Automatic differentiation: ``backward``, ``grad``, ``Function``, grad mode, ``gradcheck``.

Above the core (it imports ``Tensor``), below the ops:

- ``function.py``: ``Function`` (forward and backward side by side; its instance is the graph
  node), ``AccumulateGrad`` and a tensor's gradient edge.
- ``engine.py``: the backward pass over the graph, iterative, in dependency order.
- ``backprop.py``: ``backward()`` and ``grad()``, the two ways to start it.
- ``grad_mode.py``: ``no_grad`` and friends, and ``recording()``: is this backward recorded?
- ``gradcheck.py``: finite-difference checks, on top of ``backprop``.
- ``forward_ad.py``: dual tensors (forward-mode AD by the double-backward trick).
- ``functional.py``: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``vhp``, ``hvp``.
- ``fused_backward.py``: the node for backwards computed in NumPy (layers, decompositions).
- ``variable.py``: the legacy ``Variable(t)`` call, which returns a tensor.
- ``graph.py``: ``torch.autograd.graph`` (``saved_tensors_hooks``, ``save_on_cpu``, gradient
  edges), over ``saved_hooks.py``, where nodes pack and unpack what they save.
- ``saved_fields.py``: ``grad_fn._saved_<name>``/``_raw_saved_<name>``, what a node saved by
  PyTorch's names, from the table beside each op's backward.
- ``profiler.py``: ``record_function`` and the legacy ``profile`` (``torch.autograd.profiler``).
- ``profiler_legacy.py``: ``profile`` with the legacy constructor (``torch.autograd.profiler_legacy``).
"""

from __future__ import annotations

import importlib
from typing import Any

from . import forward_ad, functional, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .backprop import backward, grad
from .engine import queue_callback
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_multithreading_enabled,
    is_view_replay_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .variable import Variable

__all__ = [
    "backward",
    "grad",
    "Function",
    "FunctionCtx",
    "once_differentiable",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "set_multithreading_enabled",
    "is_multithreading_enabled",
    "is_view_replay_enabled",
    "is_grad_enabled",
    "inference_mode",
    "queue_callback",
    "gradcheck",
    "gradgradcheck",
    "Variable",
    "detect_anomaly",
    "set_detect_anomaly",
    "forward_ad",
    "functional",
    "graph",
]


def __getattr__(name: str) -> Any:
    """``autograd.profiler``, ``autograd.profiler_legacy`` (and the former's
    ``_profiler_enabled``, ``_disable_profiler``) on first use
    (PEP 562): it is needed only while profiling, so
    ``import disttorch`` does not pay for it."""
    if name in ("profiler", "profiler_legacy"):
        return importlib.import_module(f".{name}", __name__)
    if name in ("_profiler_enabled", "_disable_profiler"):
        return getattr(importlib.import_module(".profiler", __name__), name)
    raise AttributeError(f"module 'disttorch.autograd' has no attribute '{name}'")
