"""``torch.fx.replace_pattern``: find every non-overlapping occurrence of a pattern (a
function, traced) in a module's graph and put a replacement (another function, traced) in
its place.

A pattern matches where its output node and, walking backwards, each of its nodes meet a
node of the graph with the same op and target and matching arguments; the pattern's inputs
match any value, the same value every time they are used. A match whose inner values are
also used outside it is skipped (removing it would break those uses)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .graph import Graph
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    """One replaced occurrence: ``anchor`` (the graph node that matched the pattern's
    output) and ``nodes_map`` (pattern node -> graph node)."""

    anchor: Node
    nodes_map: dict[Node, Node]


def _graph_of(fn: Callable | GraphModule | Graph) -> Graph:
    if isinstance(fn, Graph):
        return fn
    if isinstance(fn, GraphModule):
        return fn.graph
    from ._symbolic_trace import symbolic_trace

    return symbolic_trace(fn).graph


class _Matcher:
    def __init__(self, pattern: Graph) -> None:
        self.pattern = pattern
        self.inputs = [n for n in pattern.nodes if n.op == "placeholder"]
        output = next(n for n in reversed(pattern.nodes) if n.op == "output")
        if not isinstance(output.args[0], Node):
            raise NotImplementedError("replace_pattern: the pattern must return exactly one value")
        self.anchor = output.args[0]

    def match(self, node: Node) -> dict[Node, Node] | None:
        """Pattern node -> graph node, if the pattern ends at ``node``."""
        found: dict[Node, Node] = {}
        if not self._match_node(self.anchor, node, found):
            return None
        inner = {gn for pn, gn in found.items() if pn.op != "placeholder"}
        for pn, gn in found.items():
            if pn.op != "placeholder" and pn is not self.anchor and any(u not in inner for u in gn.users):
                return None  # an inner value is used outside: the match cannot be removed
        return found

    def _match_node(self, pn: Node, gn: Any, found: dict[Node, Node]) -> bool:
        if pn in found:
            return found[pn] is gn
        if pn.op == "placeholder":
            found[pn] = gn
            return True
        if not isinstance(gn, Node) or gn.op != pn.op or gn.target != pn.target:
            return False
        if gn in found.values():
            return False
        found[pn] = gn
        ok = self._match_args(pn.args, gn.args, found) and self._match_args(pn.kwargs, gn.kwargs, found)
        if not ok:
            del found[pn]
        return ok

    def _match_args(self, pa: Any, ga: Any, found: dict[Node, Node]) -> bool:
        if isinstance(pa, Node):
            return self._match_node(pa, ga, found)
        if isinstance(pa, (tuple, list)):
            return (
                isinstance(ga, (tuple, list))
                and len(pa) == len(ga)
                and all(self._match_args(p, g, found) for p, g in zip(pa, ga))
            )
        if isinstance(pa, dict):
            return (
                isinstance(ga, dict)
                and pa.keys() == ga.keys()
                and all(self._match_args(pa[k], ga[k], found) for k in pa)
            )
        return type(pa) is type(ga) and pa == ga


def replace_pattern(
    gm: GraphModule, pattern: Callable | GraphModule | Graph, replacement: Callable | GraphModule | Graph
) -> list[Match]:
    """Replace each non-overlapping match of ``pattern`` in ``gm.graph`` by ``replacement``
    (both functions of the pattern's inputs, or graphs); recompile ``gm``; return the matches."""
    matcher = _Matcher(_graph_of(pattern))
    replacement_graph = _graph_of(replacement)
    graph = gm.graph
    matches: list[Match] = []
    taken: set[Node] = set()
    for node in list(graph.nodes):
        found = matcher.match(node)
        if found is None:
            continue
        inner = {gn for pn, gn in found.items() if pn.op != "placeholder"}
        if inner & taken:
            continue
        taken |= inner
        matches.append(Match(node, found))
    for anchor, found in matches:
        inputs = [found.get(p) for p in matcher.inputs]
        rep_inputs = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        if len(rep_inputs) != len(inputs):
            raise ValueError(
                f"replace_pattern: the replacement takes {len(rep_inputs)} inputs, the pattern {len(inputs)}"
            )
        order = {n: i for i, n in enumerate(graph.nodes)}
        first_user = min(anchor.users, key=order.__getitem__, default=anchor)  # as PyTorch places it
        with graph.inserting_before(first_user):
            out = graph.graph_copy(replacement_graph, dict(zip(rep_inputs, inputs)))
        if not isinstance(out, Node):
            raise NotImplementedError("replace_pattern: the replacement must return exactly one value")
        anchor.replace_all_uses_with(out)
        for pn in reversed(list(matcher.pattern.nodes)):
            gn = found.get(pn)
            if pn.op not in ("placeholder", "output") and gn is not None and not gn.users:
                graph.erase_node(gn)
    gm.recompile()
    return matches
