"""``torch.fx._pytree``: flatten a pytree in the order of a ``TreeSpec`` made earlier
(``tree_flatten_spec``), as exported programs' runners flatten their call's arguments.

A type registered with ``register_pytree_flatten_spec`` is flattened by its function, which
takes the object and the spec and returns the children in the spec's order (a dict's values
in the order of the spec's keys, whatever the dict's own order); any other type goes through
``tree_flatten``, whose spec must then equal the given one.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import Any

from ..utils._pytree import PyTree, TreeSpec, tree_flatten

__all__ = ["register_pytree_flatten_spec", "tree_flatten_spec"]

FlattenFnSpec = Callable[[PyTree, TreeSpec], list[Any]]
FlattenFnExactMatchSpec = Callable[[PyTree, TreeSpec], bool]

SUPPORTED_NODES: dict[type[Any], FlattenFnSpec] = {}
SUPPORTED_NODES_EXACT_MATCH: dict[type[Any], FlattenFnExactMatchSpec | None] = {}


def register_pytree_flatten_spec(
    cls: type[Any],
    flatten_fn_spec: FlattenFnSpec,
    flatten_fn_exact_match_spec: FlattenFnExactMatchSpec | None = None,
) -> None:
    """Flatten instances of ``cls`` with ``flatten_fn_spec(obj, spec)`` in ``tree_flatten_spec``."""
    SUPPORTED_NODES[cls] = flatten_fn_spec
    SUPPORTED_NODES_EXACT_MATCH[cls] = flatten_fn_exact_match_spec


def _deregister_pytree_flatten_spec(cls: type[Any]) -> None:
    del SUPPORTED_NODES[cls]
    del SUPPORTED_NODES_EXACT_MATCH[cls]


def tree_flatten_spec(pytree: PyTree, spec: TreeSpec) -> list[Any]:
    """The leaves of ``pytree`` in the order ``spec`` lists them."""
    if spec.is_leaf():
        return [pytree]
    if spec.type in SUPPORTED_NODES:
        result: list[Any] = []
        for child, child_spec in zip(SUPPORTED_NODES[spec.type](pytree, spec), spec.children()):
            result += tree_flatten_spec(child, child_spec)
        return result
    flat, real_spec = tree_flatten(pytree)
    if spec != real_spec:
        raise RuntimeError(
            f"Real spec {real_spec} of object {pytree} is different from expected spec {spec}."
        )
    return flat


def _dict_flatten_spec(d: dict, spec: TreeSpec) -> list[Any]:
    return [d[k] for k in spec.context]


def _sequence_flatten_spec(d: list | tuple, spec: TreeSpec) -> list[Any]:
    return [d[i] for i in range(spec.num_children)]


def _exact_match(d: Any, spec: TreeSpec) -> bool:
    return len(d) == spec.num_children


register_pytree_flatten_spec(dict, _dict_flatten_spec, _exact_match)
register_pytree_flatten_spec(list, _sequence_flatten_spec, _exact_match)
register_pytree_flatten_spec(tuple, _sequence_flatten_spec, _exact_match)
# every namedtuple (``torch.return_types`` included) has ``namedtuple`` as its spec's type
register_pytree_flatten_spec(namedtuple, _sequence_flatten_spec, _exact_match)  # type: ignore[arg-type]
