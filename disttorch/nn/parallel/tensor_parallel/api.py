"""``parallelize_module``: apply a tensor-parallel plan to a module (mirrors
``torch.distributed.tensor.parallel.api``).

A plan is a style (applied to the module itself) or a dict from module paths to styles.
A path is split at its dots; each part is matched against the names of the children with
``fnmatch`` wildcards (``"layers.*.attention"``), and the rest of the path against each
matching child's children. A path that matches nothing is skipped with a warning.
"""

from __future__ import annotations

import warnings
from fnmatch import fnmatch
from typing import Any

from ....distributed.device_mesh import DeviceMesh
from .style import ParallelStyle

__all__ = ["parallelize_module"]


def parallelize_module(
    module: Any,
    device_mesh: DeviceMesh | None = None,
    parallelize_plan: ParallelStyle | dict[str, ParallelStyle] | None = None,
    *,
    src_data_rank: int | None = 0,
) -> Any:
    """Parallelise ``module`` (in place; returned) over ``device_mesh`` by ``parallelize_plan``.

    Args:
        module: the module to parallelise.
        device_mesh: the 1-D tensor-parallel mesh (e.g. ``mesh["tp"]``).
        parallelize_plan: a :class:`ParallelStyle`, or a dict of module path (wildcards
            allowed per part) to style.
        src_data_rank: the mesh index whose parameters are distributed (``None``: every
            rank's own, which must then agree).
    """
    if device_mesh is None:
        raise RuntimeError("parallelize_module needs a device_mesh (e.g. init_device_mesh('cpu', (world,)))")
    if parallelize_plan is None:
        warnings.warn(
            "No parallelize_plan is provided and auto-parallel is not supported at the moment, so this "
            "parallelize_module call will do nothing.",
            stacklevel=2,
        )
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        parallelize_plan.src_data_rank = src_data_rank
        return parallelize_plan._apply(module, device_mesh)
    if not isinstance(parallelize_plan, dict):
        raise TypeError(
            f"Expect Union[ParallelStyle, Dict[str, ParallelStyle]] for parallelize_plan, {type(parallelize_plan)} found!"
        )
    for path, style in parallelize_plan.items():
        if path == "":
            parallelize_module(module, device_mesh, style, src_data_rank=src_data_rank)
            continue
        first, _, rest = path.partition(".")
        children = [child for name, child in module.named_children() if fnmatch(name, first)]
        if not children:
            warnings.warn(
                f"Parallelize plan key '{path}' could not be resolved: no submodule matching token '{first}' in "
                f"module {module}, skipping this plan entry.",
                stacklevel=2,
            )
            continue
        for child in children:
            plan = {rest: style} if rest else style
            parallelize_module(child, device_mesh, plan, src_data_rank=src_data_rank)
    return module
