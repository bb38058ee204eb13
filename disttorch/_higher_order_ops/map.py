"""``torch._higher_order_ops.map`` (``functorch.experimental.control_flow.map``): ``f`` applied
to each slice of ``xs`` along its first dimension, the results stacked. PyTorch's compilers
capture it as one node; disttorch runs it eagerly, as a Python loop, as PyTorch does outside one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..utils._pytree import tree_flatten, tree_unflatten

__all__ = ["map"]


def map(f: Callable, xs: Any, *args: Any) -> Any:
    """``stack([f(x, *args) for x in xs])`` over the first dimension of ``xs`` (a tensor or a
    pytree of tensors sharing that dimension); ``f`` returns a tensor or a pytree of them."""
    flat_xs, spec = tree_flatten(xs)
    if not flat_xs or not all(isinstance(t, Tensor) for t in flat_xs):
        raise RuntimeError(f"Mapped xs can only consist of tensors. Got xs {flat_xs}.")
    sizes = {t.shape[0] if t.dim() else None for t in flat_xs}
    if None in sizes or len(sizes) != 1:
        raise RuntimeError(
            f"Leading dimensions of mapped xs must be consistent. Got shapes {[t.shape for t in flat_xs]}."
        )
    (n,) = sizes
    if n == 0:
        raise RuntimeError("Leading dimensions of mapped xs cannot be 0.")
    from .. import stack

    outs = [f(tree_unflatten([t[i] for t in flat_xs], spec), *args) for i in range(n)]
    flat_outs = [tree_flatten(o) for o in outs]
    out_spec = flat_outs[0][1]
    columns = zip(*(leaves for leaves, _ in flat_outs))
    return tree_unflatten([stack(list(col)) for col in columns], out_spec)
