"""``vmap``, ``grad`` and ``grad_and_value`` of ``torch.func`` (see the package docstring)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import autograd
from .._function_dispatch import twin
from .._tensor import Tensor
from ..ops.shape import cat
from ._batch_rules import activate
from ._batched import level_of, pop_level, push_level, wrap
from ._inputs import grad_at, release, split_aux, track_args
from ._pytree import tree_flatten, tree_unflatten

__all__ = ["grad", "grad_and_value", "vmap"]


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """Map ``func`` over dimension ``in_dims`` of its tensor arguments (an int or None for
    all, or a tuple with one entry per positional argument, itself a pytree prefix of it; None
    for an argument not mapped), stacking the outputs along ``out_dims`` (likewise, for the
    outputs). ``func`` runs once, on batched tensors (see :mod:`._batched`); ``randomness``
    (``"error"``, ``"different"``, ``"same"``) governs random ops, ``chunk_size`` runs the
    batch in chunks of that many. Gradients flow through."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", type(func).__name__)

    @functools.wraps(func)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        activate()
        target = twin(func)  # (a function taken before the first vmap swapped in dispatching twins)
        flat, spec = tree_flatten(args)
        dims = _in_dims_per_leaf(in_dims, args, name)
        n = _batch_size(flat, dims, in_dims, name)
        if chunk_size is None or chunk_size >= n:
            return _run(target, flat, spec, dims, n, out_dims, randomness, kwargs, name)
        chunks = []
        for start in range(0, n, chunk_size):
            size = min(chunk_size, n - start)
            part = [x if d is None else x.narrow(d, start, size) for x, d in zip(flat, dims)]
            chunks.append(_run(target, part, spec, dims, size, out_dims, randomness, kwargs, name))
        return _concat_chunks(chunks, out_dims)

    return mapped


def _in_dims_per_leaf(in_dims: Any, args: tuple, name: str) -> list:
    if in_dims is None or isinstance(in_dims, int):
        return [in_dims] * len(tree_flatten(args)[0])
    if not isinstance(in_dims, tuple):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...): expected `in_dims` to be int or a (potentially nested) "
            f"tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    if len(in_dims) != len(args):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure "
            f"of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has structure "
            f"{tree_flatten(args)[1]}."
        )
    return [d for sub, arg in zip(in_dims, args) for d in _dims_per_leaf(sub, arg, "in_dims")]


def _batch_size(flat: list, dims: list, in_dims: Any, name: str) -> int:
    sizes = []
    for x, d in zip(flat, dims):
        if d is None:
            continue
        if not isinstance(x, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the input is "
                f"of type {type(x)}. We cannot vmap over non-Tensor arguments, please use None as the "
                "respective in_dim"
            )
        if x.dim() == 0 or not -x.dim() <= d < x.dim():
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but that input "
                f"is a Tensor of dimensionality {x.dim()} so expected in_dim to satisfy -{x.dim()} <= in_dim < "
                f"{x.dim()}."
            )
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one input must be a Tensor mapped over "
            "a dim (in_dims not None)"
        )
    if len(set(sizes)) > 1:
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    return sizes[0]


def _run(
    func: Callable,
    flat: list,
    spec: Any,
    dims: list,
    n: int,
    out_dims: Any,
    randomness: str,
    kwargs: dict,
    name: str,
) -> Any:
    """``func`` called once on the inputs batched at a new level, its outputs unbatched."""
    level = push_level(n, randomness)
    try:
        leaves = [x if d is None else wrap(x.movedim(d, 0), level) for x, d in zip(flat, dims)]
        out = func(*tree_unflatten(leaves, spec), **kwargs)
    finally:
        pop_level(level)
    leaves, out_spec = tree_flatten(out)
    results = []
    for x, d in zip(leaves, _dims_per_leaf(out_dims, out, "out_dims")):
        if d is None:
            if level_of(x) is level:
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
                )
            results.append(x)
        elif not isinstance(x, Tensor):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(x)}. Did you mean to set "
                "out_dims= to None for output?"
            )
        elif level_of(x) is level:
            results.append(x._bt_value.movedim(0, d))
        else:
            at = d % (x.dim() + 1)
            results.append(x.unsqueeze(at).expand(*x.shape[:at], n, *x.shape[at:]))
    return tree_unflatten(results, out_spec)


def _concat_chunks(chunks: list, out_dims: Any) -> Any:
    flat, spec = tree_flatten(chunks[0])
    dims = _dims_per_leaf(out_dims, chunks[0], "out_dims")
    columns = zip(*(tree_flatten(c)[0] for c in chunks))
    return tree_unflatten([col[0] if d is None else cat(col, dim=d) for col, d in zip(columns, dims)], spec)


def _dims_per_leaf(dims: Any, tree: Any, what: str) -> list:
    """``dims`` broadcast over the leaves of ``tree`` (an int or None covers a subtree)."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(tree_flatten(tree)[0])
    same = isinstance(dims, dict) == isinstance(tree, dict) and isinstance(tree, (tuple, list, dict))
    if not same or len(dims) != len(tree):
        raise ValueError(
            f"vmap: {what}={dims!r} is not compatible with the structure of the "
            f"{'outputs' if what == 'out_dims' else 'inputs'} ({type(tree).__name__} of "
            f"{len(tree) if isinstance(tree, (tuple, list, dict)) else 1})"
        )
    if isinstance(tree, dict):
        return [d for k in tree for d in _dims_per_leaf(dims[k], tree[k], what)]
    return [d for sub_dims, sub in zip(dims, tree) for d in _dims_per_leaf(sub_dims, sub, what)]


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
                grads = grad_at(
                    tr.levels,
                    [out],
                    tr.leaves,
                    None,
                    retain_graph=tr.keep,
                    create_graph=tr.keep,
                    allow_unused=True,
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
