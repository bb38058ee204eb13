"""``nn.utils.parametrize``: express a parameter or buffer as a function of others.

``register_parametrization(module, "weight", P())`` moves ``module.weight`` to
``module.parametrizations.weight.original`` (or ``original0``, ``original1``, ... when
``P.right_inverse`` returns several tensors) and turns ``weight`` into a property
computing ``P(original)`` on every access, as PyTorch does: the module's class is
replaced by a generated subclass ``Parametrized<Class>`` that carries the property, so
state-dict keys, optimisers and ``remove_parametrizations`` behave as in PyTorch.
Assigning to ``module.weight`` calls the parametrizations' ``right_inverse`` (in reverse
order) and writes the result into the originals. Inside ``with cached():`` each
parametrized tensor is computed once.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from ..._tensor import Tensor
from ...autograd import grad_mode
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "transfer_parametrizations_and_params",
    "type_before_parametrizations",
]

_cache_enabled = 0
_cache: dict = {}


@contextmanager
def cached() -> Iterator[None]:
    """Within this context each parametrized tensor is computed once and reused (e.g. a
    weight used at every step of a recurrent loop); the cache is cleared on exit."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _write_into(dst: Tensor, src: Tensor) -> None:
    """Replace the values (and, when it differs, the shape) of ``dst`` in place."""
    with grad_mode.no_grad():
        arr = np.asarray(src._data, dtype=dst._data.dtype)
        if dst._data.shape == arr.shape:
            np.copyto(dst._data, arr)
        else:
            dst._data = arr.copy()
        dst._bump_version()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the original tensor(s)
    they are applied to (``original`` or ``original0``, ``original1``, ...)."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = tuple(original._data.shape), original._data.dtype
        with grad_mode.no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original._data.dtype != new._data.dtype:
                raise ValueError(
                    f"When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}"
                )
            _write_into(original, new)  # same object: an optimiser holding it keeps working
            if isinstance(original, Parameter):
                self.register_parameter("original", original)
            else:
                self.register_buffer("original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(
                        f"'right_inverse' must return a Tensor or a Sequence of tensors "  # noqa: TRY004
                        f"(list, tuple...). Got element {i} of the sequence with type "
                        f"{type(part).__name__}."
                    )
                if isinstance(original, Parameter):
                    self.register_parameter(
                        f"original{i}", Parameter(part.detach().clone(), original.requires_grad)
                    )
                else:
                    self.register_buffer(f"original{i}", part.detach().clone())
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z._data.dtype != dtype:
                raise ValueError(
                    f"Registering a parametrization may not change the dtype of the tensor, "
                    f"unless `unsafe` flag is enabled.\nunparametrized dtype: {dtype}\n"
                    f"parametrized dtype: {z.dtype}"
                )
            if tuple(z._data.shape) != shape:
                raise ValueError(
                    f"Registering a parametrization may not change the shape of the tensor, "
                    f"unless `unsafe` flag is enabled.\nunparametrized shape: {list(shape)}\n"
                    f"parametrized shape: {list(z.shape)}"
                )

    def right_inverse(self, value: Tensor) -> None:
        """Set the originals so that the parametrized tensor is ``value``, calling each
        parametrization's ``right_inverse`` from the last to the first."""
        with grad_mode.no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                _write_into(self.original, value)
            else:
                if len(value) != self.ntensors:
                    raise ValueError(
                        f"'right_inverse' must return a sequence of tensors of length "
                        f"{self.ntensors}. Got a sequence of length {len(value)}."
                    )
                for i, part in enumerate(value):
                    _write_into(getattr(self, f"original{i}"), part)

    def forward(self) -> Tensor:
        modules = list(self)
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            x = modules[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in modules[1:]:
            x = module(x)
        return x


def _inject_new_class(module: Module) -> None:
    cls = module.__class__
    module.__class__ = type(
        f"Parametrized{cls.__name__}",
        (cls,),
        {
            "__module__": cls.__module__,
            "__getstate__": _refuse_pickle,
            "__deepcopy__": _deepcopy,
        },
    )


def _deepcopy(self: Module, memo: dict) -> Module:
    """``copy.deepcopy`` of a parametrized module: the same generated class, copied state."""
    replica = memo.get(id(self))
    if replica is not None:
        return replica
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    return replica


def _refuse_pickle(self: Module) -> None:
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). "
        "See: https://pytorch.org/tutorials/beginner/saving_loading_models.html"
    )


def _inject_property(module: Module, tensor_name: str) -> None:
    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            if key not in _cache:
                _cache[key] = parametrization()
            return _cache[key]
        return parametrization()

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Parametrize ``module.<tensor_name>`` (a parameter or buffer) by the Module
    ``parametrization``: reading it returns ``parametrization(original)``. Registering
    again on the same tensor chains the parametrizations. ``unsafe=True`` allows a
    parametrization that changes the shape or dtype."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if tuple(x.shape) != tuple(y.shape) or x.dtype != y.dtype:
                raise ValueError(
                    f"Registering a parametrization may not change the shape or dtype of the "
                    f"tensor, unless the `unsafe` flag is enabled. Got {list(x.shape)} "
                    f"{x.dtype} from {list(y.shape)} {y.dtype}."
                )
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
            f"with name '{tensor_name}'"
        )
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Remove the parametrizations of ``module.<tensor_name>``: it becomes a parameter (or
    buffer) again, holding the current parametrized value (``leave_parametrized=True``)
    or the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with grad_mode.no_grad():
                value = getattr(module, tensor_name)
            _write_into(original, value)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        # Computed under the caller's grad mode, as PyTorch's: a value that requires grad
        # (some original did) comes back as a parameter, any other as a buffer.
        value = getattr(module, tensor_name)
        original = Parameter(value.detach()) if value.requires_grad else value
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before parametrizations replaced it."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Copy the parametrizations of ``from_module`` (all, or those of ``tensor_name``)
    and their originals onto ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        plist = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach().clone()))
        for p in plist:
            register_parametrization(to_module, name, p)
        target = to_module.parametrizations[name]
        if plist.is_tensor:
            _write_into(target.original, plist.original)
        else:
            for i in range(plist.ntensors):
                _write_into(getattr(target, f"original{i}"), getattr(plist, f"original{i}"))
    return to_module
