"""What every ``torch.func`` transform does to its inputs before calling the function.

The differentiated arguments (``argnums``, each a pytree of tensors) are replaced by tensors
the autograd graph can start from. When an input already carries a graph (it requires grad,
for instance because an outer transform differentiates through this one), the replacement is
a view of it and the transform records its own backward passes, so transforms compose
(``jacfwd(jacrev(f))``, ``grad(grad(f))``); otherwise it is a fresh leaf and the results are
plain tensors.
"""

from __future__ import annotations

from typing import Any

from .. import autograd
from .._tensor import Tensor
from ._pytree import TreeSpec, tree_flatten, tree_map, tree_unflatten

__all__ = ["Tracked", "check_argnums", "flat_outputs", "release", "split_aux", "track", "track_args"]


def check_argnums(argnums: Any, nargs: int, api: str) -> tuple[int, ...]:
    """``argnums`` as a tuple of non-negative indices into ``nargs`` positional arguments."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if not isinstance(nums, tuple) or not all(isinstance(k, int) and not isinstance(k, bool) for k in nums):
        raise RuntimeError(f"{api}: argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if not nums:
        raise RuntimeError(f"{api}: argnums must be non-empty")
    out = []
    for k in nums:
        if not -nargs <= k < nargs:
            raise RuntimeError(f"{api}: Got argnum={k}, but only {nargs} positional inputs")
        out.append(k % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{api}: argnums elements must be unique, got {argnums}")
    return tuple(out)


def _check_leaf(x: Any, api: str) -> None:
    if not isinstance(x, Tensor):
        raise RuntimeError(
            f"{api}: Expected all inputs to be Tensors (the differentiated arguments may be pytrees of "
            f"tensors), got {type(x).__name__}"
        )
    if not x.is_floating_point():
        raise RuntimeError(
            f"{api}: only Tensors of floating point dtype can require gradients, got an input of dtype "
            f"{x.dtype}"
        )


def track(x: Tensor) -> Tensor:
    """``x`` as a tensor the graph starts from: a view if it has a graph already, else a leaf."""
    with autograd.enable_grad():
        return x.view_as(x) if x.requires_grad else x.detach().requires_grad_(True)


class Tracked:
    """The arguments after tracking: ``args`` to call the function with, ``leaves`` (the tracked
    input tensors, in order), ``specs`` (the pytree of each differentiated argument), and
    ``keep`` (the results must stay differentiable for an outer graph)."""

    def __init__(self, args: list, leaves: list[Tensor], specs: list[TreeSpec], keep: bool) -> None:
        self.args = args
        self.leaves = leaves
        self.specs = specs
        self.keep = keep

    def per_argnum(self, flat: list, argnums: Any) -> Any:
        """``flat`` (one entry per input leaf) regrouped like the differentiated arguments:
        one pytree for an int ``argnums``, a tuple of pytrees for a tuple."""
        trees, pos = [], 0
        for spec in self.specs:
            trees.append(tree_unflatten(flat[pos : pos + spec.num_leaves], spec))
            pos += spec.num_leaves
        return trees[0] if isinstance(argnums, int) else tuple(trees)


def track_args(args: tuple, argnums: Any, api: str) -> Tracked:
    """Track the arguments ``argnums`` of ``args`` (see the module docstring)."""
    nums = check_argnums(argnums, len(args), api)
    new_args = list(args)
    leaves: list[Tensor] = []
    specs: list[TreeSpec] = []
    keep = False
    for k in nums:
        flat, spec = tree_flatten(args[k])
        for x in flat:
            _check_leaf(x, api)
            keep = keep or (x.requires_grad and autograd.is_grad_enabled())
        tracked = [track(x) for x in flat]
        leaves.extend(tracked)
        specs.append(spec)
        new_args[k] = tree_unflatten(tracked, spec)
    return Tracked(new_args, leaves, specs, keep)


def release(obj: Any, keep: bool) -> Any:
    """The results handed back: detached unless they must stay differentiable (``keep``)."""
    if keep:
        return obj
    return tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, obj)


def flat_outputs(out: Any, api: str) -> tuple[list[Tensor], TreeSpec]:
    """The tensors of a function's output pytree (anything else is an error)."""
    flat, spec = tree_flatten(out)
    for x in flat:
        if not isinstance(x, Tensor):
            raise RuntimeError(
                f"{api}: expected f(*args) to return only tensors, got unsupported type {type(x).__name__}"
            )
    return flat, spec


def split_aux(result: Any, has_aux: bool, api: str) -> tuple[Any, Any]:
    """``(output, aux)`` of a function called with ``has_aux``."""
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return result
