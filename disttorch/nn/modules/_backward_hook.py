"""Module backward hooks (``register_full_backward_hook``, ``..._pre_hook``): identity
Functions placed around a module's call capture the gradients with respect to its
outputs (handed to ``pre_hook(module, grad_output)``) and inputs (handed to
``hook(module, grad_input, grad_output)``); what a hook returns replaces them."""

from __future__ import annotations

from typing import Any, Callable

from ..._native_warnings import warn
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
            ctx.state.run_without_inputs()
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

    def run_without_inputs(self) -> None:
        """Call the hooks when no input requires grad (``grad_input`` all None), warning as
        PyTorch does; a hook may not return gradients then."""
        warn(
            "Full backward hook is firing when gradients are computed with respect to module outputs "
            "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
            "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details."
        )
        grad_input = (None,) * self.n_args
        for hook in self.hooks:
            result = hook(self.module, grad_input, self.grad_output)
            if result is not None and not (isinstance(result, tuple) and all(r is None for r in result)):
                raise RuntimeError(
                    "Backward hook for Modules where no input requires gradient should always return "
                    "None or None for all gradients."
                )

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


# ---------------------------------------------------------------- non-full (legacy) hooks
class _WrappedHook:
    """A module's legacy backward hook as a hook of its output's graph node:
    ``hook(module, grad_inputs, grad_outputs)`` of that one node (``Node.register_hook``)."""

    def __init__(self, hook: Callable, module: Any) -> None:
        self.hook, self.module = hook, module

    def __call__(self, grad_inputs: tuple, grad_outputs: tuple) -> Any:
        return self.hook(self.module, grad_inputs, grad_outputs)


def first_output_tensor(result: Any) -> Tensor:
    """The tensor a legacy backward hook attaches to: the first of ``result`` (descending
    into the first entry of sequences, the first tensor value of dicts), as PyTorch's."""
    var = result
    while not isinstance(var, Tensor):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, Tensor))
        else:
            var = var[0]
    return var


def non_full_hook_warning(inputs: Any, result: Any, grad_fn: Any) -> str | None:
    """PyTorch's deprecation warning for a legacy backward hook on this call (``None`` when
    the node's gradients are the module's): what the hook will miss."""
    tail = " Please use register_full_backward_hook to get the documented behavior."
    if not isinstance(result, Tensor):
        if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            return (
                "Using non-full backward hooks on a Module that does not return a single Tensor or a "
                "tuple of Tensors is deprecated and will be removed in future versions. This hook "
                "will be missing some of the grad_output." + tail
            )
    else:
        result = (result,)
    if not isinstance(inputs, Tensor):
        if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            return (
                "Using non-full backward hooks on a Module that does not take as input a single "
                "Tensor or a tuple of Tensors is deprecated and will be removed in future versions. "
                "This hook will be missing some of the grad_input." + tail
            )
    else:
        inputs = (inputs,)
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_grad_fn or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        return (
            "Using a non-full backward hook when outputs are nested in python data structure is "
            "deprecated and will be removed in future versions. This hook will be missing some "
            "grad_output."
        )
    if len(out_grad_fn) > 1:
        return (
            "Using a non-full backward hook when outputs are generated by different autograd Nodes "
            "is deprecated and will be removed in future versions. This hook will be missing some "
            "grad_output." + tail
        )
    inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
    if inputs_grad_fn != {n[0] for n in grad_fn.next_functions}:
        return (
            "Using a non-full backward hook when the forward contains multiple autograd Nodes is "
            "deprecated and will be removed in future versions. This hook will be missing some "
            "grad_input." + tail
        )
    return None
