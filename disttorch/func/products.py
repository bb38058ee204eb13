"""``vjp``, ``jvp`` and ``linearize`` of ``torch.func``.

``jvp`` and ``linearize`` use the double-backward trick (``autograd.forward_ad.Linearization``):
the vector-Jacobian product is recorded once as a function of a free cotangent, and
differentiating it in the direction of the tangents gives the Jacobian-vector product,
with PyTorch's values.

Inside ``vmap`` the primals are tracked batched at every running level (see ``_inputs``), so
one pass gives every sample's product; but at a level where only the tangents are batched
(``jacfwd``'s columns of the identity) the function runs unbatched and the product's backward
pass takes the batched tangents (``_batched_backward.batched_pass``), as PyTorch's forward
mode batches only the tangents. A ``vjp_fn`` (a ``linearize``'s ``jvp_fn``) called under a
vmap with cotangents (tangents) batched at a level it was not made under runs one batched
backward pass of the recorded graph, as PyTorch's: the function ran once.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

from .. import autograd
from .._tensor import Tensor
from ..autograd.forward_ad import Linearization
from ._batched import (
    Level,
    UntrackedBatch,
    check_tracked,
    level_of,
    rewrap_within,
    to_levels,
    to_levels_within,
    tracked_levels,
    untracked,
)
from ._batched_backward import batched_pass
from ._inputs import flat_outputs, grad_at, release, split_aux, track
from ._pytree import tree_flatten, tree_unflatten

__all__ = ["jvp", "linearize", "vjp"]


def _track_primals(
    primals: tuple, api: str, levels: list[Level], forward: bool = True
) -> tuple[list, Any, list[Tensor], bool]:
    flat, spec = tree_flatten(primals)
    for x in flat:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{api}: Expected primals to only contain Tensors, got {type(x)}")
        if not x.is_floating_point():
            raise RuntimeError(f"{api}: only floating point primals can be differentiated, got {x.dtype}")
    keep = autograd.is_grad_enabled() and any(x.requires_grad for x in flat)
    leaves = [track(x, levels, forward) for x in flat]
    return tree_unflatten(leaves, spec), spec, leaves, keep


def _zeros_where_none(values: list, like: list) -> list:
    return [v if v is not None else o.new_zeros(o.shape).detach() for v, o in zip(values, like)]


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)`` (and ``aux`` with ``has_aux``): ``vjp_fn(cotangents)``, with
    ``cotangents`` structured like the output, returns the vector-Jacobian products w.r.t. every
    primal, as a tuple structured like ``primals``. ``vjp_fn`` may be called repeatedly."""
    levels = tracked_levels()
    args, p_spec, leaves, keep = _track_primals(primals, "vjp", levels, forward=False)
    with autograd.enable_grad():
        out, aux = split_aux(func(*args), has_aux, "vjp(f, *primals)")
    outs, out_spec = flat_outputs(out, "vjp(f, *primals)")

    def vjp_fn(cotangents: Any, *, retain_graph: bool = True, create_graph: bool | None = None) -> tuple:
        cts, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of outputs to "
                f"the function. cotangents: {ct_spec}, primal output: {out_spec}"
            )
        for c, o in zip(cts, outs):
            if not isinstance(c, Tensor) or c.shape != o.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output has a shape of {getattr(c, 'shape', type(c).__name__)} "
                    f"and output has a shape of {o.shape}."
                )
        cg = create_graph if create_graph is not None else keep or any(c.requires_grad for c in cts)
        pairs = [(o, c) for o, c in zip(outs, cts) if o.requires_grad]
        grads: list = [None] * len(leaves)
        if pairs:
            with autograd.set_grad_enabled(cg), _batched_passes(cts, levels):
                grads = list(
                    grad_at(
                        levels,
                        [o for o, _ in pairs],
                        leaves,
                        [c for _, c in pairs],
                        retain_graph=retain_graph,
                        create_graph=cg,
                        allow_unused=True,
                    )
                )
        return tree_unflatten(_zeros_where_none(grads, leaves), p_spec)

    result = (release(out, keep), vjp_fn)
    return (*result, release(aux, keep)) if has_aux else result


def _other_levels(tensors: list, levels: list[Level]) -> list[Level]:
    """The vmap levels not among ``levels`` that any of ``tensors`` is batched at, outermost
    first (a ``vjp_fn`` called under a vmap over cotangents, tangents batched where the
    primals are not: one batched backward pass for each)."""
    found = {}
    for t in tensors:
        while level_of(t) is not None:
            if level_of(t) not in levels:
                found[level_of(t).number] = level_of(t)
            t = t._bt_value
    return [found[k] for k in sorted(found)]


def _batched_passes(tensors: list, levels: list[Level]) -> ExitStack:
    """The backward passes inside take ``tensors`` batched at levels other than ``levels``."""
    passes = ExitStack()
    for level in _other_levels(tensors, levels):
        passes.enter_context(batched_pass(level))
    return passes


def _linearized_jvp(lin: Linearization, levels: list[Level], tangents: list, create_graph: bool) -> list:
    """``lin.jvp`` of tangents batched at the vmap ``levels`` (on their real tensors) and at
    others (one batched backward pass over them)."""
    with _batched_passes(tangents, levels):
        jv = lin.jvp([to_levels_within(t, levels) for t in tangents], create_graph=create_graph)
    return [None if j is None else rewrap_within(j, levels) for j in jv]


def _linearization(outs: list, leaves: list, levels: list[Level]) -> Linearization:
    if not levels:
        return Linearization(outs, leaves, forward_ad=True)
    return Linearization(
        [to_levels(o, levels) for o in outs], [to_levels(x, levels) for x in leaves], forward_ad=True
    )


def _tracking_levels(primals: list, tangents: list) -> list[Level]:
    """The running vmap levels to track the primals at: all but those where only tangents are
    batched (their batch goes through the Jacobian-vector product's backward pass, batched:
    the function runs once, not once per tangent)."""
    levels = tracked_levels()
    tangent_only = set(_other_levels(tangents, _other_levels(primals, [])))
    return [lv for lv in levels if lv not in tangent_only]


def _check_tangents(primals: Any, tangents: Any, api: str) -> list[Tensor]:
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents if isinstance(tangents, tuple) else None)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. For example, if "
            "primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
            f"{p_spec} and tangents with structure {t_spec}"
        )
    for p, t in zip(flat_p, flat_t):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{api}: Expected tangents to only contain Tensors, got {type(t)}")
        if t.shape != p.shape:
            raise RuntimeError(
                f"{api}: Expected primals and tangents to have the same shape, got {tuple(p.shape)} and "
                f"{tuple(t.shape)}"
            )
    return flat_t


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False) -> tuple:
    """``(func(*primals), jvp_out)`` (and ``aux`` with ``has_aux``): ``jvp_out`` is the product of
    the Jacobian of ``func`` at ``primals`` with ``tangents`` (same structure as ``primals``),
    structured like the output. ``strict=True`` is not implemented in PyTorch either."""
    api = "jvp(f, primals, tangents)"
    if strict:
        raise RuntimeError("jvp(f, primals, tangents, strict=True): strict=True is not implemented yet.")
    flat_t = _check_tangents(primals, tangents, api)
    levels = _tracking_levels(tree_flatten(primals)[0], flat_t)
    try:
        with untracked([lv for lv in tracked_levels() if lv not in levels]):
            result = _jvp_at(func, primals, flat_t, has_aux, levels)
    except UntrackedBatch:  # (raised by a transform inside the function, see below)
        result = None
    if result is None:  # the function closes over a tensor batched where only tangents are
        result = _jvp_at(func, primals, flat_t, has_aux, tracked_levels())
    if result is None:  # batched at an enclosing jvp's untracked level: that jvp runs again
        raise UntrackedBatch("a value is batched at a level the inputs were not tracked at")
    return result


def _jvp_at(func: Callable, primals: Any, flat_t: list, has_aux: bool, levels: list[Level]) -> tuple | None:
    """:func:`jvp` with the primals tracked at the vmap ``levels``; None when an output is
    batched at another level (it must be tracked there too)."""
    api = "jvp(f, primals, tangents)"
    args, _, leaves, keep = _track_primals(primals, api, levels)
    keep = keep or any(t.requires_grad for t in flat_t)
    with autograd.enable_grad():
        out, aux = split_aux(func(*args), has_aux, api)
    outs, out_spec = flat_outputs(out, api)
    if _other_levels(outs, levels):
        return None
    lin = _linearization(outs, leaves, levels)
    jv = _linearized_jvp(lin, levels, [t.to(x.dtype) for t, x in zip(flat_t, leaves)], keep)
    result = (release(out, keep), release(tree_unflatten(_zeros_where_none(jv, outs), out_spec), keep))
    return (*result, release(aux, keep)) if has_aux else result


def linearize(func: Callable, *primals: Any) -> tuple[Any, Callable]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` returns ``jvp(func, primals,
    tangents)[1]`` without calling ``func`` again (the linearised graph is kept)."""
    api = "linearize"
    levels = tracked_levels()
    args, p_spec, leaves, keep = _track_primals(primals, api, levels)
    with autograd.enable_grad():
        out = func(*args)
    outs, out_spec = flat_outputs(out, api)
    check_tracked(outs)
    lin = _linearization(outs, leaves, levels)

    def jvp_fn(*tangents: Any) -> Any:
        flat_t = _check_tangents(primals, tangents, "linearize(f, *primals)(*tangents)")
        jv = _linearized_jvp(lin, levels, [t.to(x.dtype) for t, x in zip(flat_t, leaves)], keep)
        return release(tree_unflatten(_zeros_where_none(jv, outs), out_spec), keep)

    return release(out, keep), jvp_fn
