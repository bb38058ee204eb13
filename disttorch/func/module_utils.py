"""The module helpers of ``torch.func``: ``stack_module_state`` (model ensembling with
``vmap`` and ``functional_call``), ``replace_all_batch_norm_modules_``, and the two
transforms ``functionalize`` (an identity) and ``debug_unwrap``.

``functionalize`` exists in PyTorch to remove mutations before graph capture; here every
function runs eagerly on NumPy arrays and the transforms above see its mutations as
ordinary ops, so it returns ``func`` unchanged in behaviour. ``debug_unwrap`` returns the
real tensor under ``vmap``'s batched wrappers (batch dims in front).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from .._tensor import Tensor
from ..nn.modules.batchnorm import _NormBase
from ..nn.modules.module import Module
from ..ops.shape import stack
from ._batched import level_of

__all__ = ["debug_unwrap", "functionalize", "replace_all_batch_norm_modules_", "stack_module_state"]


def _stack_leaf(tensors: tuple, name: str) -> Tensor:
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(
            f"Expected {name} from each model to have the same .requires_grad, but some of them do and some "
            "of them do not"
        )
    with_grad = flags.pop()
    out = stack([t.detach() for t in tensors])
    return out.requires_grad_() if with_grad else out


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """``(params, buffers)``: each parameter and buffer of the same-class ``models`` stacked
    along a new leading dimension (new leaves, requiring grad where the parameters do), ready
    for ``vmap(functional_call ...)`` over an ensemble."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    kind = type(models[0])
    if not all(type(m) is kind for m in models):
        raise RuntimeError(
            f"stack_module_state: Expected all models to be of the same class, got {[type(m) for m in models]}"
        )
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stack_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    buffers = {k: _stack_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """Stop every batch-norm layer under ``root`` from tracking running statistics (in place):
    they normalise with the batch's own statistics, as ``vmap`` over them requires."""
    for module in root.modules():
        if isinstance(module, _NormBase):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` with its mutations removed (see the module docstring: the same values here).
    ``remove`` is ``"mutations"`` or ``"mutations_and_views"``."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. Valid "
            "options are:\n     remove='mutations': all inplace and out= operators will be removed from the "
            "program, and replaced with their out-of-place equivalents.\n     remove='mutations_and_views': "
            "In addition to the above, all aliasing operators {view} will be replaced with their "
            "non-aliasing counterparts, {view}_copy.\n"
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapper


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The tensor inside ``vmap``'s batched wrapper (all of them with ``recurse``), batch dim
    in front; any other tensor itself (the derivative transforms do not wrap tensors here)."""
    while level_of(tensor) is not None:
        tensor = tensor._bt_value
        if not recurse:
            break
    return tensor
