"""``fully_shard``, ``FSDPModule`` and the policies (mirrors ``torch.distributed.fsdp``'s
per-parameter sharding, "FSDP2").

    for block in model.blocks:
        fully_shard(block)          # each block is a unit: gathered just before it runs
    fully_shard(model)              # the root takes the remaining parameters
    opt = torch.optim.Adam(model.parameters())   # the shards: 1/N of every parameter

``fully_shard`` changes the module's class to ``FSDP<Class>`` (a subclass of
:class:`FSDPModule` and the original class), replaces its parameters by
:class:`~disttorch.distributed.tensor.DTensor` shards and registers the hooks of
``_state.py``. ``CPUOffloadPolicy`` is accepted and changes nothing: every rank is a CPU rank
and the parameters live in CPU memory already.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, NoReturn

from ....distributed import groups
from ....distributed.device_mesh import DeviceMesh, init_device_mesh
from ....distributed.tensor import DTensor
from ...modules.module import Module
from ...parameter import Parameter
from ._param import FSDPParam
from ._state import FSDPState
from ._unit import FSDPUnit

_log = logging.getLogger(__name__)
_warned_once: list = []  # PyTorch warns of reshard_after_forward=1 once per process

__all__ = [
    "fully_shard",
    "FSDPModule",
    "UnshardHandle",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "CPUOffloadPolicy",
    "register_fsdp_forward_method",
]


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """Dtypes for gathered parameters (``param_dtype``: forward and backward compute),
    gradient reduction (``reduce_dtype``) and the root's outputs (``output_dtype``);
    ``cast_forward_inputs`` casts floating inputs to ``param_dtype``. ``None`` keeps the
    parameter's own dtype. The shards and the optimiser stay in the parameter's dtype."""

    param_dtype: Any = None
    reduce_dtype: Any = None
    output_dtype: Any = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """No offloading (the default)."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Keep the shards in CPU memory: a no-op here, where every rank computes on the CPU."""

    pin_memory: bool = True


_DEFAULT_MP = MixedPrecisionPolicy()
_NO_OFFLOAD = OffloadPolicy()


class UnshardHandle:
    """What ``unshard(async_op=True)`` returns: ``wait()`` finishes the gather."""

    def __init__(self, units: list[FSDPUnit]) -> None:
        self._units = units

    def wait(self) -> None:
        for unit in self._units:
            unit.wait_for_unshard()


class FSDPModule:
    """The methods ``fully_shard`` adds to a module (its class becomes ``FSDP<Class>``)."""

    _fsdp_state: FSDPState

    def _states(self, recurse: bool = True) -> list[FSDPState]:
        modules = self.modules() if recurse else [self]
        return [m._fsdp_state for m in modules if isinstance(m, FSDPModule)]

    def unshard(self, async_op: bool = False) -> UnshardHandle | None:
        """Gather this module's parameters (the whole ones replace the shards until
        :meth:`reshard`); with ``async_op=True`` return a handle to wait on."""
        unit = self._fsdp_state.unit
        units = [unit] if unit is not None else []
        for u in units:
            u.unshard(async_op=True)
        handle = UnshardHandle(units)
        if async_op:
            return handle
        handle.wait()
        return None

    def reshard(self) -> None:
        """Free this module's whole parameters; the module holds its shards again."""
        if self._fsdp_state.unit is not None:
            self._fsdp_state.unit.reshard()

    def set_requires_gradient_sync(self, requires_gradient_sync: bool, *, recurse: bool = True) -> None:
        """Whether backward reduce-scatters the gradients. ``False`` keeps the whole
        gradients of every unit (gradient accumulation without communication, like DDP's
        ``no_sync``); the next synchronised backward reduces the accumulated sum."""
        for state in self._states(recurse):
            state.requires_gradient_sync = requires_gradient_sync

    def set_reshard_after_forward(self, reshard_after_forward: bool, recurse: bool = True) -> None:
        """Whether the units free their parameters after forward (and gather again in backward)."""
        for state in self._states(recurse):
            if not state.is_root:
                state.reshard_after_forward = reshard_after_forward

    def set_reshard_after_backward(self, reshard_after_backward: bool, *, recurse: bool = True) -> None:
        """Whether the units free their parameters after backward."""
        for state in self._states(recurse):
            state.reshard_after_backward = reshard_after_backward

    def set_modules_to_forward_prefetch(self, modules: list["FSDPModule"]) -> None:
        """Start these modules' all-gathers when this module's forward starts."""
        self._fsdp_state.forward_prefetch = [_state_of(m) for m in modules]

    def set_modules_to_backward_prefetch(self, modules: list["FSDPModule"]) -> None:
        """Start these modules' all-gathers when this module's backward starts."""
        self._fsdp_state.backward_prefetch = [_state_of(m) for m in modules]

    def set_gradient_divide_factor(self, factor: float) -> None:
        """Divide the summed gradients by ``factor`` instead of the data-parallel world size."""
        for state in self._states():
            if state.unit is not None:
                state.unit.divide_factor = float(factor)

    def set_is_last_backward(self, is_last_backward: bool) -> None:
        """Accepted for compatibility: every backward here finishes its own reductions."""

    def reset_iter_state(self) -> None:
        """Free every unit and forget the pending backward state."""
        for state in self._states():
            state._in_backward = False
            if state.unit is not None:
                state.unit.reshard()


def _state_of(module: Any) -> FSDPState:
    if not isinstance(module, FSDPModule):
        raise ValueError(f"expected a module fully_shard was applied to, got {type(module).__name__}")
    return module._fsdp_state


_classes: dict[tuple[type, bool], type] = {}


def _fsdp_class(cls: type, keep_name: bool = False) -> type:
    """``FSDP<Class>``: the module's class with :class:`FSDPModule`'s methods in front; with
    ``keep_name``, named ``Class`` (a module inside a ``FullyShardedDataParallel`` wrapper,
    which PyTorch leaves of its own class)."""
    key = (cls, keep_name)
    if key not in _classes:
        name = cls.__name__ if keep_name else f"FSDP{cls.__name__}"
        attrs: dict = {"__module__": cls.__module__, "__qualname__": cls.__qualname__ if keep_name else name}
        if not keep_name:
            attrs["__deepcopy__"] = _unimplemented_deepcopy
        _classes[key] = type(name, (FSDPModule, cls), attrs)
    return _classes[key]


def _unimplemented_deepcopy(*args: Any, **kwargs: Any) -> NoReturn:
    """A sharded module's ``copy.deepcopy``: refused, as PyTorch refuses it (its parameters
    are shards whose layout and collectives belong to the module it was applied to)."""
    raise AssertionError("FSDP does not support deepcopy. Please use state dict for serialization.")


def _keep_class_name(module: FSDPModule) -> None:
    """Give ``module`` (after ``fully_shard``) its own class name back (see :func:`_fsdp_class`)."""
    original = type(module).__bases__[1]
    module.__class__ = _fsdp_class(original, keep_name=True)


def _sharded_over(p: Parameter, mesh: Any) -> bool:
    """Whether ``p`` is already a shard over ``mesh`` (or over ``mesh`` and a
    tensor-parallel mesh after it, 2-D FSDP + TP)."""
    if not isinstance(p, DTensor):
        return False
    names = p.device_mesh.mesh_dim_names
    return p.device_mesh == mesh or bool(
        mesh.mesh_dim_names and names and names[: mesh.ndim] == mesh.mesh_dim_names
    )


def _collect_params(module: Module, ignored: set[int], mesh: Any) -> dict[int, tuple[Parameter, list]]:
    """The parameters this unit takes: in ``module`` and its submodules, not inside a module
    that is already fully sharded, not ignored, not already shards on ``mesh`` (a
    tensor-parallel DTensor on another mesh is taken); each with every slot that holds it."""
    found: dict[int, tuple[Parameter, list]] = {}
    stack = [module]
    seen: set[int] = set()
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        for name, p in m._parameters.items():
            if p is None or id(p) in ignored or _sharded_over(p, mesh):
                continue
            if p.__dict__.get("_fsdp_sharded"):
                raise ValueError(
                    f"fully_shard: parameter '{name}' of {type(m).__name__} is shared with a module "
                    "fully_shard was applied to earlier (tied weights); apply fully_shard to a module "
                    "that holds every use of it (e.g. the root) instead"
                )
            found.setdefault(id(p), (p, []))[1].append((m, name))
        stack.extend(
            c for c in reversed(list(m._modules.values())) if c is not None and not isinstance(c, FSDPModule)
        )
    return found


def _reshard_after_forward(value: bool | int | None, shard_size: int) -> bool:
    """``reshard_after_forward`` as a bool, an int checked and read as PyTorch reads it."""
    if value is None:
        return True
    if not isinstance(value, (bool, int)):
        raise ValueError(
            f"reshard_after_forward should be a bool or an int representing the group size to reshard to, not {value}"
        )
    if isinstance(value, bool):
        return value
    if value < 1 or value > shard_size or shard_size % value != 0:
        raise ValueError(
            f"If passing reshard_after_forward as an int, it should be a factor of {shard_size}, not {value}"
        )
    if value == 1 and not _warned_once:
        _warned_once.append(True)
        _log.warning(
            "reshard_after_forward=1 (int) means resharding parameters to world size 1, "
            "instead of reshard_after_forward=True (bool)"
        )
    return value == shard_size


def fully_shard(
    module: Module,
    *,
    mesh: DeviceMesh | None = None,
    reshard_after_forward: bool | int | None = None,
    shard_placement_fn: Callable | None = None,
    mp_policy: MixedPrecisionPolicy = _DEFAULT_MP,
    offload_policy: OffloadPolicy = _NO_OFFLOAD,
    ignored_params: set | None = None,
    dp_mesh_dims: Any = None,
) -> Module:
    """Shard ``module``'s parameters across the ranks of ``mesh`` and gather them around its
    forward and backward. Apply it to submodules first, then to the root.

    Args:
        module: the module whose (not yet sharded) parameters form one unit.
        mesh: a 1-D mesh (shard over it) or a 2-D ``(replicate, shard)`` mesh (hybrid:
            shard inside a row, replicate across rows). Default: 1-D over every rank.
        reshard_after_forward: free the whole parameters after forward and gather them
            again for backward (``True``, the default) or keep them until after backward
            (``False``: less communication, more memory). The root never frees after forward.
            An int, the size of a smaller group to reshard to, is checked as PyTorch checks
            it (a factor of the shard group's size; 1 is ``False``, the size ``True``); a
            size between keeps the whole parameters until backward (same results, more
            memory than PyTorch's).
        shard_placement_fn: only ``None`` or a function returning ``None``/``Shard(0)`` is supported.
        mp_policy: :class:`MixedPrecisionPolicy`.
        offload_policy: :class:`OffloadPolicy` or :class:`CPUOffloadPolicy` (a no-op on CPU).
        ignored_params: parameters left whole and unsynchronised.
        dp_mesh_dims: only ``None`` (the mesh is all data-parallel) is supported.

    Returns:
        ``module``, whose class is now ``FSDP<Class>``.
    """
    if not isinstance(module, Module):
        raise ValueError(f"fully_shard expects an nn.Module, got {type(module).__name__}")
    if isinstance(module, FSDPModule):
        raise ValueError(f"fully_shard was already applied to this {type(module).__name__}")
    if mesh is None:
        if not groups.is_initialized():
            raise RuntimeError(
                "fully_shard needs the default process group: call dist.init_process_group() first"
            )
        mesh = init_device_mesh("cpu", (groups.get_world_size(),))
    if dp_mesh_dims is not None:
        raise NotImplementedError(
            "fully_shard(dp_mesh_dims=...) is not supported: pass a 1-D or 2-D data-parallel mesh"
        )
    if mesh.ndim not in (1, 2):
        raise ValueError(f"fully_shard expects a 1-D or 2-D mesh but got {mesh.ndim}-D: {mesh}")
    reshard_after_forward = _reshard_after_forward(reshard_after_forward, mesh.size(mesh.ndim - 1))
    if shard_placement_fn is not None:
        for p in module.parameters():
            placement = shard_placement_fn(p)
            if placement is not None and getattr(placement, "dim", None) != 0:
                raise NotImplementedError(
                    f"shard_placement_fn returned {placement}: only Shard(0) is supported"
                )
    ignored = {id(p) for p in (ignored_params or ())}
    params = [FSDPParam(p, slots, mesh) for p, slots in _collect_params(module, ignored, mesh).values()]
    for fp in params:
        fp.free_unsharded()
        # load_state_dict(assign=True) may put new shards in: the unit takes them
        fp.slots[0][0].register_load_state_dict_post_hook(lambda *_, fp=fp: fp.reset_sharded_param())
    unit = None
    if params:
        unit = FSDPUnit(params, mesh, mp_policy.param_dtype, mp_policy.reduce_dtype)
    module.__dict__["_fsdp_state"] = FSDPState(module, unit, reshard_after_forward, mp_policy)
    module.__class__ = _fsdp_class(type(module))
    return module


def register_fsdp_forward_method(module: Module, method_name: str) -> None:
    """Make ``module.<method_name>()`` gather and free like ``forward`` (e.g. ``generate``)."""
    if not isinstance(module, FSDPModule):
        return
    state = module._fsdp_state
    original = getattr(module, method_name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = state._pre_forward(module, args, kwargs)
        return state._post_forward(module, args, original(*args, **kwargs))

    setattr(module, method_name, wrapped)
