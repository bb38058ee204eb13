"""Auto-wrap policies (mirrors ``torch.distributed.fsdp.wrap``): which submodules of a model
``FullyShardedDataParallel`` makes units of.

A policy is called as ``policy(module=m, recurse=True, nonwrapped_numel=n)`` to ask whether
to look inside ``m``, and after its children are done, as ``policy(module=m, recurse=False,
nonwrapped_numel=n)`` to ask whether ``m`` (with ``n`` parameters not yet in a unit) becomes
a unit itself.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ...modules.module import Module

__all__ = [
    "always_wrap_policy",
    "lambda_auto_wrap_policy",
    "transformer_auto_wrap_policy",
    "size_based_auto_wrap_policy",
    "ModuleWrapPolicy",
    "CustomPolicy",
    "enable_wrap",
    "wrap",
]


def always_wrap_policy(*args: Any, **kwargs: Any) -> bool:
    """Every module becomes a unit."""
    return True


def lambda_auto_wrap_policy(
    module: Module, recurse: bool, nonwrapped_numel: int, lambda_fn: Callable
) -> bool:
    """A unit wherever ``lambda_fn(module)`` is true."""
    return True if recurse else bool(lambda_fn(module))


def transformer_auto_wrap_policy(
    module: Module, recurse: bool, nonwrapped_numel: int, transformer_layer_cls: set
) -> bool:
    """A unit for every instance of the given layer classes (e.g. a transformer block)."""
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(
    module: Module,
    recurse: bool,
    nonwrapped_numel: int,
    min_num_params: int = int(1e8),
    force_leaf_modules: set | None = None,
    exclude_wrap_modules: set | None = None,
) -> bool:
    """A unit for every module holding at least ``min_num_params`` parameters not yet in a
    unit; ``force_leaf_modules`` are not looked into, ``exclude_wrap_modules`` never wrapped."""
    leaves = tuple(force_leaf_modules or ())
    excluded = tuple(exclude_wrap_modules or ())
    if recurse:
        return not (leaves and isinstance(module, leaves))
    return nonwrapped_numel >= min_num_params and not (excluded and isinstance(module, excluded))


class ModuleWrapPolicy:
    """A unit for every instance of ``module_classes``."""

    def __init__(self, module_classes: Iterable[type]) -> None:
        self._classes = tuple(module_classes)

    def __call__(self, module: Module, recurse: bool, nonwrapped_numel: int = 0, **kwargs: Any) -> bool:
        return True if recurse else isinstance(module, self._classes)


class CustomPolicy:
    """A unit wherever ``lambda_fn(module)`` returns true or a non-empty dict (PyTorch's
    per-unit arguments in such a dict are not applied: every unit takes the wrapper's)."""

    def __init__(self, lambda_fn: Callable[[Module], bool | dict]) -> None:
        self._fn = lambda_fn

    def __call__(
        self, module: Module, recurse: bool, nonwrapped_numel: int = 0, **kwargs: Any
    ) -> bool | dict:
        return True if recurse else self._fn(module)


def enable_wrap(*args: Any, **kwargs: Any) -> Any:
    """Manual wrapping contexts are not supported: pass ``auto_wrap_policy`` or call ``fully_shard``."""
    raise NotImplementedError(
        "torch.distributed.fsdp.wrap.enable_wrap is not supported by disttorch; pass auto_wrap_policy "
        "to FullyShardedDataParallel or apply fully_shard to the submodules"
    )


def wrap(module: Module, **kwargs: Any) -> Module:
    """Manual wrapping is not supported (see :func:`enable_wrap`)."""
    return enable_wrap(module, **kwargs)


def units_of(root: Module, policy: Callable, ignored: set[int]) -> list[tuple[Module, Any]]:
    """The submodules ``policy`` makes units of, innermost first (each with the policy's
    answer), never ``root`` itself; modules in ``ignored`` (ids) are skipped with their subtrees."""
    chosen: list[tuple[Module, Any]] = []

    def unwrapped_numel(m: Module, taken: set[int]) -> int:
        return sum(p.numel() for p in m.parameters() if id(p) not in taken)

    taken: set[int] = set()

    def visit(m: Module, is_root: bool) -> None:
        if id(m) in ignored:
            return
        if policy(module=m, recurse=True, nonwrapped_numel=unwrapped_numel(m, taken)):
            for child in m.children():
                visit(child, False)
        if not is_root:
            verdict = policy(module=m, recurse=False, nonwrapped_numel=unwrapped_numel(m, taken))
            if verdict:
                chosen.append((m, verdict))
                taken.update(id(p) for p in m.parameters())

    visit(root, True)
    return chosen
