"""``torch.utils._pytree``: flatten, rebuild and map nested containers as PyTorch does."""

from __future__ import annotations

import collections
import warnings

import pytest

import disttorch.utils._pytree as ours

NT = collections.namedtuple("NT", "x y")


def _session(p) -> list[str]:
    """Every answer of one module, as text, for the same trees."""
    warnings.simplefilter("ignore")  # PyTorch deprecates LeafSpec and _is_leaf
    tree = {"a": [1, (2, None)], "b": collections.OrderedDict(x=3)}
    leaves, spec = p.tree_flatten(tree)
    out = [leaves, repr(spec), (spec.num_leaves, spec.num_nodes, spec.num_children, spec.type, spec.context)]
    out += [
        p.treespec_dumps(spec),
        p.treespec_loads(p.treespec_dumps(spec)) == spec,
        spec.unflatten([9, 8, 7, 6]),
    ]
    out += [
        p.tree_flatten_with_path({"a": [1, 2]}),
        p.keystr(p.tree_flatten_with_path({"a": [1, 2]})[0][1][0]),
    ]
    out += [
        p.tree_map(lambda x, y: x + y, [1, 2], [10, 20]),
        p.tree_map(lambda a, b: (a, b), [1, 2], [[3], {"z": 4}]),
    ]
    out += [p.tree_flatten(NT(1, 2)), p.tree_flatten(collections.defaultdict(list, {"a": 1}))]
    out += [p.tree_flatten(collections.deque([1, 2], maxlen=3)), p._dict_flatten_with_keys({"a": 1})]
    out += [p.tree_map_only(int, lambda x: x * 2, [1, "a", (2.5, 3)]), p.tree_leaves(tree)]
    out += [p.tree_all(lambda x: x is not None, tree), p.tree_any(lambda x: x is None, tree)]
    out += [
        isinstance(p.tree_structure(1), p.LeafSpec),
        p.tree_map_with_path(lambda k, v: p.keystr(k), {"q": (1, [2])}),
    ]
    out += [repr(p.LeafSpec()), p._get_node_type([1]), p._is_leaf(1)]
    try:
        p.tree_map(lambda x, y: x + y, [1, 2], [10, 20, 3])
    except ValueError as e:
        out.append(str(e))
    return [str(x) for x in out]


def test_flatten_and_rebuild_round_trip():
    tree = {"a": [1, (2, None)], "b": NT(3, collections.deque([4]))}
    leaves, spec = ours.tree_flatten(tree)
    assert leaves == [1, 2, None, 3, 4]
    assert ours.tree_unflatten([x for x in leaves], spec) == tree
    with pytest.raises(ValueError, match="holds 5 items"):
        spec.unflatten([1])
    with pytest.raises(TypeError, match="TreeSpec"):
        ours.tree_unflatten(leaves, "spec")


def test_registered_types_are_nodes():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    ours.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda v, c: Pair(*v))
    try:
        doubled = ours.tree_map(lambda x: x * 2, [Pair(1, 2)])
        assert (doubled[0].a, doubled[0].b) == (2, 4)
        with pytest.raises(ValueError, match="already registered"):
            ours.register_pytree_node(Pair, lambda p: ([], None), lambda v, c: Pair())
    finally:
        del ours.SUPPORTED_NODES[Pair]


@pytest.mark.parity
def test_same_answers_as_pytorch(torch):
    import torch.utils._pytree as theirs

    with warnings.catch_warnings():
        assert _session(ours) == _session(theirs)
