"""``torch._higher_order_ops.associative_scan``: an inclusive scan with a binary function
over a tensor, or a pytree of tensors, along a dim (transformers' Mamba imports it).

PyTorch runs ``combine_mode="pointwise"`` only on CUDA/XPU tensors (raising for CPU
tensors, as here) and ``"generic"`` anywhere; here the generic scan is a loop over the dim,
``combine_fn`` getting the running result and the next slice (size 1 along ``dim``), so
the results are differentiable like any op's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..ops.shape import cat
from ..utils._pytree import tree_flatten, tree_unflatten

__all__ = ["associative_scan"]


def associative_scan(
    combine_fn: Callable[[Any, Any], Any],
    xs: Any,
    dim: int,
    reverse: bool = False,
    combine_mode: str = "pointwise",
) -> Any:
    """The inclusive scan of ``xs`` (a tensor or a pytree of tensors of one size along
    ``dim``) with ``combine_fn`` (associative), from the end when ``reverse``."""
    if combine_mode not in ("pointwise", "generic"):
        raise ValueError(f"Combine_mode must either 'pointwise' or 'generic', but got {combine_mode}")
    if not callable(combine_fn):
        raise ValueError(f"Combine_fn must be a callable, but got {combine_fn}")
    leaves, spec = tree_flatten(xs)
    if not leaves or not all(isinstance(leaf, Tensor) for leaf in leaves):
        raise ValueError(f"All xs leaves must be Tensors, got {[type(leaf).__name__ for leaf in leaves]}")
    if combine_mode == "pointwise":
        raise ValueError("For combine_mode='pointwise', all input tensors need to be on CUDA or XPU")
    ndim = leaves[0].dim()
    if not -ndim <= dim < max(ndim, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})"
        )
    d = dim % ndim
    n = leaves[0].shape[d]
    if any(leaf.shape[d] != n for leaf in leaves):
        raise ValueError(f"All xs leaves must have the same size along dim {dim}")
    if n == 0:
        return tree_unflatten([leaf.clone() for leaf in leaves], spec)
    running, steps = None, []
    for i in reversed(range(n)) if reverse else range(n):
        item = tree_unflatten([leaf.narrow(d, i, 1) for leaf in leaves], spec)
        running = item if running is None else combine_fn(running, item)
        steps.append(tree_flatten(running))
    if reverse:
        steps.reverse()
    out_spec = steps[-1][1]
    return tree_unflatten([cat([s[0][k] for s in steps], d) for k in range(len(steps[0][0]))], out_spec)
