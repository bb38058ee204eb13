"""Automatic differentiation: ``backward``, ``grad``, ``Function``, grad mode, ``gradcheck``,
``profiler`` (``record_function``, the legacy ``profile``)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .engine import queue_callback, run_backward
from .function import Function, FunctionCtx, _tensor_cls, once_differentiable
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from . import profiler

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "queue_callback", "gradcheck", "gradgradcheck", "Variable"]


def _as_list(x: Any) -> list:
    if x is None:
        return []
    return [x] if isinstance(x, _tensor_cls[0]) else list(x)


def _root_grads(outputs: list, grad_outputs: list) -> list:
    """The gradients the pass starts from: given ones, or 1 for scalar outputs."""
    Tensor = _tensor_cls[0]
    if grad_outputs and len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs "
                           f"(got {len(grad_outputs)} gradients for {len(outputs)} outputs)")
    grads = []
    for i, out in enumerate(outputs):
        if not out._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        g = grad_outputs[i] if grad_outputs else None
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = Tensor._make(np.ones(out._data.shape, dtype=out._data.dtype))
        elif not isinstance(g, Tensor):
            from .. import tensor
            g = tensor(g, dtype=out.dtype)
        elif g._data.shape != out._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{g.shape} and output[{i}] has a shape of {out.shape}.")
        grads.append(g)
    return grads


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate into ``.grad`` of the graph's leaves the gradient of ``tensors``.

    Args:
        tensors: output tensor(s) to differentiate.
        grad_tensors: gradient w.r.t. each output; may be omitted for scalar outputs.
        retain_graph: keep saved tensors for another backward (default: ``create_graph``).
        create_graph: record the backward pass so higher-order gradients can be taken.
        inputs: accumulate only into these tensors' ``.grad``.
    """
    outputs = _as_list(tensors)
    grads = _root_grads(outputs, _as_list(grad_tensors) if grad_tensors is not None else [])
    if retain_graph is None:
        retain_graph = create_graph
    ins = _as_list(inputs) if inputs is not None else None
    if ins is not None and not ins:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    run_backward(outputs, grads, retain_graph, create_graph, inputs=ins, accumulate=True)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None,
         materialize_grads: bool = False) -> tuple:
    """Return the gradients of ``outputs`` with respect to ``inputs`` (``.grad`` untouched).

    Unused inputs give ``None`` with ``allow_unused=True`` (zeros with
    ``materialize_grads=True``) and an error otherwise.
    """
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    grads = _root_grads(outs, _as_list(grad_outputs) if grad_outputs is not None else [])
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outs, grads, retain_graph, create_graph, inputs=ins,
                          accumulate=False, allow_unused=allow_unused)
    if materialize_grads:
        from .. import zeros_like
        result = [g if g is not None else zeros_like(t) for g, t in zip(result, ins)]
    return tuple(result)


class _ExecutionEngine:
    """``Variable._execution_engine.queue_callback`` as in PyTorch."""

    @staticmethod
    def queue_callback(callback: Any) -> None:
        queue_callback(callback)


class Variable:
    """Compatibility shim: PyTorch code reaches the engine through ``Variable``."""

    _execution_engine = _ExecutionEngine()
