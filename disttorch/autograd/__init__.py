"""Automatic differentiation: ``backward``, ``grad``, ``Function``, grad mode, ``gradcheck``."""
from __future__ import annotations

from typing import Any

from .backprop import backward, grad
from .engine import queue_callback
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "queue_callback", "gradcheck", "gradgradcheck", "Variable"]


class _ExecutionEngine:
    """``Variable._execution_engine.queue_callback`` as in PyTorch."""

    @staticmethod
    def queue_callback(callback: Any) -> None:
        queue_callback(callback)


class Variable:
    """Compatibility shim: PyTorch code reaches the engine through ``Variable``."""

    _execution_engine = _ExecutionEngine()
