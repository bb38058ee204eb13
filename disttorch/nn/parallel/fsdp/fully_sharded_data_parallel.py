"""``FullyShardedDataParallel``: the wrapper form of FSDP (what Lightning and accelerate
construct), as a thin layer over ``fully_shard``.

The wrapper picks the units with ``auto_wrap_policy`` and applies ``fully_shard`` to them and
then to the wrapped module, on a mesh that follows ``sharding_strategy``:

==================  ==========================================  =====================
strategy            mesh                                        reshard after forward
==================  ==========================================  =====================
FULL_SHARD          1-D over the group                          yes
SHARD_GRAD_OP       1-D over the group                          no
NO_SHARD            2-D ``(world, 1)``: replicate everywhere     no
HYBRID_SHARD        2-D ``(hosts, ranks per host)``             yes
_HYBRID_SHARD_ZERO2 2-D ``(hosts, ranks per host)``             no
==================  ==========================================  =====================

As in PyTorch, each unit below the root then sits in a ``FullyShardedDataParallel`` of its
own (``_wrap_units``), so module and parameter names carry every ``_fsdp_wrapped_module.``
prefix; the wrapped modules keep their class names (``FSDPModule`` is mixed in under the
same name). The difference from PyTorch's wrapper: the original parameters are always
exposed, as dim-0 ``DTensor`` shards (PyTorch's ``use_orig_params=False`` shows one flat
shard per unit, its ``True`` 1-D slices of it). ``state_dict()`` follows ``state_dict_type``
(full, gathered, or sharded ``ShardedTensor``s).
"""

from __future__ import annotations

import os
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from ...._dtype import to_numpy
from ...._tensor import Tensor
from ....distributed import collectives, groups
from ....distributed._shard.sharded_tensor import ShardedTensor
from ....distributed.checkpoint.state_dict import (
    StateDictOptions,
    clean_key,
    get_model_state_dict,
    loadable_optimizer_state_dict,
    set_model_state_dict,
)
from ....distributed.device_mesh import DeviceMesh, init_device_mesh
from ....distributed.reduce_ops import ReduceOp
from ....distributed.tensor import DTensor
from ....distributed.utils import _broadcast_coalesced
from ...modules.module import Module
from . import _optim_state_dict as _optim
from ._api import FSDPModule, MixedPrecisionPolicy, _keep_class_name, fully_shard
from ._flat_state_dict import flat_local_state_dict, unflatten_local_state_dict
from .api import (
    FullStateDictConfig,
    OptimStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictConfig,
    StateDictSettings,
    StateDictType,
)
from .wrap import units_of

__all__ = ["FullyShardedDataParallel"]

_DEPRECATED = (  # PyTorch's words, its missing space too
    "``FullyShardedDataParallel.{0}``is being deprecated and is replaced by "
    "``FullyShardedDataParallel.optim_state_dict``. ``FullyShardedDataParallel.{0}`` may be "
    "removed after PyTorch 2.2."
)

_PREFIX = "_fsdp_wrapped_module."

_KEEP_GATHERED = (
    ShardingStrategy.SHARD_GRAD_OP,
    ShardingStrategy.NO_SHARD,
    ShardingStrategy._HYBRID_SHARD_ZERO2,
)


def _mesh_for(strategy: ShardingStrategy, process_group: Any, device_mesh: DeviceMesh | None) -> DeviceMesh:
    hybrid = strategy in (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2)
    if device_mesh is not None:
        if hybrid != (device_mesh.ndim == 2):
            raise ValueError(f"{strategy} needs a {'2' if hybrid else '1'}-D device_mesh, got {device_mesh}")
        return device_mesh
    if isinstance(process_group, tuple):
        raise NotImplementedError(
            "FullyShardedDataParallel: a (shard, replicate) tuple of process groups is not supported; "
            "pass device_mesh=init_device_mesh('cpu', (hosts, per_host))"
        )
    if process_group is not None:
        if hybrid or strategy is ShardingStrategy.NO_SHARD:
            raise NotImplementedError(f"{strategy} with a process_group: pass device_mesh instead")
        return DeviceMesh.from_group(process_group, "cpu")
    world = groups.get_world_size()
    if strategy is ShardingStrategy.NO_SHARD:
        return init_device_mesh("cpu", (world, 1), mesh_dim_names=("replicate", "shard"))
    if hybrid:
        per_host = int(os.environ.get("LOCAL_WORLD_SIZE", world))
        if world % per_host:
            raise ValueError(
                f"HYBRID_SHARD: world size {world} is not a multiple of LOCAL_WORLD_SIZE {per_host}"
            )
        return init_device_mesh("cpu", (world // per_host, per_host), mesh_dim_names=("replicate", "shard"))
    return init_device_mesh("cpu", (world,))


class FullyShardedDataParallel(Module):
    """Shard ``module``'s parameters, gradients and optimiser state across ranks.

    Args:
        module: the model.
        process_group: the group to shard over (default: every rank).
        sharding_strategy: a :class:`ShardingStrategy` (default ``FULL_SHARD``).
        cpu_offload: accepted; parameters are in CPU memory already.
        auto_wrap_policy: which submodules become units (``wrap.py``); default: only the root.
        backward_prefetch: accepted; the next unit is always prefetched when a unit's backward starts.
        mixed_precision: a :class:`MixedPrecision`.
        ignored_modules, ignored_states: modules or parameters left whole and unsynchronised.
        sync_module_states: copy rank 0's parameters and buffers to every rank first.
        forward_prefetch, limit_all_gathers, device_id: accepted for compatibility.
        use_orig_params: the original parameters are always exposed (as shards); it changes
            only the ``LOCAL_STATE_DICT`` layout, as in PyTorch.
        device_mesh: a 1-D mesh, or a 2-D ``(replicate, shard)`` mesh for hybrid sharding.
        param_init_fn: not supported (there is no meta device); must be ``None``.
    """

    def __init__(
        self,
        module: Module,
        process_group: Any = None,
        sharding_strategy: ShardingStrategy | None = None,
        cpu_offload: Any = None,
        auto_wrap_policy: Callable | None = None,
        backward_prefetch: Any = None,
        mixed_precision: Any = None,
        ignored_modules: Any = None,
        param_init_fn: Callable | None = None,
        device_id: Any = None,
        sync_module_states: bool = False,
        forward_prefetch: bool = False,
        limit_all_gathers: bool = True,
        use_orig_params: bool = False,
        ignored_states: Any = None,
        device_mesh: DeviceMesh | None = None,
    ) -> None:
        super().__init__()
        if param_init_fn is not None:
            raise NotImplementedError(
                "FullyShardedDataParallel(param_init_fn=...) is not supported: disttorch has no meta "
                "device; build the module with real parameters"
            )
        if not groups.is_initialized():
            raise RuntimeError(
                "FullyShardedDataParallel needs the default process group: call init_process_group()"
            )
        strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        mesh = _mesh_for(strategy, process_group, device_mesh)
        ignored_ids, ignored_params = self._ignored(ignored_modules, ignored_states)
        if sync_module_states:
            tensors = [
                t for t in list(module.parameters()) + list(module.buffers()) if id(t) not in ignored_params
            ]
            _broadcast_coalesced(tensors, 0, process_group)
        policy = _policy(mixed_precision)
        if mixed_precision is not None and mixed_precision.buffer_dtype is not None:
            for b in module.buffers():
                if b.is_floating_point():
                    b._data = b._data.astype(to_numpy(mixed_precision.buffer_dtype))
        kwargs = {
            "mesh": mesh,
            "reshard_after_forward": strategy not in _KEEP_GATHERED,
            "mp_policy": policy,
            "ignored_params": {p for p in module.parameters() if id(p) in ignored_params},
        }
        units = (
            [sub for sub, _ in units_of(module, auto_wrap_policy, ignored_ids)] if auto_wrap_policy else []
        )
        for sub in units:
            fully_shard(sub, **kwargs)
        fully_shard(module, **kwargs)
        self._unit_ids = frozenset(map(id, units))
        self._setup(module, strategy, use_orig_params)
        self._wrap_units(module)

    def _setup(self, module: Module, strategy: ShardingStrategy, use_orig_params: bool) -> None:
        """The state every wrapper, the root's and each unit's, holds around ``module``."""
        _keep_class_name(module)
        self.sharding_strategy = strategy
        self._use_orig_params = use_orig_params
        self._fsdp_wrapped_module = module
        self._summoning = False
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        self._state_dict_config: StateDictConfig = FullStateDictConfig()
        self._optim_state_dict_config = OptimStateDictConfig()

    def _wrap_units(self, module: Module) -> None:
        """Put each unit below the root into a ``FullyShardedDataParallel`` of its own, in
        every slot that holds it, as PyTorch's auto-wrapping nests wrappers: parameter and
        module names then read ``blocks.0._fsdp_wrapped_module.lin.weight``."""
        slots = [
            (parent, name, child)
            for parent in module.modules()
            for name, child in parent._modules.items()
            if child is not None and id(child) in self._unit_ids
        ]
        wrappers: dict[int, FullyShardedDataParallel] = {}
        for parent, name, child in slots:
            if id(child) not in wrappers:
                unit = FullyShardedDataParallel.__new__(FullyShardedDataParallel)
                Module.__init__(unit)
                unit._unit_ids = frozenset()
                unit._setup(child, self.sharding_strategy, self._use_orig_params)
                wrappers[id(child)] = unit
            parent._modules[name] = wrappers[id(child)]

    @staticmethod
    def _ignored(ignored_modules: Any, ignored_states: Any) -> tuple[set[int], set[int]]:
        modules = list(ignored_modules or [])
        params = []
        for item in ignored_states or []:
            (modules if isinstance(item, Module) else params).append(item)
        module_ids = {id(m) for top in modules for m in top.modules()}
        param_ids = {id(p) for p in params} | {id(p) for top in modules for p in top.parameters()}
        return module_ids, param_ids

    @property
    def module(self) -> Module:
        """The wrapped module."""
        return self._fsdp_wrapped_module

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._fsdp_wrapped_module(*args, **kwargs)

    def named_parameters(self, *args: Any, **kwargs: Any) -> Iterator[tuple[str, Any]]:
        """``Module.named_parameters``; inside :meth:`summon_full_params` the names lose the
        wrappers' ``_fsdp_wrapped_module.`` prefixes, as PyTorch's."""
        for name, p in super().named_parameters(*args, **kwargs):
            yield (name.replace(_PREFIX, "") if self._summoning else name), p

    def named_buffers(self, *args: Any, **kwargs: Any) -> Iterator[tuple[str, Any]]:
        """``Module.named_buffers``, named as :meth:`named_parameters` names."""
        for name, b in super().named_buffers(*args, **kwargs):
            yield (name.replace(_PREFIX, "") if self._summoning else name), b

    # ------------------------------------------------------------------ gradient sync
    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Accumulate gradients locally (whole, unreduced) inside the block; the first
        backward after it reduces the sum."""
        self.module.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            self.module.set_requires_gradient_sync(True)

    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0) -> Tensor:
        """Clip the gradients by their total norm over all shards (a collective); returns the norm."""
        return clip_sharded_grad_norm_(self.parameters(), max_norm, norm_type)

    # ------------------------------------------------------------------ whole parameters
    @staticmethod
    @contextmanager
    def summon_full_params(
        module: Module,
        recurse: bool = True,
        writeback: bool = True,
        rank0_only: bool = False,
        offload_to_cpu: bool = False,
        with_grads: bool = False,
    ) -> Iterator[None]:
        """Inside the block the modules hold their whole parameters; with ``writeback`` the
        changes made to them are kept (each rank takes back its own rows)."""
        units = [m._fsdp_state.unit for m in module.modules() if isinstance(m, FSDPModule)]
        units = [u for u in units if u is not None]
        if not recurse:
            units = units[-1:]
        for u in units:
            u.unshard()
        wrappers = FullyShardedDataParallel.fsdp_modules(module)
        for w in wrappers:
            w._summoning = True
        try:
            yield
        finally:
            for w in wrappers:
                w._summoning = False
            for u in units:
                if writeback:
                    for p in u.params:
                        p.write_back_unsharded()
                u.reshard()

    @staticmethod
    def fsdp_modules(module: Module, root_only: bool = False) -> list:
        """The wrappers in ``module`` (the top one if ``root_only``)."""
        found = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        return found[:1] if root_only else found

    # ------------------------------------------------------------------ state dicts
    @staticmethod
    @contextmanager
    def state_dict_type(
        module: Module,
        state_dict_type: StateDictType,
        state_dict_config: StateDictConfig | None = None,
        optim_state_dict_config: OptimStateDictConfig | None = None,
    ) -> Iterator[None]:
        """Within the block, ``state_dict()``/``load_state_dict()`` of the wrappers in
        ``module`` use ``state_dict_type``."""
        wrappers = FullyShardedDataParallel.fsdp_modules(module)
        before = [(w._state_dict_type, w._state_dict_config, w._optim_state_dict_config) for w in wrappers]
        FullyShardedDataParallel.set_state_dict_type(
            module, state_dict_type, state_dict_config, optim_state_dict_config
        )
        try:
            yield
        finally:
            for w, (kind, config, optim_config) in zip(wrappers, before):
                w._state_dict_type, w._state_dict_config, w._optim_state_dict_config = (
                    kind,
                    config,
                    optim_config,
                )

    @staticmethod
    def set_state_dict_type(
        module: Module,
        state_dict_type: StateDictType,
        state_dict_config: StateDictConfig | None = None,
        optim_state_dict_config: OptimStateDictConfig | None = None,
    ) -> StateDictSettings:
        """Set the state-dict type of every wrapper in ``module``; returns the previous settings."""
        wrappers = FullyShardedDataParallel.fsdp_modules(module)
        previous = None
        for w in wrappers:
            previous = previous or w._settings()
            w._state_dict_type = state_dict_type
            if state_dict_config is None:
                full = state_dict_type is StateDictType.FULL_STATE_DICT
                state_dict_config = FullStateDictConfig() if full else ShardedStateDictConfig()
            w._state_dict_config = state_dict_config
            w._optim_state_dict_config = optim_state_dict_config or OptimStateDictConfig()
        return previous

    @staticmethod
    def get_state_dict_type(module: Module) -> StateDictSettings:
        """The state-dict settings of the wrappers in ``module``."""
        wrappers = FullyShardedDataParallel.fsdp_modules(module)
        if not wrappers:
            raise ValueError("get_state_dict_type: the module holds no FullyShardedDataParallel")
        return wrappers[0]._settings()

    @staticmethod
    def optim_state_dict(
        model: Module, optim: Any, optim_state_dict: dict | None = None, group: Any = None
    ) -> dict:
        """The optimiser's state dict by parameter name, full (gathered) or sharded as the
        wrapper's ``state_dict_type`` says (``rank0_only`` leaves the other ranks an empty dict),
        in PyTorch's order (see ``_optim_state_dict.py``)."""
        wrappers = FullyShardedDataParallel.fsdp_modules(model)
        options = wrappers[0]._options() if wrappers else StateDictOptions()
        return _optim.optim_state_dict(model, optim, options, _uses_orig_params(model))

    @staticmethod
    def full_optim_state_dict(
        model: Module, optim: Any, optim_input: Any = None, rank0_only: bool = True, group: Any = None
    ) -> dict:
        """The optimiser's whole state by parameter name (every rank calls it); with
        ``rank0_only`` the other ranks get an empty dict. Deprecated in PyTorch, as here, for
        :meth:`optim_state_dict` under ``FULL_STATE_DICT``."""
        warnings.warn(_DEPRECATED.format("full_optim_state_dict"), FutureWarning, stacklevel=2)
        options = StateDictOptions(full_state_dict=True, cpu_offload=rank0_only)
        return _optim.optim_state_dict(model, optim, options, _uses_orig_params(model))

    @staticmethod
    def sharded_optim_state_dict(model: Module, optim: Any, group: Any = None) -> dict:
        """The optimiser's state by parameter name, each state this rank's shard (a
        ``DTensor``). Deprecated in PyTorch, as here, for :meth:`optim_state_dict`."""
        warnings.warn(_DEPRECATED.format("sharded_optim_state_dict"), FutureWarning, stacklevel=2)
        return _optim.optim_state_dict(model, optim, StateDictOptions(), _uses_orig_params(model))

    @staticmethod
    def shard_full_optim_state_dict(
        full_optim_state_dict: dict, model: Module, optim_input: Any = None, optim: Any = None
    ) -> dict:
        """:meth:`full_optim_state_dict`'s result cut to this rank's shards, for
        ``optim.load_state_dict`` (``optim`` is required)."""
        warnings.warn(_DEPRECATED.format("shard_full_optim_state_dict"), FutureWarning, stacklevel=2)
        if optim is None:
            raise ValueError(
                "shard_full_optim_state_dict: pass optim= (the optimiser the state is loaded into)"
            )
        return loadable_optimizer_state_dict(model, optim, full_optim_state_dict)

    @staticmethod
    def scatter_full_optim_state_dict(
        full_optim_state_dict: dict | None,
        model: Module,
        optim_input: Any = None,
        optim: Any = None,
        group: Any = None,
    ) -> dict:
        """Rank 0's :meth:`full_optim_state_dict` (``None`` elsewhere) sent to every rank and
        cut to its shards, for ``optim.load_state_dict`` (``optim`` is required)."""
        warnings.warn(_DEPRECATED.format("scatter_full_optim_state_dict"), FutureWarning, stacklevel=2)
        return _optim.scatter_full_optim_state_dict(full_optim_state_dict, model, optim, group)

    @staticmethod
    def optim_state_dict_to_load(model: Module, optim: Any, optim_state_dict: dict, **kwargs: Any) -> dict:
        """Turn :meth:`optim_state_dict`'s result (full or sharded) into what
        ``optim.load_state_dict`` takes on this rank."""
        return loadable_optimizer_state_dict(model, optim, optim_state_dict)

    def _settings(self) -> StateDictSettings:
        return StateDictSettings(
            self._state_dict_type, self._state_dict_config, self._optim_state_dict_config
        )

    def _options(self) -> StateDictOptions:
        full = self._state_dict_type is StateDictType.FULL_STATE_DICT
        rank0_only = full and getattr(self._state_dict_config, "rank0_only", False)
        return StateDictOptions(full_state_dict=full, cpu_offload=rank0_only)

    def state_dict(self, *args: Any, **kwargs: Any) -> dict:
        """Full (gathered; every rank calls it) or sharded, as ``state_dict_type`` says; the
        keys are the wrapped module's. Sharded and local values are ``ShardedTensor``s (as
        PyTorch's FSDP1 gives) sharing the parameters' memory."""
        if args or kwargs:
            return super().state_dict(*args, **kwargs)
        out = get_model_state_dict(self.module, options=self._options())
        if self._state_dict_type is StateDictType.FULL_STATE_DICT:
            return out
        if self._state_dict_type is StateDictType.LOCAL_STATE_DICT:
            return flat_local_state_dict(out, self._unit_prefixes(), self._use_orig_params)
        return {k: ShardedTensor._from_dtensor(v) if isinstance(v, DTensor) else v for k, v in out.items()}

    def _unit_prefixes(self) -> list[str]:
        """The key prefix of every unit (``""``: the root), outermost first."""
        return [
            clean_key(f"{name}.") if name else ""
            for name, m in self.module.named_modules()
            if m is self.module or id(m) in self._unit_ids
        ]

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> Any:
        """Load a full or sharded state dict (``ShardedTensor``s or ``DTensor``s) with the
        wrapped module's keys (or this wrapper's own, ``_fsdp_wrapped_module.`` prefixes and all)."""
        plain = {clean_key(k): v for k, v in state_dict.items()}
        if self._state_dict_type is StateDictType.LOCAL_STATE_DICT:
            sharded = get_model_state_dict(self.module, options=StateDictOptions())
            plain = unflatten_local_state_dict(plain, sharded, self._unit_prefixes())
        plain = {k: v._to_dtensor() if isinstance(v, ShardedTensor) else v for k, v in plain.items()}
        return set_model_state_dict(self.module, plain, options=StateDictOptions(strict=strict))


def _uses_orig_params(model: Module) -> bool:
    wrappers = FullyShardedDataParallel.fsdp_modules(model)
    return wrappers[0]._use_orig_params if wrappers else True


def _policy(mixed_precision: Any) -> MixedPrecisionPolicy:
    if mixed_precision is None:
        return MixedPrecisionPolicy()
    return MixedPrecisionPolicy(
        param_dtype=mixed_precision.param_dtype,
        reduce_dtype=mixed_precision.reduce_dtype,
        cast_forward_inputs=mixed_precision.cast_root_forward_inputs or mixed_precision.cast_forward_inputs,
    )


def clip_sharded_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0) -> Tensor:
    """Scale the gradients of sharded parameters so that their total ``norm_type``-norm over
    every rank's shard is at most ``max_norm``; returns the total norm."""
    params = [p for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    local = [np.abs(p.grad._data.astype(np.float64)) for p in params]
    meshes = [p.device_mesh for p in params if isinstance(p, DTensor)]
    group = meshes[0].get_group(meshes[0].ndim - 1) if meshes else None  # replicas hold equal shards
    if norm_type == float("inf"):
        part = np.array([max((g.max() for g in local if g.size), default=0.0)])
        collectives.all_reduce(part, op=ReduceOp.MAX, group=group)
        total = float(part[0])
    else:
        part = np.array([sum(float((g**norm_type).sum()) for g in local)])
        collectives.all_reduce(part, group=group)
        total = float(part[0]) ** (1.0 / norm_type)
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for p in params:
            p.grad._data *= coef
    dtype = np.result_type(*(p.grad._data.dtype for p in params)) if params else np.float32
    return Tensor._make(np.array(total, dtype))  # the gradients' dtype, as PyTorch's
