"""``functional_call``: call a module with some of its parameters and buffers replaced by
given tensors, without changing the module (``torch.func.functional_call``'s semantics)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..._tensor import Tensor
from ..modules.module import Module

__all__ = ["functional_call"]


def _owner(module: Module, dotted: str) -> tuple:
    *path, leaf = dotted.split(".")
    for name in path:
        module = getattr(module, name)
    return module, leaf


@contextmanager
def _swapped(
    module: Module, tensors: Mapping[str, Tensor], tie_weights: bool, strict: bool
) -> Iterator[None]:
    names = dict(module.named_parameters(remove_duplicate=False))
    names.update(dict(module.named_buffers(remove_duplicate=False)))
    replace = dict(tensors)
    if tie_weights:  # a tensor shared under several names is replaced under all of them
        by_id: dict = {}
        for name, t in names.items():
            by_id.setdefault(id(t), []).append(name)
        for name in list(replace):
            if name in names:
                for alias in by_id[id(names[name])]:
                    if alias not in tensors:
                        replace[alias] = replace[name]
    if strict:
        missing = sorted(set(names) - set(replace))
        unexpected = sorted(set(replace) - set(names))
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(errors)
            )
    saved = []
    try:
        for name, value in replace.items():
            owner, leaf = _owner(module, name)
            for store in (owner._parameters, owner._buffers):
                if leaf in store:
                    saved.append((store, leaf, store[leaf]))
                    store[leaf] = value
                    break
            else:
                saved.append((owner.__dict__, leaf, owner.__dict__.get(leaf, _MISSING)))
                owner.__dict__[leaf] = value
        yield
    finally:
        for store, leaf, old in reversed(saved):
            if old is _MISSING:
                store.pop(leaf, None)
            else:
                store[leaf] = old


_MISSING = object()


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: Mapping[str, Tensor] | Sequence[Mapping],
    args: Any = None,
    kwargs: dict | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with the named parameters/buffers replaced by the given
    tensors (dotted names as in ``state_dict``); the module is unchanged afterwards.
    Gradients flow to the given tensors."""
    if isinstance(parameter_and_buffer_dicts, Mapping):
        tensors = dict(parameter_and_buffer_dicts)
    else:
        tensors = {}
        for d in parameter_and_buffer_dicts:
            overlap = set(tensors) & set(d)
            if overlap:
                raise ValueError(
                    f"{sorted(overlap)} appeared in multiple dictionaries; behavior of "
                    f"functional call is ambiguous"
                )
            tensors.update(d)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, tensors, tie_weights, strict):
        return module(*args, **(kwargs or {}))
