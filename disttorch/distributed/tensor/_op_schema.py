"""What a sharding rule sees of one op call, and what it answers.

A rule (``_ops/``) gets an :class:`OpCall`: the op (its ``Function`` class, named e.g.
``"LinearFunction"``), the call's arguments, the mesh, and a :class:`TensorSpec` per tensor
argument (placements, global shape, local shape). It answers an :class:`OpStrategy`: the
placements every tensor argument must have (``_dispatch`` redistributes them), the output's
placements and global shape, and optionally ``compute``, the local computation when it is
not just the op on the local pieces (embedding's masked lookup).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..device_mesh import DeviceMesh
from .placement_types import Placement, Replicate

__all__ = ["OpCall", "OpStrategy", "TensorSpec", "register", "RULES"]

Placements = tuple[Placement, ...]


@dataclass(frozen=True)
class TensorSpec:
    """One tensor argument: its layout, the shape of the whole and of this rank's piece."""

    placements: Placements
    shape: tuple[int, ...]
    local_shape: tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.shape)


@dataclass
class OpCall:
    """One call of ``op`` (a ``Function`` class) with ``args``; ``specs[i]`` describes
    tensor argument ``i``."""

    op: type
    args: tuple
    mesh: DeviceMesh
    specs: dict[int, TensorSpec]

    @property
    def name(self) -> str:
        return self.op.__name__

    def describe(self) -> str:
        """``name(placements of each tensor argument)`` for error messages."""
        layouts = ", ".join(f"arg{i}: {s.placements} of shape {list(s.shape)}" for i, s in self.specs.items())
        return f"{self.name}({layouts})"

    def replicate(self) -> Placements:
        return (Replicate(),) * self.mesh.ndim


@dataclass
class OpStrategy:
    """The layouts a call needs (``inputs``: argument index -> placements) and gives; the
    output's global ``shape`` (a list of them for an op with several outputs)."""

    inputs: dict[int, Placements]
    output: Placements
    shape: tuple[int, ...] | list[tuple[int, ...]]
    compute: Callable[..., Any] | None = field(default=None)


#: op name -> rule(OpCall) -> OpStrategy
RULES: dict[str, Callable[[OpCall], OpStrategy]] = {}


def register(*names: str) -> Callable:
    """Register the decorated rule for the ops ``names`` (their ``Function`` class names)."""

    def add(rule: Callable[[OpCall], OpStrategy]) -> Callable[[OpCall], OpStrategy]:
        for name in names:
            RULES[name] = rule
        return rule

    return add
