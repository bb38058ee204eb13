"""``backward()`` and ``grad()``: the two ways to run a backward pass from outputs to leaves.

Both turn their arguments into root gradients and hand the graph to the engine
(``engine.run_backward``); ``Tensor.backward`` is ``backward`` on one tensor (attached to
``Tensor`` by ``disttorch.ops``'s binding step).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._creation import ones_like, tensor, zeros_like
from .._memory_format import preserve_format
from .._tensor import Tensor
from .._torch_function import dispatch_args
from .engine import run_backward
from .function import GradientEdge

__all__ = ["backward", "grad", "stack_rows", "tensor_backward"]


def _as_list(x: Any) -> list:
    if x is None:
        return []
    return [x] if isinstance(x, (Tensor, GradientEdge)) else list(x)


def _ones_like(out: Tensor) -> Tensor:
    """The implicit gradient of a scalar output; a wrapper subclass makes its own (the
    public ``ones_like``, which hands it ``aten.ones_like``, as PyTorch's engine asks it)."""
    if type(out) is not Tensor and dispatch_args((out,)):
        return ones_like(out, memory_format=preserve_format)
    return Tensor._make(np.ones(out._data.shape, dtype=out._data.dtype))


def _root_grads(outputs: list, grad_outputs: list) -> list:
    """The gradients the pass starts from: given ones, or 1 for scalar outputs."""
    if grad_outputs and len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"grad can be implicitly created only for scalar outputs "
            f"(got {len(grad_outputs)} gradients for {len(outputs)} outputs)"
        )
    grads = []
    for i, out in enumerate(outputs):
        if not out._rg or out._base is not None and "_rg_from_base" in out.__dict__:  # (see mark_view)
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        g = grad_outputs[i] if grad_outputs else None
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out._data.dtype.kind == "c":  # a complex loss has no gradient of its own
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {out.dtype}"
                )
            g = _ones_like(out)
        elif not isinstance(g, Tensor):
            g = tensor(g, dtype=out.dtype)
        elif g._data.shape != out._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of "
                f"{g.shape} and output[{i}] has a shape of {out.shape}."
            )
        elif g.dtype.is_complex != out.dtype.is_complex:
            raise RuntimeError(
                "For complex Tensors, both grad_output and output are required to have the same dtype. "
                f"Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] has a dtype of {out.dtype}."
            )
        grads.append(g)
    return grads


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
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


#: ``batched_grad(grad, outs, ins, cotangents, n, **options)``: the one batched pass behind
#: ``is_grads_batched`` (``func._batched_backward``, a layer above; the package facade sets it)
BATCHED_GRAD: list[Callable] = []


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """Return the gradients of ``outputs`` with respect to ``inputs`` (``.grad`` untouched).

    Unused inputs give ``None`` with ``allow_unused=True`` (zeros with
    ``materialize_grads=True``) and an error otherwise. With ``is_grads_batched``, the first
    dimension of every ``grad_outputs`` tensor is a batch: one backward pass runs on the batched
    cotangents (as PyTorch's vmap over backward; a node that cannot take them runs per entry). ``only_inputs`` is accepted and
    ignored, as in PyTorch.
    """
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        return _batched_grad(
            outs, ins, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads
        )
    grads = _root_grads(outs, _as_list(grad_outputs) if grad_outputs is not None else [])
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(
        outs, grads, retain_graph, create_graph, inputs=ins, accumulate=False, allow_unused=allow_unused
    )
    if materialize_grads:
        result = [g if g is not None else zeros_like(t) for g, t in zip(result, ins)]
    return tuple(result)


def stack_rows(rows: list[Tensor], create_graph: bool) -> Tensor:
    """``torch.stack(rows)``, differentiable when ``create_graph`` (by copying into slices:
    this layer sits below the ops)."""
    if not (create_graph and any(r.requires_grad for r in rows)):
        return Tensor._make(np.stack([r._data for r in rows]))
    out = rows[0].new_zeros((len(rows), *rows[0].shape))
    for k, r in enumerate(rows):
        out[k] = r
    return out


def _batched_grad(
    outs: list,
    ins: list,
    grad_outputs: Any,
    retain_graph: Any,
    create_graph: bool,
    allow_unused: bool,
    materialize_grads: bool,
) -> tuple:
    gos = _as_list(grad_outputs)
    if len(gos) != len(outs) or any(not isinstance(g, Tensor) or g.ndim == 0 for g in gos):
        raise RuntimeError(
            "grad: with is_grads_batched=True, grad_outputs must hold one tensor per output, each with a "
            "leading batch dimension"
        )
    sizes = {g.shape[0] for g in gos}
    if len(sizes) != 1:
        raise RuntimeError(f"grad: the batch dimensions of grad_outputs differ: {sorted(sizes)}")
    return BATCHED_GRAD[0](
        grad,
        outs,
        ins,
        gos,
        sizes.pop(),
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=allow_unused,
        materialize_grads=materialize_grads,
    )


def tensor_backward(
    self: Tensor,
    gradient: Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Compute the gradient of this tensor with respect to graph leaves."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)
