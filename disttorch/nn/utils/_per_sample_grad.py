"""``call_for_per_sample_grads``: a module's forward that leaves, after ``backward``, each
trainable parameter's per-sample gradients in ``param.grad_sample`` (shape
``(batch, *param.shape)``), as PyTorch's expanded weights do (Opacus's ``grad_sample_mode="ew"``).

Each sample of the batch runs the module on its own copy of the parameters (one row of a
``(batch, *shape)`` leaf per parameter), so the gradient reaching that leaf is the
per-sample gradient; the outputs are concatenated back along the batch dimension. The
parameters' own ``.grad`` stay untouched, as in PyTorch. Like PyTorch's, it assumes that
samples do not interact inside the module (no batch norm).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..._tensor import Tensor
from ...ops.shape import cat
from ...utils._pytree import tree_flatten, tree_unflatten
from ..modules.module import Module
from .stateless import functional_call

__all__ = ["call_for_per_sample_grads"]


def _batch_size(args: tuple, kwargs: dict, dim: int) -> int:
    size = None
    for leaf in tree_flatten((args, kwargs))[0]:
        if not isinstance(leaf, Tensor):
            continue
        n = leaf.shape[dim]
        if size is not None and size != n:
            raise RuntimeError(
                "When computing batch size, found at least one input with batch size "
                f"{size} and one with batch size {n}. Please specify it "
                "explicitly using the batch size kwarg in call_for_per_sample_grads"
            )
        size = n
    if size is None:
        raise RuntimeError(
            "Unable to find a tensor in the passed args and kwargs. They may not be pytree-able "
            "and so ExpandedWeights cannot compute the batch size from the inputs. Please specify "
            "it explicitly"
        )
    return size


def _store_grad_sample(param: Tensor, scale: int) -> Callable[[Tensor], None]:
    def hook(grad: Tensor) -> None:
        contribution = grad * scale if scale != 1 else grad
        previous = getattr(param, "grad_sample", None)
        param.grad_sample = contribution if previous is None else previous + contribution

    return hook


def call_for_per_sample_grads(
    module: Module, *, batch_size: int | None = None, loss_reduction: str = "sum", batch_first: bool = True
) -> Callable:
    """``module``'s forward, computing per-sample gradients into each trainable parameter's
    ``grad_sample`` on ``backward`` (accumulated over backward calls). ``batch_size`` is
    read from the inputs (their first dimension, the second unless ``batch_first``) when
    None; ``loss_reduction="mean"`` scales the per-sample gradients by the batch size."""
    if loss_reduction not in ("sum", "mean"):
        raise RuntimeError(f"Expected loss_reduction argument to be sum or mean, got {loss_reduction}")
    if not isinstance(module, Module):
        raise RuntimeError(f"Module passed must be nn.Module, got {type(module).__name__}")
    if not (batch_size is None or isinstance(batch_size, int)):
        raise RuntimeError(f"Batch size passed must be None or an integer, got {type(batch_size).__name__}")
    if batch_size is not None and batch_size < 1:
        raise RuntimeError(f"Batch size must be positive, got {batch_size}")
    for weight in module.parameters():
        if getattr(weight, "grad_sample", None) is not None:
            raise RuntimeError(
                "Current Expanded Weights accumulates the gradients, which will be incorrect for multiple "
                f"calls without clearing gradients. Please clear out the grad_sample parameter of {weight} or "
                "post an issue to pytorch/pytorch to prioritize correct behavior"
            )
    dim = 0 if batch_first else 1

    @functools.wraps(module.forward)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        n = batch_size if batch_size is not None else _batch_size(args, kwargs, dim)
        scale = n if loss_reduction == "mean" else 1
        copies = {}
        for name, p in module.named_parameters():
            if p.requires_grad:
                rows = p.detach().unsqueeze(0).expand(n, *p.shape).clone().requires_grad_(True)
                rows.register_hook(_store_grad_sample(p, scale))
                copies[name] = rows
        leaves, spec = tree_flatten((args, kwargs))
        batched = [isinstance(x, Tensor) and x.dim() > dim and x.shape[dim] == n for x in leaves]
        outputs = []
        for i in range(n):
            sample = [x.narrow(dim, i, 1) if b else x for x, b in zip(leaves, batched)]
            sample_args, sample_kwargs = tree_unflatten(sample, spec)
            params = {name: rows[i] for name, rows in copies.items()}
            outputs.append(functional_call(module, params, tuple(sample_args), sample_kwargs))
        flat = [tree_flatten(o) for o in outputs]
        joined = [
            cat(list(column), dim) if isinstance(column[0], Tensor) else column[0]
            for column in zip(*(leaves for leaves, _ in flat))
        ]
        return tree_unflatten(joined, flat[0][1])

    return wrapper
