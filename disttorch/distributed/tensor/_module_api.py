"""``distribute_module``: lay a module's parameters and buffers out on a mesh and convert
its inputs and outputs with hooks (the building block of tensor parallelism's styles).

``distributed`` does not import ``nn``: the module is used through its methods
(``named_modules``, ``register_parameter``, hooks), and a distributed parameter is made
with the class of the parameter it replaces (``nn.Parameter(dtensor)`` is a DTensor that
counts as a parameter).
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable

from .. import groups
from ..device_mesh import DeviceMesh, init_device_mesh
from ._api import DTensor, distribute_tensor
from .placement_types import Replicate

__all__ = ["distribute_module"]


def _replicate_rest(module: Any, mesh: DeviceMesh) -> None:
    """Make every parameter and buffer of ``module`` itself that is not a DTensor yet a
    replicated DTensor (from mesh index 0 along every dimension)."""
    full = [Replicate()] * mesh.ndim
    for name, param in list(module._parameters.items()):
        if param is not None and not isinstance(param, DTensor):
            whole = distribute_tensor(param.detach(), mesh, full)
            module.register_parameter(name, type(param)(whole, param.requires_grad))
    for name, buf in list(module._buffers.items()):
        if buf is not None and not isinstance(buf, DTensor):
            module._buffers[name] = distribute_tensor(buf, mesh, full)


def _hook_arity(fn: Callable, what: str) -> int:
    count = len(inspect.signature(fn).parameters)
    if count not in (2, 3):
        raise ValueError(f"{what} should take in 3 arguments, but got {count} arguments!")
    if count == 2:
        warnings.warn(
            f"Deprecating {what} that takes two arguments (inputs, device_mesh), please use {what} that "
            "takes in (module, inputs, device_mesh) instead!",
            FutureWarning,
            stacklevel=3,
        )
    return count


def distribute_module(
    module: Any,
    device_mesh: DeviceMesh | None = None,
    partition_fn: Callable[[str, Any, DeviceMesh], None] | None = None,
    input_fn: Callable[..., Any] | None = None,
    output_fn: Callable[..., Any] | None = None,
) -> Any:
    """Distribute ``module``'s parameters and buffers over ``device_mesh`` and hook its inputs
    and outputs, as PyTorch's ``distribute_module``.

    Args:
        module: the module to distribute (changed in place and returned).
        device_mesh: the mesh (default: a 1-D mesh over every rank).
        partition_fn: ``partition_fn(name, submodule, mesh)`` for every submodule, which
            replaces parameters by DTensor ones; whatever it leaves is replicated.
        input_fn: ``input_fn(module, inputs, mesh)``, run before ``forward``; its result
            replaces the inputs.
        output_fn: ``output_fn(module, outputs, mesh)``, run after ``forward``; its result
            replaces the outputs.
    """
    if getattr(module, "_distribute_module_applied", False):
        raise RuntimeError(
            "distribute_module should only be called once on a module, but it has already been called on this module!"
        )
    if device_mesh is None:
        device_mesh = init_device_mesh("cpu", (groups.get_world_size(),))
    for name, submodule in module.named_modules():
        if partition_fn is not None:
            partition_fn(name, submodule, device_mesh)
        _replicate_rest(submodule, device_mesh)
    if input_fn is not None:
        if _hook_arity(input_fn, "input_fn") == 3:
            module.register_forward_pre_hook(lambda mod, inputs: input_fn(mod, inputs, device_mesh))
        else:
            module.register_forward_pre_hook(lambda mod, inputs: input_fn(inputs, device_mesh))
    if output_fn is not None:
        if _hook_arity(output_fn, "output_fn") == 3:
            module.register_forward_hook(lambda mod, inputs, outputs: output_fn(mod, outputs, device_mesh))
        else:
            module.register_forward_hook(lambda mod, inputs, outputs: output_fn(outputs, device_mesh))
    module._distribute_module_applied = True
    return module
