"""Gradients that are still partial sums over some mesh dimensions.

A replicated input of an op whose ranks compute different pieces (a norm's weight on
sequence shards, the all-gathered input of a column-wise linear) gets on every rank the
gradient of that rank's piece only: a summand of the whole gradient. PyTorch keeps it as
``Partial`` and reduces it where it is used, so that summands from several uses are added
first and reduced once, in the way the layout asks. Here the sharding propagation hands
such a gradient on as a :class:`PartialGrad` to the nodes that know what to do with it:

- a :class:`Redistribute` node reduces it on its way back (``Partial -> Shard(d)``: one
  reduce-scatter; ``Partial -> Replicate``: one all-reduce), or, if it moved nothing along
  the partial dimensions, passes it on to a node that can take it;
- a ``DTensor`` leaf (a parameter) keeps it: its ``.grad`` is laid out ``Partial`` there,
  as PyTorch's is, and reduced when read in another layout (the optimiser's step, FSDP).

Summands of one gradient add up as summands (the engine adds the gradients of several
uses), and a whole gradient added to them is cut into ``1/n`` per rank, as PyTorch adds
``Replicate`` to ``Partial``; any other op on a :class:`PartialGrad` reduces it first.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...autograd.function import dispatch_disabled, register_function_dispatch
from .. import collectives
from ..comm_record import counted_as
from ..device_mesh import DeviceMesh
from ._partial_inplace import PartialInplaceRules
from .placement_types import Partial, Placement, Replicate

__all__ = ["PartialGrad", "with_partial"]


class PartialGrad(PartialInplaceRules, Tensor):
    """A gradient whose memory is this rank's summand over mesh dimensions ``partial_dims``
    (what a tensor hook on a sequence-parallel weight receives: linear in-place ops such as
    ``mul_`` act on it, others raise, as on PyTorch's ``Partial`` DTensor)."""

    _partial_mesh: DeviceMesh
    _partial_dims: tuple[int, ...]

    @classmethod
    def of(cls, g: Tensor, mesh: DeviceMesh, dims: tuple[int, ...]) -> "PartialGrad":
        """``g`` (same memory, same node) read as a summand over ``dims`` of ``mesh``."""
        out = object.__new__(cls)
        Tensor._init_state(out, g._data, g.grad_fn, g._output_nr)
        out._rg = g._rg
        out._partial_mesh, out._partial_dims = mesh, tuple(dims)
        return out

    def placements_over(self, base: tuple[Placement, ...]) -> tuple[Placement, ...]:
        """``base`` with ``Partial()`` along the partial mesh dimensions."""
        return tuple(Partial() if m in self._partial_dims else p for m, p in enumerate(base))

    def _partial_placements(self) -> tuple[Placement, ...]:
        return self.placements_over((Replicate(),) * self._partial_mesh.ndim)

    def reduced(self) -> Tensor:
        """The whole gradient on every rank (an all-reduce per partial mesh dimension)."""
        total = np.array(self._data, copy=True)
        for m in self._partial_dims:
            with counted_as("c10d_functional.all_reduce"):
                collectives.all_reduce(total, group=self._partial_mesh.get_group(m))
        return Tensor._make(total)


def with_partial(base: tuple[Placement, ...], g: Tensor) -> tuple[Placement, ...]:
    """The layout of gradient ``g`` of a tensor laid out as ``base`` (partial placements
    marked where ``g`` is a summand)."""
    return g.placements_over(base) if isinstance(g, PartialGrad) else base


def _summands(args: tuple) -> tuple | None:
    """The two addends of a gradient sum as summands of one ``PartialGrad``'s layout: a
    whole gradient next to summands is cut into ``1/n`` per rank (PyTorch's ``Replicate +
    Partial``); None if they are not such a pair."""
    if len(args) != 2 or not all(isinstance(a, Tensor) for a in args):
        return None
    partial = [a for a in args if isinstance(a, PartialGrad)]
    first = partial[0]
    if any(a._partial_mesh != first._partial_mesh or a._partial_dims != first._partial_dims for a in partial):
        return None
    if len(partial) == 2:
        return args
    if first._data.dtype.kind not in "fc" or args[0]._data.shape != args[1]._data.shape:
        return None
    n = math.prod(first._partial_mesh.size(m) for m in first._partial_dims)
    return tuple(a if a is first else Tensor._make(a._data / np.asarray(n, a._data.dtype)) for a in args)


def _on_partial(cls: type, args: tuple) -> Any:
    """Summands of one gradient add up as summands (a whole one is cut into summands
    first); any other op reduces them first."""
    addends = _summands(args) if cls.__name__ == "Add" else None
    if addends is not None:
        first = next(a for a in args if isinstance(a, PartialGrad))
        with dispatch_disabled():
            out = cls.apply(*addends)
        return PartialGrad.of(out, first._partial_mesh, first._partial_dims)
    return cls.apply(*(a.reduced() if isinstance(a, PartialGrad) else a for a in args))


register_function_dispatch(PartialGrad, _on_partial)
