"""``LazyModuleMixin``: modules whose input size is read from the first input.

A lazy module is built with :class:`~disttorch.nn.UninitializedParameter` (and
``UninitializedBuffer``) placeholders. A forward pre-hook runs once: it calls
``initialize_parameters(*input)``, which materialises the placeholders in place (the same
objects, so an optimiser built before the first forward trains them), resets them with
the regular module's initialisation, removes itself and turns the module into its
``cls_to_become`` (``LazyLinear`` becomes ``Linear``). Loading a state dict into a lazy
module materialises the placeholders with the loaded shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..parameter import UninitializedBuffer, UninitializedParameter, UninitializedTensorMixin

__all__ = ["LazyModuleMixin"]


def _infer_parameters(module: LazyModuleMixin, args: tuple) -> None:
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._forward_pre_hooks.pop(module._initialize_hook_id, None)
    del module._initialize_hook_id
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyModuleMixin:
    """Mixin of the lazy modules: subclasses implement ``initialize_parameters(*input)``
    and name the regular class as ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # the hook's id, not its handle: a handle holds weak references, and lazy modules pickle
        self._initialize_hook_id = self.register_forward_pre_hook(_infer_parameters).id

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module is still a placeholder."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(isinstance(t, UninitializedTensorMixin) for t in tensors)

    def initialize_parameters(self, *args: Any) -> None:
        """Materialise the placeholders from the first input (per module)."""
        raise NotImplementedError

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and not getattr(self, "_lazy_building", True):
            super().reset_parameters()

    def _materialize_all(self, shapes: Mapping[str, tuple]) -> None:
        """Materialise each named placeholder with its shape, then initialise as the regular
        module (nothing to do when a loaded state dict materialised them already)."""
        if not self.has_uninitialized_params():
            self._lazy_building = False
            return
        for name, shape in shapes.items():
            t = getattr(self, name, None)
            if isinstance(t, UninitializedTensorMixin):
                t.materialize(shape)
        self._lazy_building = False
        self.reset_parameters()

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        for name, t in list(self._parameters.items()) + list(self._buffers.items()):
            if isinstance(t, UninitializedTensorMixin) and prefix + name in destination:
                destination[prefix + name] = t  # a placeholder stays one, as in PyTorch

    def _load_from_state_dict(self, state_dict: Mapping, prefix: str, *args: Any, **kwargs: Any) -> None:
        for name, t in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            incoming = state_dict.get(key)
            if (
                isinstance(t, UninitializedTensorMixin)
                and incoming is not None
                and not isinstance(incoming, UninitializedTensorMixin)
            ):
                t.materialize(tuple(incoming._data.shape))
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def _lazy_params(self, *names: str) -> None:
        for name in names:
            if self._parameters.get(name) is not None:
                self.register_parameter(name, UninitializedParameter(dtype=self._parameters[name].dtype))

    def _lazy_buffers(self, *names: str) -> None:
        for name in names:
            if self._buffers.get(name) is not None:
                self.register_buffer(name, UninitializedBuffer(dtype=self._buffers[name].dtype))
