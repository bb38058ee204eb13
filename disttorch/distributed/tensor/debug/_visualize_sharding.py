"""``visualize_sharding``: which rank holds which block of a 1-D or 2-D DTensor, printed as
PyTorch's table (rows and columns of the global tensor, ``device:rank`` in each block)."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from .._utils import compute_local_shape_and_global_offset

__all__ = ["visualize_sharding"]

#: a block: (first and last row), (first and last column), the rank holding it
_Block = tuple[tuple[int, int], tuple[int, int], int]


def _create_table(blocks: list[_Block], device_kind: str) -> str:
    """The blocks as a ``tabulate`` table: a row per row range, a column per column range."""
    from tabulate import tabulate

    row_ranges = sorted({b[0] for b in blocks})
    col_ranges = sorted({b[1] for b in blocks})
    cells = [["" for _ in col_ranges] for _ in row_ranges]
    for rows, cols, rank in blocks:
        i, j = row_ranges.index(rows), col_ranges.index(cols)
        cells[i][j] = f"{device_kind}:{rank}" if cells[i][j] == "" else f"{cells[i][j]},{rank}"
    return tabulate(
        cells,
        headers=[f"Col {c[0]}-{c[1]}" for c in col_ranges],
        showindex=[f"Row {r[0]}-{r[1]}" for r in row_ranges],
    )


def visualize_sharding(dtensor: Any, header: str = "", use_rich: bool = False) -> None:
    """Print, on the rank at local index 0 of every mesh dimension, the table of which rank
    holds which block of ``dtensor`` (1-D or 2-D); needs the ``tabulate`` package. Nothing is
    printed for an empty DTensor or on a rank outside the mesh."""
    if dtensor.numel() == 0:
        return
    if len(dtensor.shape) >= 3:
        raise RuntimeError("visualize sharding supports only 1D or 2D DTensor")
    mesh = dtensor.device_mesh
    if mesh.get_coordinate() is None:
        return
    if not all(mesh.get_local_rank(mesh_dim=d) == 0 for d in range(mesh.ndim)):
        return
    blocks = []
    for coordinate, rank in np.ndenumerate(np.array(mesh.mesh.tolist())):
        shape, offset = compute_local_shape_and_global_offset(
            dtensor.shape, mesh, dtensor.placements, coordinate
        )
        shape, offset = (shape, offset) if len(shape) == 2 else ((shape[0], 1), (offset[0], 0))
        blocks.append(
            ((offset[0], offset[0] + shape[0] - 1), (offset[1], offset[1] + shape[1] - 1), int(rank))
        )
    if use_rich and importlib.util.find_spec("rich") and importlib.util.find_spec("matplotlib"):
        raise NotImplementedError(
            "visualize_sharding(use_rich=True) is not supported by disttorch; call it without use_rich "
            "for the tabulate table"
        )
    if not importlib.util.find_spec("tabulate"):
        raise ValueError("`visualize_sharding` requires either `rich` or `tabulate`.")
    print(_create_table(blocks, mesh.device_type))
