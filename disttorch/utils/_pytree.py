"""``torch.utils._pytree``: nested containers ("pytrees") flattened to a list of leaves and a
``TreeSpec`` that rebuilds them, as PyTorch's pure-Python implementation does.

Containers are nodes when their type is registered in ``SUPPORTED_NODES``: tuple, list,
dict, ``namedtuple``, ``OrderedDict``, ``defaultdict`` and ``deque`` are, and
``register_pytree_node`` adds more. Everything else (tensors, numbers, ``None``) is a leaf.
Dicts keep their insertion order. Libraries map functions over batches with it
(``tree_map``, ``tree_map_only``) and move or gather nested outputs (accelerate, Lightning,
x-transformers, transformers).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

__all__ = [
    "Context",
    "FlattenFunc",
    "GetAttrKey",
    "KeyEntry",
    "LeafSpec",
    "MappingKey",
    "PyTree",
    "SUPPORTED_NODES",
    "SequenceKey",
    "TreeSpec",
    "UnflattenFunc",
    "keystr",
    "register_pytree_node",
    "tree_all",
    "tree_all_only",
    "tree_any",
    "tree_any_only",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_is_leaf",
    "tree_iter",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_",
    "tree_map_only",
    "tree_map_only_",
    "tree_map_with_path",
    "tree_structure",
    "tree_unflatten",
    "treespec_dumps",
    "treespec_loads",
]

Context = Any
PyTree = Any
KeyEntry = Any
FlattenFunc = Callable[[PyTree], tuple[list, Context]]
UnflattenFunc = Callable[[Iterable, Context], PyTree]
TREESPEC_PROTOCOL = 1


class NodeDef(NamedTuple):
    """How one container type flattens (to children and a context) and rebuilds."""

    type: type
    flatten_fn: FlattenFunc
    unflatten_fn: UnflattenFunc
    flatten_with_keys_fn: Callable | None


class _Serialized(NamedTuple):
    serialized_type_name: str
    to_dumpable_context: Callable | None
    from_dumpable_context: Callable | None


SUPPORTED_NODES: dict[type, NodeDef] = {}
_SERIALIZED: dict[type, _Serialized] = {}
_BY_SERIALIZED_NAME: dict[str, type] = {}


# ---------------------------------------------------------------- key paths
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The position of a child in a sequence: ``[idx]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Any) -> Any:
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """The key of a child in a mapping: ``[key]``."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Any) -> Any:
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The attribute holding a child: ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        return getattr(obj, self.name)


def keystr(kp: tuple) -> str:
    """A key path as the text that indexes it: ``"['a'][1]"``."""
    return "".join(str(k) for k in kp)


# ---------------------------------------------------------------- registration
def register_pytree_node(
    cls: type,
    flatten_fn: FlattenFunc,
    unflatten_fn: UnflattenFunc,
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context: Callable | None = None,
    from_dumpable_context: Callable | None = None,
    flatten_with_keys_fn: Callable | None = None,
) -> None:
    """Make ``cls`` a container: ``flatten_fn(node) -> (children, context)`` and
    ``unflatten_fn(children, context) -> node``. Registering a type twice is an error."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    name = serialized_type_name or f"{cls.__module__}.{cls.__qualname__}"
    _SERIALIZED[cls] = _Serialized(name, to_dumpable_context, from_dumpable_context)
    _BY_SERIALIZED_NAME[name] = cls


def _tuple_flatten(t: tuple) -> tuple[list, Context]:
    return list(t), None


def _list_flatten(t: list) -> tuple[list, Context]:
    return list(t), None


def _seq_keys(children: list, context: Context) -> tuple[list, Context]:
    return [(SequenceKey(i), c) for i, c in enumerate(children)], context


def _dict_flatten(d: dict) -> tuple[list, Context]:
    return list(d.values()), list(d.keys())


def _dict_unflatten(values: Iterable, context: Context) -> dict:
    return dict(zip(context, values))


def _dict_flatten_with_keys(d: dict) -> tuple[list, Context]:
    values, context = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


def _namedtuple_flatten(t: tuple) -> tuple[list, Context]:
    return list(t), type(t)


def _namedtuple_flatten_with_keys(t: tuple) -> tuple[list, Context]:
    return [(GetAttrKey(f), v) for f, v in zip(t._fields, t)], type(t)


def _ordereddict_flatten(d: OrderedDict) -> tuple[list, Context]:
    return list(d.values()), list(d.keys())


def _defaultdict_flatten(d: defaultdict) -> tuple[list, Context]:
    return list(d.values()), [d.default_factory, list(d.keys())]


def _defaultdict_flatten_with_keys(d: defaultdict) -> tuple[list, Context]:
    values, context = _defaultdict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values)], context


def _deque_flatten(d: deque) -> tuple[list, Context]:
    return list(d), d.maxlen


register_pytree_node(
    tuple,
    _tuple_flatten,
    lambda v, c: tuple(v),
    serialized_type_name="builtins.tuple",
    flatten_with_keys_fn=lambda t: _seq_keys(*_tuple_flatten(t)),
)
register_pytree_node(
    list,
    _list_flatten,
    lambda v, c: list(v),
    serialized_type_name="builtins.list",
    flatten_with_keys_fn=lambda t: _seq_keys(*_list_flatten(t)),
)
register_pytree_node(
    dict,
    _dict_flatten,
    _dict_unflatten,
    serialized_type_name="builtins.dict",
    flatten_with_keys_fn=_dict_flatten_with_keys,
)
register_pytree_node(
    namedtuple,  # type: ignore[arg-type] # stands for every namedtuple class (see _get_node_type)
    _namedtuple_flatten,
    lambda v, c: c(*v),
    serialized_type_name="collections.namedtuple",
    flatten_with_keys_fn=_namedtuple_flatten_with_keys,
)
register_pytree_node(
    OrderedDict,
    _ordereddict_flatten,
    lambda v, c: OrderedDict(zip(c, v)),
    serialized_type_name="collections.OrderedDict",
    flatten_with_keys_fn=_dict_flatten_with_keys,
)
register_pytree_node(
    defaultdict,
    _defaultdict_flatten,
    lambda v, c: defaultdict(c[0], zip(c[1], v)),
    serialized_type_name="collections.defaultdict",
    flatten_with_keys_fn=_defaultdict_flatten_with_keys,
)
register_pytree_node(
    deque,
    _deque_flatten,
    lambda v, c: deque(v, maxlen=c),
    serialized_type_name="collections.deque",
    flatten_with_keys_fn=lambda d: _seq_keys(*_deque_flatten(d)),
)


def _is_namedtuple_instance(tree: Any) -> bool:
    kind = type(tree)
    return issubclass(kind, tuple) and isinstance(getattr(kind, "_fields", None), tuple)


def _get_node_type(tree: Any) -> Any:
    """The registry key of ``tree``'s type (every namedtuple class shares ``namedtuple``'s)."""
    return namedtuple if _is_namedtuple_instance(tree) else type(tree)


def tree_is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``tree`` is a leaf: its type is not registered, or ``is_leaf`` says so."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


_is_leaf = tree_is_leaf


# ---------------------------------------------------------------- TreeSpec
class TreeSpec:
    """The structure of a pytree: the node's ``type`` and ``context`` and its children's
    specs. A leaf is ``TreeSpec(None, None, [])`` (``LeafSpec()``), printed ``*``."""

    def __init__(self, type: Any, context: Context, children_specs: list[TreeSpec]) -> None:
        self.type, self.context, self.children_specs = type, context, list(children_specs)
        self.num_children = len(self.children_specs)
        self.num_leaves = 1 if type is None else sum(c.num_leaves for c in self.children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)

    def is_leaf(self) -> bool:
        return self.type is None

    def children(self) -> list[TreeSpec]:
        return list(self.children_specs)

    def child(self, index: int) -> TreeSpec:
        return self.children_specs[index]

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (self.type, self.context, self.children_specs) == (
            other.type,
            other.context,
            other.children_specs,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self, indent: int = 0) -> str:
        if self.is_leaf():
            return "*"
        name = self.type.__name__ if self.type is not namedtuple else "namedtuple"
        indent += 2
        children = (",\n" + " " * indent).join(c.__repr__(indent) for c in self.children_specs)
        return f"TreeSpec({name}, {self.context}, [{children}])"

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        """Rebuild the tree from ``leaves`` (exactly ``num_leaves`` of them)."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                f"but the spec refers to a pytree that holds {self.num_leaves} items ({self})."
            )
        return self._build(iter(leaves))

    def _build(self, leaves: Iterator[Any]) -> PyTree:
        if self.is_leaf():
            return next(leaves)
        children = [c._build(leaves) for c in self.children_specs]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)

    def flatten_up_to(self, tree: PyTree) -> list[PyTree]:
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have this structure
        down to them)."""
        out: list = []
        self._up_to(tree, out)
        return out

    def _up_to(self, tree: PyTree, out: list) -> None:
        if self.is_leaf():
            out.append(tree)
            return
        node_type = _get_node_type(tree)
        if node_type is not self.type:
            raise ValueError(f"Node type mismatch; expected {self.type}, but got {type(tree)}.")
        children, context = SUPPORTED_NODES[node_type].flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
        if context != self.context:
            raise ValueError(
                f"Node context mismatch for node type {self.type}: {self.context!r} != {context!r}."
            )
        for spec, child in zip(self.children_specs, children):
            spec._up_to(child, out)


class LeafSpec(TreeSpec):
    """The spec of a leaf (``*``): ``TreeSpec(None, None, [])``."""

    def __init__(self) -> None:
        super().__init__(None, None, [])


# ---------------------------------------------------------------- flatten and map
def tree_flatten(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> tuple[list, TreeSpec]:
    """The leaves of ``tree`` (depth first, left to right) and its ``TreeSpec``."""
    leaves: list = []
    return leaves, _flatten(tree, is_leaf, leaves)


def _flatten(tree: PyTree, is_leaf: Callable | None, leaves: list) -> TreeSpec:
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return LeafSpec()
    node_type = _get_node_type(tree)
    children, context = SUPPORTED_NODES[node_type].flatten_fn(tree)
    return TreeSpec(node_type, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """Rebuild a tree from its leaves and spec (``tree_flatten``'s inverse)."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of "
            f"TreeSpec but got item of type {type(treespec)}."
        )
    return treespec.unflatten(leaves)


def tree_iter(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> Iterator[Any]:
    """The leaves of ``tree``, one at a time."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list:
    """The leaves of ``tree`` as a list."""
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> TreeSpec:
    """The ``TreeSpec`` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable, tree: PyTree, *rests: PyTree, is_leaf: Callable | None = None) -> PyTree:
    """A tree of the same structure with ``func(leaf, *matching leaves of rests)`` at each
    leaf (``rests`` must have ``tree``'s structure, or hold subtrees where it has leaves)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))


def tree_map_(func: Callable, tree: PyTree, *rests: PyTree, is_leaf: Callable | None = None) -> PyTree:
    """Call ``func`` on every leaf (for its side effects); returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _type_predicate(type_or_types_or_pred: Any) -> Callable[[Any], bool]:
    if (
        isinstance(type_or_types_or_pred, (type, tuple))
        or type(type_or_types_or_pred).__name__ == "UnionType"
    ):
        return lambda x: isinstance(x, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def _only(type_or_types_or_pred: Any, func: Callable) -> Callable:
    pred = _type_predicate(type_or_types_or_pred)

    @functools.wraps(func)
    def wrapped(x: Any) -> Any:
        return func(x) if pred(x) else x

    return wrapped


def tree_map_only(
    type_or_types_or_pred: Any, /, func: Callable, tree: PyTree, is_leaf: Callable | None = None
) -> PyTree:
    """``tree_map`` applying ``func`` only to the leaves of the given type(s) (or that the
    predicate accepts); other leaves are kept."""
    return tree_map(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(
    type_or_types_or_pred: Any, /, func: Callable, tree: PyTree, is_leaf: Callable | None = None
) -> PyTree:
    """``tree_map_`` on the leaves of the given type(s) only; returns ``tree``."""
    return tree_map_(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable | None = None) -> bool:
    """Whether ``pred`` holds for every leaf."""
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable | None = None) -> bool:
    """Whether ``pred`` holds for some leaf."""
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(
    type_or_types: Any, /, pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable | None = None
) -> bool:
    """Whether ``pred`` holds for every leaf of the given type(s)."""
    only = _type_predicate(type_or_types)
    return all(pred(x) for x in tree_iter(tree, is_leaf) if only(x))


def tree_any_only(
    type_or_types: Any, /, pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable | None = None
) -> bool:
    """Whether ``pred`` holds for some leaf of the given type(s)."""
    only = _type_predicate(type_or_types)
    return any(pred(x) for x in tree_iter(tree, is_leaf) if only(x))


# ---------------------------------------------------------------- key paths
def tree_flatten_with_path(tree: PyTree, is_leaf: Callable | None = None) -> tuple[list, TreeSpec]:
    """``tree_flatten`` with each leaf's key path: ``([(path, leaf), ...], spec)``."""
    return list(_leaves_with_path(tree, is_leaf, ())), tree_structure(tree, is_leaf)


def _leaves_with_path(tree: PyTree, is_leaf: Callable | None, path: tuple) -> Iterator[tuple]:
    if tree_is_leaf(tree, is_leaf):
        yield path, tree
        return
    node = SUPPORTED_NODES[_get_node_type(tree)]
    if node.flatten_with_keys_fn is None:
        raise ValueError(
            f"Did not find a flatten_with_keys_fn for type: {node.type}. Please pass a "
            "flatten_with_keys_fn argument to register_pytree_node."
        )
    keyed, _ = node.flatten_with_keys_fn(tree)
    for key, child in keyed:
        yield from _leaves_with_path(child, is_leaf, (*path, key))


def tree_leaves_with_path(tree: PyTree, is_leaf: Callable | None = None) -> list[tuple]:
    """The ``(key path, leaf)`` pairs of ``tree``."""
    return list(_leaves_with_path(tree, is_leaf, ()))


def tree_map_with_path(
    func: Callable, tree: PyTree, *rests: PyTree, is_leaf: Callable | None = None
) -> PyTree:
    """``tree_map`` with ``func(path, leaf, *others)``."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(p, x, *xs) for (p, x), *xs in zip(pairs, *others))


# ---------------------------------------------------------------- serialisation
def treespec_dumps(treespec: TreeSpec, protocol: int | None = None) -> str:
    """The spec as JSON (PyTorch's protocol 1: each node's serialized type name, its context
    as JSON, and its children)."""
    if protocol not in (None, TREESPEC_PROTOCOL):
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [{TREESPEC_PROTOCOL}]")
    return json.dumps([TREESPEC_PROTOCOL, _spec_to_json(treespec)])


def _spec_to_json(spec: TreeSpec) -> dict:
    if spec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    if spec.type not in _SERIALIZED:
        raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered.")
    ser = _SERIALIZED[spec.type]
    context = spec.context
    if ser.to_dumpable_context is not None:
        context = ser.to_dumpable_context(context)
    elif spec.type is namedtuple:
        raise NotImplementedError(
            f"Serializing the namedtuple {context.__name__} needs its to_dumpable_context."
        )
    try:
        text = json.dumps(context)
    except TypeError as e:
        raise TypeError(
            f"Unable to serialize context {context!r} of {spec.type}; register it with a to_dumpable_context"
        ) from e
    return {
        "type": ser.serialized_type_name,
        "context": text,
        "children_spec": [_spec_to_json(c) for c in spec.children_specs],
    }


def treespec_loads(serialized: str) -> TreeSpec:
    """The spec ``treespec_dumps`` wrote."""
    protocol, data = json.loads(serialized)
    if protocol != TREESPEC_PROTOCOL:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [{TREESPEC_PROTOCOL}]")
    return _spec_from_json(data)


def _spec_from_json(data: dict) -> TreeSpec:
    if data["type"] is None:
        return LeafSpec()
    kind = _BY_SERIALIZED_NAME.get(data["type"])
    if kind is None:
        module, _, name = data["type"].rpartition(".")
        kind = getattr(importlib.import_module(module), name, None)
        if kind not in _SERIALIZED:
            raise NotImplementedError(f"Deserializing {data['type']} in pytree is not registered.")
    context = json.loads(data["context"])
    ser = _SERIALIZED[kind]
    if ser.from_dumpable_context is not None:
        context = ser.from_dumpable_context(context)
    return TreeSpec(kind, context, [_spec_from_json(c) for c in data["children_spec"]])
