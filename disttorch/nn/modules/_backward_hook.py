"""Module backward hooks (``register_full_backward_hook``, ``..._pre_hook``): identity
Functions placed around a module's call capture the gradients with respect to its
outputs (handed to ``pre_hook(module, grad_output)``) and inputs (handed to
``hook(module, grad_input, grad_output)``); what a hook returns replaces them."""

from __future__ import annotations

from typing import Any, Callable

from ..._tensor import Tensor
from ...autograd.function import Function


class _CaptureOutputGrads(Function):
    """Identity on the module's output tensors; backward records ``grad_output``."""

    _raw = True
    _layout_preserving = True  # on DTensors: each output laid out as its input

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tuple(t._data for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        grads = ctx.state.run_pre(grads)
        ctx.state.grad_output = grads
        if not ctx.state.input_captured:
            ctx.state.run((None,) * ctx.state.n_args)
        return (None,) + grads


class _CaptureInputGrads(Function):
    """Identity on the module's input tensors; backward calls the hooks with
    ``grad_input`` and passes on what they return."""

    _raw = True
    _layout_preserving = True

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tuple(t._data for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        state = ctx.state
        full = [None] * state.n_args
        for pos, g in zip(state.tensor_positions, grads):
            full[pos] = g
        full = state.run(tuple(full))
        return (None,) + tuple(full[pos] for pos in state.tensor_positions)


class BackwardHook:
    """Wires one module call's inputs and outputs to the module's backward hooks."""

    def __init__(self, module: Any, hooks: list[Callable], pre_hooks: list[Callable]) -> None:
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_output: tuple = ()
        self.input_captured = False
        self.n_args = 0
        self.tensor_positions: list[int] = []

    def run_pre(self, grad_output: tuple) -> tuple:
        for hook in self.pre_hooks:
            result = hook(self.module, grad_output)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grad_output):
                    raise RuntimeError(
                        f"Backward pre hook returned an invalid number of "
                        f"grad_output, got {len(result)}, but expected "
                        f"{len(grad_output)}"
                    )
                grad_output = result
        return grad_output

    def run(self, grad_input: tuple) -> tuple:
        for hook in self.hooks:
            result = hook(self.module, grad_input, self.grad_output)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grad_input):
                    raise RuntimeError(
                        f"Backward hook returned an invalid number of grad_input, "
                        f"got {len(result)}, but expected {len(grad_input)}"
                    )
                grad_input = result
        return grad_input

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_args = len(args)
        self.tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a._rg]
        if not self.tensor_positions:
            return args
        self.input_captured = True
        outs = _CaptureInputGrads.apply(self, *(args[i] for i in self.tensor_positions))
        new = list(args)
        for pos, t in zip(self.tensor_positions, outs):
            new[pos] = t
        return tuple(new)

    def setup_output_hook(self, output: Any) -> Any:
        single = isinstance(output, Tensor)
        items = (output,) if single else output
        if not isinstance(items, tuple):
            return output
        positions = [i for i, o in enumerate(items) if isinstance(o, Tensor) and o._rg]
        if not positions:
            return output
        outs = _CaptureOutputGrads.apply(self, *(items[i] for i in positions))
        new = list(items)
        for pos, t in zip(positions, outs):
            new[pos] = t
        return new[0] if single else tuple(new)
