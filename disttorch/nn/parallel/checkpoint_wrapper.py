"""Activation-checkpoint wrappers (``torch.distributed.algorithms._checkpoint.checkpoint_wrapper``),
which FSDP training scripts apply to their transformer blocks.

``checkpoint_wrapper(module)`` returns a module that runs ``module`` under
``torch.utils.checkpoint.checkpoint``: its activations are recomputed in backward instead of
kept. ``offload_wrapper(module)`` keeps them, in CPU memory (``save_on_cpu``; here all memory is
CPU memory). ``apply_activation_checkpointing(model, check_fn=...)`` wraps, in place, every
submodule the check (or an FSDP auto-wrap policy) picks, never the model itself.

The wrapped module is the wrapper's child ``_checkpoint_wrapped_module``. Attributes and items
are read through to it, and the wrapper's ``state_dict`` leaves that name out, so a checkpoint
saved from a wrapped model loads into a plain one and back (the name is put back on loading).
"""

from __future__ import annotations

import functools
from enum import Enum, auto
from typing import Any, Callable, Iterator

from ...autograd.graph import save_on_cpu
from ...utils.checkpoint import checkpoint
from ..modules.module import Module
from ..parameter import Parameter
from .fsdp.wrap import lambda_auto_wrap_policy, units_of

__all__ = [
    "ActivationWrapper",
    "CheckpointImpl",
    "CheckpointWrapper",
    "OffloadWrapper",
    "apply_activation_checkpointing",
    "checkpoint_wrapper",
    "offload_wrapper",
]

_WRAPPED = "_checkpoint_wrapped_module"
_PREFIX = _WRAPPED + "."


class CheckpointImpl(Enum):
    """The two variants of ``torch.utils.checkpoint`` (its ``use_reentrant``)."""

    REENTRANT = auto()
    NO_REENTRANT = auto()


class ActivationWrapper(Module):
    """A module holding another as ``_checkpoint_wrapped_module``, seen through: attribute
    reads and indexing reach it, and state_dict keys leave its name out."""

    def __init__(self, mod: Module) -> None:
        super().__init__()
        self._checkpoint_wrapped_module = mod
        self._register_state_dict_hook(_drop_prefix)
        self._register_load_state_dict_pre_hook(_add_prefix)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError("Subclasses should implement forward().")

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._checkpoint_wrapped_module, name)

    def __getitem__(self, key: Any) -> Any:
        return self._checkpoint_wrapped_module.__getitem__(key)

    def named_parameters(self, *args: Any, **kwargs: Any) -> Iterator[tuple[str, Parameter]]:
        """The wrapped module's parameters, named without ``_checkpoint_wrapped_module.``."""
        for name, param in super().named_parameters(*args, **kwargs):
            yield name.replace(_PREFIX, ""), param


def _drop_prefix(module: Module, state_dict: dict, prefix: str, *args: Any) -> dict:
    """State-dict hook: ``<prefix>_checkpoint_wrapped_module.<key>`` is saved as ``<prefix><key>``."""
    _rename(state_dict, prefix + _PREFIX, prefix)
    return state_dict


def _add_prefix(state_dict: dict, prefix: str, *args: Any) -> None:
    """Load pre-hook: ``<prefix><key>`` is loaded as ``<prefix>_checkpoint_wrapped_module.<key>``."""
    _rename(state_dict, prefix, prefix + _PREFIX)


def _rename(state_dict: dict, old: str, new: str) -> None:
    """Rename, in place and in order, the keys of ``state_dict`` that start with ``old``."""
    for key in [k for k in state_dict if k.startswith(old)]:
        state_dict[new + key[len(old) :]] = state_dict.pop(key)


class OffloadWrapper(ActivationWrapper):
    """Runs the wrapped module with its saved activations kept in CPU memory."""

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        with save_on_cpu(pin_memory=True):
            return self._checkpoint_wrapped_module(*args, **kwargs)


class CheckpointWrapper(ActivationWrapper):
    """Runs the wrapped module under ``checkpoint_fn`` (default: ``torch.utils.checkpoint``
    with ``use_reentrant`` as ``checkpoint_impl`` says), passing it ``checkpoint_fn_kwargs``."""

    def __init__(
        self,
        mod: Module,
        checkpoint_impl: CheckpointImpl = CheckpointImpl.NO_REENTRANT,
        checkpoint_fn: Callable | None = None,
        **checkpoint_fn_kwargs: Any,
    ) -> None:
        super().__init__(mod)
        self.checkpoint_impl = checkpoint_impl
        if checkpoint_fn is None:
            reentrant = checkpoint_impl == CheckpointImpl.REENTRANT
            checkpoint_fn = functools.partial(checkpoint, use_reentrant=reentrant)
        self.checkpoint_fn = functools.partial(checkpoint_fn, **checkpoint_fn_kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        module = self._checkpoint_wrapped_module
        if self.checkpoint_impl == CheckpointImpl.REENTRANT and kwargs:
            # the reentrant variant takes positional arguments only: the keyword values
            # travel after them and are named again inside
            names, count = list(kwargs), len(args)

            def positional(*inputs: Any) -> Any:
                return module(*inputs[:count], **dict(zip(names, inputs[count:])))

            return self.checkpoint_fn(positional, *args, *kwargs.values())
        return self.checkpoint_fn(module, *args, **kwargs)


def offload_wrapper(module: Module) -> Module:
    """``module`` with its saved activations offloaded to CPU memory (an ``OffloadWrapper``)."""
    return OffloadWrapper(module)


def checkpoint_wrapper(
    module: Module,
    checkpoint_impl: CheckpointImpl = CheckpointImpl.NO_REENTRANT,
    checkpoint_fn: Callable | None = None,
    **checkpoint_fn_kwargs: Any,
) -> Module:
    """``module`` with activation checkpointing (a ``CheckpointWrapper``): its activations
    are recomputed during backward instead of kept from forward."""
    return CheckpointWrapper(module, checkpoint_impl, checkpoint_fn, **checkpoint_fn_kwargs)


def apply_activation_checkpointing(
    model: Module,
    checkpoint_wrapper_fn: Callable[[Module], Module] = checkpoint_wrapper,
    check_fn: Callable[[Module], bool] = lambda _: True,
    auto_wrap_policy: Callable | None = None,
) -> None:
    """Replace, in place, each submodule of ``model`` that ``check_fn`` accepts (or that
    ``auto_wrap_policy``, an FSDP auto-wrap policy, makes a unit) by
    ``checkpoint_wrapper_fn(submodule)``; inner ones first, ``model`` itself never."""
    policy = auto_wrap_policy or functools.partial(lambda_auto_wrap_policy, lambda_fn=check_fn)
    if not callable(policy):
        raise ValueError(f"Expected {policy} to be callable or be a pre-defined wrap policy")
    owners = {
        id(child): (parent, name) for parent in model.modules() for name, child in parent.named_children()
    }
    for module, _ in units_of(model, policy, ignored=set()):
        parent, name = owners[id(module)]
        setattr(parent, name, checkpoint_wrapper_fn(module))
