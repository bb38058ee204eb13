"""Views: ``view``/``reshape`` (and ``squeeze``/``unsqueeze``), ``transpose``/``permute``,
``split``/``narrow``, ``view_as_complex``/``view_as_real``.

A view of a DTensor is asked for in global sizes (``_view_methods.py``). The rule pairs the
whole's dimensions with the new ones in groups of equal size product (``(b, s, h*d) ->
(b, s, h, d)``: ``[b]->[b]``, ``[s]->[s]``, ``[h*d]->[h, d]``). A shard of a dimension that
leads its group moves to the group's first new dimension, and the piece's new shape is the
new global shape cut by the output's layout: the op runs on the piece with that. A shard
that does not lead its group, or an uneven one that is merged or split (the merged size,
or the first new size, not divisible by the mesh), is not a view of the pieces:
``NotImplementedError`` (redistribute first). ``split``/``narrow`` along a sharded
dimension gather it first, as PyTorch does.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ...._tensor import Tensor
from .._op_schema import OpCall, OpStrategy, register
from .._utils import compute_local_shape_and_global_offset
from ..placement_types import Placement, Replicate, Shard

__all__ = ["view", "permute", "split", "view_as_complex_or_real"]


def _groups(old: Sequence[int], new: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Pair dimensions of ``old`` and ``new`` into groups of equal size product."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(old) or j < len(new):
        if i < len(old) and j < len(new) and old[i] == new[j]:
            groups.append(([i], [j]))
            i, j = i + 1, j + 1
        elif i < len(old) and (old[i] == 1 or j == len(new)):
            groups.append(([i], []))
            i += 1
        elif j < len(new) and (new[j] == 1 or i == len(old)):
            groups.append(([], [j]))
            j += 1
        else:
            ins, outs, a, b = [i], [j], old[i], new[j]
            i, j = i + 1, j + 1
            while a != b:
                if a < b:
                    ins.append(i)
                    a *= old[i]
                    i += 1
                else:
                    outs.append(j)
                    b *= new[j]
                    j += 1
            groups.append((ins, outs))
    return groups


@register("View", "UnsafeView", "Unsqueeze", "Squeeze")
def view(call: OpCall) -> OpStrategy:
    a, target = call.specs[0], tuple(call.args[1])
    output: list[Placement] = []
    groups = _groups(a.shape, target)
    for p in a.placements:
        if not p.is_shard():
            output.append(p)
            continue
        ins, outs = next(g for g in groups if p.dim in g[0])
        cuts = math.prod(call.mesh.size(k) for k, q in enumerate(a.placements) if q.is_shard(p.dim))
        uneven = (len(ins) > 1 and a.shape[p.dim] % cuts) or (len(outs) > 1 and target[outs[0]] % cuts)
        if not outs or ins[0] != p.dim or uneven:
            raise NotImplementedError(
                f"{call.name}: the view of shape {list(a.shape)} as {list(target)} does not keep {p} "
                f"(placements {a.placements}) a view of the pieces; redistribute first"
            )
        output.append(Shard(outs[0]))
    local, _ = compute_local_shape_and_global_offset(target, call.mesh, output)

    def compute(x: Tensor, _global: tuple, *rest: Any) -> Tensor:
        return call.op.apply(x, local, *rest)  # (Unsqueeze's dim: the same locally)

    return OpStrategy({}, tuple(output), target, compute)


@register("Permute", "Transpose")
def permute(call: OpCall) -> OpStrategy:
    a, dims = call.specs[0], [d % call.specs[0].ndim for d in call.args[1]]
    output = tuple(Shard(dims.index(p.dim)) if p.is_shard() else p for p in a.placements)
    return OpStrategy({}, output, tuple(a.shape[d] for d in dims))


@register("Split", "Narrow")
def split(call: OpCall) -> OpStrategy:
    """``Split(x, sizes, dim)`` and ``Narrow(x, dim, start, length)``: pieces along ``dim``."""
    a = call.specs[0]
    if call.name == "Split":
        dim, sizes = call.args[2], list(call.args[1])
    else:
        dim, sizes = call.args[1], [call.args[3]]
    layout = tuple(Replicate() if p.is_shard(dim) else p for p in a.placements)
    shapes = [a.shape[:dim] + (s,) + a.shape[dim + 1 :] for s in sizes]
    return OpStrategy({0: layout}, layout, shapes if call.name == "Split" else shapes[0])


@register("ViewAsComplex", "ViewAsReal")
def view_as_complex_or_real(call: OpCall) -> OpStrategy:
    """The last dimension (the (real, imaginary) pair) goes or comes; it cannot be sharded."""
    a = call.specs[0]
    if any(p.is_shard(a.ndim - 1) for p in a.placements) and call.name == "ViewAsComplex":
        raise NotImplementedError(
            f"{call.describe()}: the last dimension holds (real, imaginary) pairs and cannot be sharded"
        )
    shape = a.shape[:-1] if call.name == "ViewAsComplex" else a.shape + (2,)
    return OpStrategy({}, a.placements, shape)
