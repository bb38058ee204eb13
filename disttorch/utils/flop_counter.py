"""``torch.utils.flop_counter``: ``FlopCounterMode`` counts the floating-point operations of
the matrix products and convolutions run inside it.

As PyTorch counts them: a product of ``(m, k)`` by ``(k, n)`` is ``2·m·k·n`` (batched
products times the batch; a bias add is not counted), a convolution (not transposed) ``2 · batch ·
prod(weight shape) · prod(output spatial shape)``, a recurrent layer the products its PyTorch
CPU kernel runs (``nn.functional._recurrent.layer_products``: none for the fused float32
LSTM), and the counts are kept per operator (``torch.ops.aten.mm``, ``.bmm``, ``.addmm``,
``.convolution``). disttorch sees its ops
through the autograd ``Function`` seam rather than a dispatcher, so the counts are those of
forward passes (a ``backward()`` inside the mode is not counted). Each count goes to
``"Global"`` and to every module whose forward is running (``utils.module_tracker``'s dotted
names: ``"Net"``, ``"Net.encoder"``, ...), as PyTorch attributes them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from ..autograd import function as _function
from ..nn.functional._recurrent import RecurrentLayerFunction, layer_products
from ..nn.functional.conv import ConvNd
from ..nn.functional.linear import LinearFunction
from ..ops import aten
from ..ops.linalg import Matmul
from .module_tracker import ModuleTracker

__all__ = ["FlopCounterMode"]


def _matmul_flops(args: tuple, out: Any) -> list[tuple[Any, int]]:
    a, b = args[0].shape, args[1].shape
    k = a[-1]
    batch_out = math.prod(out.shape) if out.dim() else 1
    flops = 2 * batch_out * k
    if len(b) >= 3:  # both batched; a batch of matrices times one matrix is one mm
        return [(aten.bmm, flops)]
    return [(aten.mm, flops)]


def _linear_flops(args: tuple, out: Any) -> list[tuple[Any, int]]:
    flops = 2 * math.prod(out.shape) * args[1].shape[-1]
    return [(aten.addmm if args[2] is not None else aten.mm, flops)]


def _conv_flops(args: tuple, out: Any) -> list[tuple[Any, int]]:
    weight, geo = args[1], args[3]
    batch = 1 if geo.unbatched else out.shape[0]
    return [(aten.convolution, 2 * batch * math.prod(weight.shape) * math.prod(geo.out))]


def _recurrent_flops(args: tuple, out: Any) -> list[tuple[Any, int]]:
    return layer_products(args)


#: each counted Function's ``formula(args, output) -> [(aten op, flops), ...]``
_FORMULAS = {
    Matmul: _matmul_flops,
    LinearFunction: _linear_flops,
    ConvNd: _conv_flops,
    RecurrentLayerFunction: _recurrent_flops,
}


class FlopCounterMode:
    """``with FlopCounterMode(display=False) as counter: model(x)``, then
    ``counter.get_total_flops()`` and ``counter.get_flop_counts()``
    (``{"Global": {torch.ops.aten.mm: n, ...}}``)."""

    def __init__(
        self, mods: Any = None, depth: int = 2, display: bool = True, custom_mapping: dict | None = None
    ) -> None:
        self.depth, self.display = depth, display
        self.flop_counts: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
        self.mod_tracker = ModuleTracker()

    def _observe(self, cls: type, args: tuple, out: Any) -> None:
        formula = _FORMULAS.get(cls)
        if formula is not None:
            for op, flops in formula(args, out):
                for name in self.mod_tracker.parents:
                    self.flop_counts[name][op] += int(flops)

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        return {name: dict(ops) for name, ops in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        rows = [f"{'Module':<20}{'FLOP':>14}", f"{'Global':<20}{self.get_total_flops():>14,}"]
        rows += [f"  - {op!s:<16}{n:>14,}" for op, n in self.flop_counts["Global"].items()]
        return "\n".join(rows)

    def __enter__(self) -> FlopCounterMode:
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        _function._observers.append(self._observe)
        return self

    def __exit__(self, *exc: object) -> None:
        _function._observers.remove(self._observe)
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
