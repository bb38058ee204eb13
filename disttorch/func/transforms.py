"""``vmap``, ``grad`` and ``grad_and_value`` of ``torch.func`` (see the package docstring)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import autograd
from .._tensor import Tensor
from ..ops.shape import stack
from ._inputs import release, split_aux, track_args
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "vmap"]


def _leaves(obj: Any) -> list:
    return [x for x in tree_flatten(obj)[0] if isinstance(x, Tensor)]


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """Map ``func`` over dimension ``in_dims`` of its tensor arguments (an int for all, or a
    tuple with one entry per argument, ``None`` for an argument not mapped), stacking the
    outputs along ``out_dims``. Gradients flow through."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )

    @functools.wraps(func)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(
                f"vmap({getattr(func, '__name__', 'fn')}, in_dims={in_dims}, ...)(<inputs>): "
                f"in_dims is not compatible with the structure of `inputs`: {len(dims)} in_dims "
                f"for {len(args)} positional arguments"
            )
        sizes = {a.shape[d] for a, d in zip(args, dims) for a in _leaves(a) if d is not None}
        if not sizes:
            raise ValueError("vmap: at least one input must be a Tensor mapped over a dim (in_dims not None)")
        if len(sizes) > 1:
            raise ValueError(
                f"vmap: Expected all tensors to have the same size in the mapped dimension, got "
                f"sizes {sorted(sizes)} for the mapped dimension"
            )
        n = sizes.pop()
        results = []
        for i in range(n):
            sliced = [
                a
                if d is None
                else tree_map(lambda t, d=d, i=i: t.select(d, i) if isinstance(t, Tensor) else t, a)
                for a, d in zip(args, dims)
            ]
            results.append(func(*sliced, **kwargs))
        return _stack_outputs(results, out_dims)

    return mapped


def _stack_outputs(results: list, out_dims: Any) -> Any:
    """Stack the per-slice outputs (a pytree of tensors) leaf by leaf; ``out_dims`` is an
    int (or None) for every leaf, or a tree of them that is a prefix of the output's."""
    flat, spec = tree_flatten(results[0])
    for leaf in flat:
        if not isinstance(leaf, Tensor):
            raise ValueError(
                "vmap: the function must return tensors (or tuples, lists or dicts of them), "
                f"got {type(leaf).__name__}"
            )
    dims = _out_dims_per_leaf(out_dims, results[0])
    columns = zip(*(tree_flatten(r)[0] for r in results))
    stacked = [col[0] if d is None else stack(col, dim=d) for col, d in zip(columns, dims)]
    return tree_unflatten(stacked, spec)


def _out_dims_per_leaf(out_dims: Any, output: Any) -> list:
    """``out_dims`` broadcast over the leaves of ``output`` (an int or None covers a subtree)."""
    if out_dims is None or isinstance(out_dims, int):
        return [out_dims] * len(tree_flatten(output)[0])
    same = isinstance(out_dims, dict) == isinstance(output, dict) and isinstance(output, (tuple, list, dict))
    if not same or len(out_dims) != len(output):
        raise ValueError(
            f"vmap: out_dims={out_dims!r} is not compatible with the structure of the outputs "
            f"({type(output).__name__} of {len(output) if isinstance(output, (tuple, list, dict)) else 1})"
        )
    if isinstance(output, dict):
        return [d for k in output for d in _out_dims_per_leaf(out_dims[k], output[k])]
    return [d for sub_dims, sub in zip(out_dims, output) for d in _out_dims_per_leaf(sub_dims, sub)]


def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """A function returning ``(gradient of func w.r.t. argument(s) argnums, func's value)``;
    with ``has_aux``, ``func`` returns ``(output, aux)`` and the value is ``(output, aux)``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> tuple:
        tr = track_args(args, argnums, "grad_and_value(f)(*args)")
        with autograd.enable_grad():
            out, aux = split_aux(func(*tr.args, **kwargs), has_aux, "grad_and_value(f)(*args)")
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError(
                "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                f"{getattr(out, 'shape', type(out).__name__)}"
            )
        grads: tuple = (None,) * len(tr.leaves)
        if out.requires_grad:
            with autograd.set_grad_enabled(tr.keep):
                grads = autograd.grad(
                    out, tr.leaves, retain_graph=tr.keep, create_graph=tr.keep, allow_unused=True
                )
        flat = [g if g is not None else x.detach().new_zeros(x.shape) for g, x in zip(grads, tr.leaves)]
        g = release(tr.per_argnum(flat, argnums), tr.keep)
        value = release(out, tr.keep)
        return (g, (value, release(aux, tr.keep))) if has_aux else (g, value)

    return wrapper


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of the scalar ``func`` w.r.t. argument(s) ``argnums``
    (and ``func``'s aux output when ``has_aux``)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper
