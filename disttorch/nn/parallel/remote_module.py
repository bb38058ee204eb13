"""``RemoteModule``: a module that lives on another RPC worker (``torch.distributed.nn``).

``RemoteModule("ps/cpu", nn.EmbeddingBag, args=(100, 16))`` builds the module on worker
``ps`` (through ``rpc.remote``: the worker owns it, this side holds an ``RRef``).
``forward`` runs the module's ``forward`` there and returns the result; ``forward_async``
returns a ``torch.futures.Future`` of it. Inside a distributed autograd context the call
is an RPC like any other, so gradients flow back to the remote module's parameters, and
``remote_parameters()`` hands their RRefs to ``DistributedOptimizer``. A RemoteModule
travels inside RPC arguments and results as a reference to the same module; ordinary
pickling refuses it. Every other ``nn.Module`` method that would need the module's
contents here (``parameters``, ``to``, ``state_dict``, hooks, ...) raises ``ValueError``,
as in PyTorch; ``train()``/``eval()`` act on the remote module.

The implementation lives in ``nn/parallel`` (where ``nn`` and ``distributed`` meet);
``disttorch.distributed.nn`` re-exports it. Differences from PyTorch: CPU only (no device
maps, so a CUDA ``remote_device`` fails on the worker when the module is built), and no
TorchScript interface (``_module_interface_cls``) form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...distributed.remote_device import _remote_device
from ...distributed.rpc import api, serialization
from ...distributed.rpc.rref import RRef, remote
from ...futures import Future
from ..modules.module import Module

__all__ = ["RemoteModule"]


def _create_module(module_cls: Callable[..., Module], args: tuple, kwargs: dict, device: str) -> Module:
    """On the owner: build the module and move it to ``device``."""
    module = module_cls(*args, **kwargs)
    if not isinstance(module, Module):
        raise ValueError(
            "Expect `module_cls(*args, **kwargs)` returns an instance of <class nn.Module>, "
            f"but it returns an instance of {type(module)}."
        )
    module.to(device)
    return module


def _remote_forward(module_rref: RRef, *args: Any, **kwargs: Any) -> Any:
    """On the owner: the module's ``forward`` (its forward hooks do not run, as in PyTorch)."""
    return module_rref.local_value().forward(*args, **kwargs)


def _param_rrefs(module_rref: RRef, recurse: bool) -> list[RRef]:
    """On the owner: an RRef to each parameter of the module."""
    return [RRef(p) for p in module_rref.local_value().parameters(recurse)]


def _raise_not_supported(name: str) -> None:
    raise ValueError(f"Method ``{name}`` not supported for RemoteModule")


class RemoteModule(Module):
    """A module built on, and run by, another RPC worker.

    Args:
        remote_device: where to build it: ``"<workername>/<device>"`` or
            ``"rank:<rank>/<device>"`` (the device part optional, ``cpu`` by default),
            e.g. ``"trainer0/cpu"``, ``"ps"``.
        module_cls: the module's class (or any callable returning an ``nn.Module``),
            importable on that worker.
        args: positional arguments of ``module_cls``.
        kwargs: keyword arguments of ``module_cls``.

    ``forward(*args, **kwargs)`` and ``forward_async(*args, **kwargs)`` take what the
    module's ``forward`` takes. Create it after ``rpc.init_rpc``.
    """

    def __init__(
        self,
        remote_device: str,
        module_cls: Callable[..., Module],
        args: tuple | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self._prepare_init(remote_device)
        self.module_rref = remote(
            self.on, _create_module, (module_cls, args or (), kwargs or {}, self.device)
        )

    def _prepare_init(self, remote_device: str) -> None:
        if not api.is_initialized():
            raise AssertionError("RemoteModule only works in RPC.")
        where = _remote_device(remote_device)
        self.on: str | int = where.worker_name() if where.worker_name() is not None else where.rank()
        self.device = str(where.device())
        self.is_device_map_set = False  # no device maps on a CPU build
        self.is_scriptable = False

    @staticmethod
    def init_from_module_rref(
        remote_device: str, module_rref: RRef, _module_interface_cls: Any = None
    ) -> RemoteModule:
        """A RemoteModule over an existing module ``module_rref`` on ``remote_device``
        (several RemoteModules may share one module)."""
        if _module_interface_cls is not None:
            raise NotImplementedError("RemoteModule: TorchScript interfaces are not supported by disttorch")
        module = object.__new__(RemoteModule)
        Module.__init__(module)
        module._prepare_init(remote_device)
        module.module_rref = module_rref
        return module

    # ------------------------------------------------------------------ running it
    def forward_async(self, *args: Any, **kwargs: Any) -> Future:
        """A future of the remote module's ``forward(*args, **kwargs)``."""
        return api.rpc_async(self.module_rref.owner(), _remote_forward, (self.module_rref, *args), kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The remote module's ``forward(*args, **kwargs)``, run on its worker."""
        return self.forward_async(*args, **kwargs).wait()

    def remote_parameters(self, recurse: bool = True) -> list[RRef]:
        """RRefs to the remote module's parameters (for ``DistributedOptimizer``)."""
        return api.rpc_sync(self.on, _param_rrefs, args=(self.module_rref, recurse))

    def get_module_rref(self) -> RRef:
        """The ``RRef`` of the remote module."""
        return self.module_rref

    def train(self, mode: bool = True) -> Any:
        """``train(mode)`` on the remote module; returns a copy of it."""
        return self.module_rref.rpc_sync().train(mode)

    def eval(self) -> Any:
        """``eval()`` on the remote module; returns a copy of it."""
        return self.module_rref.rpc_sync().eval()

    def parameters(self, recurse: bool = True) -> Any:
        raise ValueError(
            "Method ``parameters`` not supported for RemoteModule. Please use ``remote_parameters`` instead."
        )

    # ------------------------------------------------------------------ travel
    def __reduce_ex__(self, protocol: Any) -> tuple:
        if not serialization.in_message():
            raise RuntimeError(
                "Cannot pickle RemoteModule in python pickler. RemoteModule can only be pickled when using RPC"
            )
        return (_rebuild, (self.on, self.device, self.module_rref))

    def __setstate__(self, state: Any) -> None:
        raise RuntimeError(
            "Cannot unpickle RemoteModule in python pickler. RemoteModule can only be unpickled when using RPC"
        )


def _rebuild(on: str | int, device: str, module_rref: RRef) -> RemoteModule:
    """A RemoteModule that arrived in an RPC message: the same remote module."""
    module = object.__new__(RemoteModule)
    Module.__init__(module)
    module.on, module.device, module.module_rref = on, device, module_rref
    module.is_device_map_set = module.is_scriptable = False
    return module


def _forbid(name: str) -> Callable:
    def method(self: RemoteModule, *args: Any, **kwargs: Any) -> Any:
        _raise_not_supported(name)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = "Not supported for RemoteModule (``ValueError``), as in PyTorch: the module is remote."
    return method


#: ``nn.Module`` methods that would need the module here: PyTorch's RemoteModule refuses them.
_NOT_SUPPORTED = (
    "register_buffer", "register_parameter", "add_module", "apply", "cuda", "ipu", "xpu", "cpu",
    "type", "float", "double", "half", "bfloat16", "to", "register_backward_hook",
    "register_forward_pre_hook", "register_forward_hook", "state_dict", "load_state_dict",
    "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules",
    "named_modules", "requires_grad_", "zero_grad", "share_memory", "extra_repr",
)  # fmt: skip
for _name in _NOT_SUPPORTED:
    setattr(RemoteModule, _name, _forbid(_name))
