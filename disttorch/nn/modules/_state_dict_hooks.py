"""Hooks around ``Module.state_dict`` and ``Module.load_state_dict``, as PyTorch's: before and
after a module's entries are saved, and before and after they are loaded (libraries rename
or convert checkpoint keys with them: opacus' ``DPLSTM``, transformers, peft).

The hook dicts live in the module's ``__dict__`` and are made by the first registration, so
modules without such hooks carry nothing and pay nothing."""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any, Callable

from ...utils.hooks import RemovableHandle

__all__ = ["StateDictHooks"]

_SAVE_PRE, _SAVE_POST = "_state_dict_pre_hooks", "_state_dict_hooks"
_LOAD_PRE, _LOAD_POST = "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"


class StateDictHooks:
    """The state-dict hook registrations of :class:`~disttorch.nn.Module`, and the calls
    that run them."""

    def _add_hook(self, kind: str, hook: Callable) -> RemovableHandle:
        hooks = self.__dict__.get(kind)
        if hooks is None:
            hooks = self.__dict__[kind] = OrderedDict()
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        return self._add_hook(_SAVE_PRE, hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` once this module and its
        children are in ``state_dict``; it may change ``state_dict`` in place and must
        return None."""
        hook = functools.partial(hook)  # marked as the public form (its result must be None)
        hook._public = True
        return self._add_hook(_SAVE_POST, hook)

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """As :meth:`register_state_dict_post_hook`, but a returned dict replaces the
        ``state_dict`` (PyTorch's older, private form)."""
        return self._add_hook(_SAVE_POST, hook)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module's entries are loaded; it may
        change ``state_dict`` (a copy of the caller's) in place."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(
        self, hook: Callable, with_module: bool = False
    ) -> RemovableHandle:
        """As :meth:`register_load_state_dict_pre_hook`; without ``with_module`` the hook
        is called without the module as its first argument."""
        return self._add_hook(_LOAD_PRE, functools.partial(hook, self) if with_module else hook)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after this module and its children are
        loaded; it may change ``incompatible_keys.missing_keys`` / ``unexpected_keys`` in
        place (what ``strict`` then reports) and must return None."""
        return self._add_hook(_LOAD_POST, hook)

    # ------------------------------------------------------------------ running them
    def _state_dict_pre_hooks_run(self, prefix: str, keep_vars: bool) -> None:
        for hook in tuple(self.__dict__.get(_SAVE_PRE, {}).values()):
            hook(self, prefix, keep_vars)

    def _state_dict_post_hooks_run(self, destination: Any, prefix: str) -> Any:
        """Run the post hooks; returns the (possibly replaced) ``state_dict``."""
        for hook in tuple(self.__dict__.get(_SAVE_POST, {}).values()):
            result = hook(self, destination, prefix, {})
            if getattr(hook, "_public", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    def _load_pre_hooks_run(self, state_dict: Any, prefix: str, local_metadata: dict, *rest: Any) -> None:
        """``rest``: strict, missing_keys, unexpected_keys, error_msgs."""
        for hook in tuple(self.__dict__.get(_LOAD_PRE, {}).values()):
            hook(state_dict, prefix, local_metadata, *rest)

    def _load_post_hooks_run(self, incompatible_keys: Any) -> None:
        for hook in tuple(self.__dict__.get(_LOAD_POST, {}).values()):
            if hook(self, incompatible_keys) is not None:
                raise RuntimeError(
                    "a load_state_dict post-hook must return None: change incompatible_keys in place"
                )
