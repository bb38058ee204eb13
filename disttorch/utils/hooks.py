"""``torch.utils.hooks``: the handle that unregisters a hook, as PyTorch's.

``RemovableHandle(hooks_dict)`` takes the next id from a counter shared by every handle;
the registering code stores the hook under ``handle.id`` in ``hooks_dict`` (and, with
``extra_dict``, bookkeeping under the same id in other dicts); ``remove()`` deletes those
entries. The dicts are held by weak reference, so a handle never keeps a module alive.
Modules, optimisers and libraries (accelerate, opacus, Lightning) register hooks this way.
"""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


class RemovableHandle:
    """A handle that removes a hook: ``handle.remove()`` or ``with handle: ...``.

    Args:
        hooks_dict: the dict the hook is stored in, under ``handle.id``.
        extra_dict: a dict or list of dicts whose ``handle.id`` entries go with it.
    """

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = [extra_dict] if isinstance(extra_dict, dict) else list(extra_dict or ())
        self.extra_dict_ref: tuple = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        """Unregister the hook (a second call does nothing)."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self) -> tuple:
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state: tuple) -> None:
        # a handle unpickled without its dict points at an empty one (removing does nothing)
        self.hooks_dict_ref = weakref.ref(state[0] if state[0] is not None else OrderedDict())
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extras = state[2] if len(state) > 2 and state[2] is not None else ()
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def unserializable_hook(f: Callable) -> Callable:
    """Mark ``f`` as a hook that is not saved with its tensor (silences
    :func:`warn_if_has_hooks`); returns ``f``."""
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f


def warn_if_has_hooks(tensor: Any) -> None:
    """Warn for each backward hook of ``tensor`` that saving it will drop (hooks marked with
    :func:`unserializable_hook` excepted)."""
    for hook in getattr(tensor, "_hooks", None) or ():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(
                f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, you "
                "can decorate the function with @torch.utils.hooks.unserializable_hook to suppress "
                "this warning",
                stacklevel=2,
            )
