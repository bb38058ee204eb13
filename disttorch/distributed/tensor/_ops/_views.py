"""Views: ``view``/``reshape`` (and ``squeeze``/``unsqueeze``), ``transpose``/``permute``.

disttorch's DTensor keeps its local piece as its memory, so the shape a view is given is
the piece's (``dt.shape`` is local). The rule pairs the piece's dimensions with the new
ones in groups of equal size product (``(b, s, h*d) -> (b, s, h, d)``: ``[b]->[b]``,
``[s]->[s]``, ``[h*d]->[h, d]``). A shard of a dimension that leads its group moves to the
group's first new dimension, and the whole's size there follows from the whole's sizes;
a shard that does not lead its group, or an uneven shard that is split or merged, is not
a view of the pieces: ``NotImplementedError``.
"""

from __future__ import annotations

import math
from typing import Sequence

from .._op_schema import OpCall, OpStrategy, register
from ..placement_types import Placement, Shard

__all__ = ["view", "permute"]


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
    shape = list(target)
    output: list[Placement] = []
    groups = _groups(a.local_shape, target)
    for p in a.placements:
        if not p.is_shard():
            output.append(p)
            continue
        ins, outs = next(g for g in groups if p.dim in g[0])
        cuts = math.prod(call.mesh.size(k) for k, q in enumerate(a.placements) if q.is_shard(p.dim))
        reshaped = len(ins) > 1 or len(outs) > 1
        if not outs or ins[0] != p.dim or (reshaped and a.shape[p.dim] % cuts):
            raise NotImplementedError(
                f"{call.name}: the view of local shape {list(a.local_shape)} as {list(target)} does not keep "
                f"{p} of a tensor of shape {list(a.shape)} a view of the pieces; redistribute first"
            )
        whole = math.prod(a.shape[d] for d in ins)
        shape[outs[0]] = whole // math.prod(target[d] for d in outs[1:])
        output.append(Shard(outs[0]))
    return OpStrategy({}, tuple(output), tuple(shape))


@register("Permute", "Transpose")
def permute(call: OpCall) -> OpStrategy:
    a, dims = call.specs[0], [d % call.specs[0].ndim for d in call.args[1]]
    output = tuple(Shard(dims.index(p.dim)) if p.is_shard() else p for p in a.placements)
    return OpStrategy({}, output, tuple(a.shape[d] for d in dims))
