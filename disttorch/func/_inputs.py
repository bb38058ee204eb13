"""What every ``torch.func`` transform does to its inputs before calling the function.

The differentiated arguments (``argnums``, each a pytree of tensors) are replaced by tensors
the autograd graph can start from. When an input already carries a graph (it requires grad,
for instance because an outer transform differentiates through this one), the replacement is
a view of it and the transform records its own backward passes, so transforms compose
(``jacfwd(jacrev(f))``, ``grad(grad(f))``); otherwise it is a fresh leaf and the results are
plain tensors.

Inside ``vmap`` the tracked tensors are batched at every running level (an input unbatched
at a level is expanded to its size first), so the real tensors under them hold one
independent copy per sample: one backward pass over the real tensors (:func:`grad_at`) gives
every sample's gradient, also w.r.t. inputs the function shares between samples.
"""

from __future__ import annotations

from typing import Any

from .. import autograd
from .._tensor import Tensor
from ..autograd.transform_leaves import mark
from ._batched import Level, check_tracked, rewrap, rewrap_within, to_levels, to_levels_within, tracked_levels
from ._pytree import TreeSpec, tree_flatten, tree_map, tree_unflatten

__all__ = [
    "Tracked",
    "check_argnums",
    "flat_outputs",
    "grad_at",
    "release",
    "split_aux",
    "track",
    "track_args",
]


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


def track(x: Tensor, levels: list[Level] | None = None, forward: bool = False) -> Tensor:
    """``x`` as a tensor the graph starts from: a view if it has a graph already, else a leaf;
    batched at each of the running vmap ``levels``. A leaf is marked as requiring grad for the
    transform only (``autograd.transform_leaves``): a ``forward`` one's (``jvp``, ``jacfwd``) or
    a reverse one's (``grad``, ``vjp``)."""
    levels = tracked_levels() if levels is None else levels
    real = to_levels(x, levels) if levels else x
    with autograd.enable_grad():
        if real.requires_grad:
            leaf = real.view_as(real)
            if forward:  # it carries this transform's tangent too (ops without a forward rule refuse it)
                mark(leaf, "jvp")
        else:
            leaf = mark(real.detach().requires_grad_(True), "jvp" if forward else "vjp")
    return rewrap(leaf, levels) if levels else leaf


def grad_at(
    levels: list[Level], outputs: list[Tensor], inputs: list[Tensor], grad_outputs: list | None, **kwargs: Any
) -> tuple:
    """``autograd.grad`` of tensors batched at the vmap ``levels`` (the inputs tracked at
    them): one pass over the real tensors, the gradients batched again. ``grad_outputs``
    None: ones (scalar outputs); they may be batched at newer levels too (inside a
    :func:`~._batched_backward.batched_pass` of those), and so are the gradients then."""
    check_tracked(outputs)
    if not levels:
        return autograd.grad(outputs, inputs, grad_outputs, **kwargs)
    outs = [to_levels(o, levels) for o in outputs]
    cts = (
        [o.new_ones(o.shape) for o in outs]
        if grad_outputs is None
        else [to_levels_within(c, levels) for c in grad_outputs]
    )
    grads = autograd.grad(outs, [to_levels(x, levels) for x in inputs], cts, **kwargs)
    return tuple(None if g is None else rewrap_within(g, levels) for g in grads)


class Tracked:
    """The arguments after tracking: ``args`` to call the function with, ``leaves`` (the tracked
    input tensors, in order), ``specs`` (the pytree of each differentiated argument), and
    ``keep`` (the results must stay differentiable for an outer graph), and the vmap
    ``levels`` they were tracked at."""

    def __init__(
        self, args: list, leaves: list[Tensor], specs: list[TreeSpec], keep: bool, levels: list[Level]
    ) -> None:
        self.levels = levels
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
    levels = tracked_levels()
    for k in nums:
        flat, spec = tree_flatten(args[k])
        for x in flat:
            _check_leaf(x, api)
            keep = keep or (x.requires_grad and autograd.is_grad_enabled())
        tracked = [track(x, levels) for x in flat]
        leaves.extend(tracked)
        specs.append(spec)
        new_args[k] = tree_unflatten(tracked, spec)
    return Tracked(new_args, leaves, specs, keep, levels)


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
