"""``torch.fx``: capture a module's ``forward`` as a graph of operations by running it on
proxies (``symbolic_trace``, ``Tracer``), edit the graph (``Graph``, ``Node``), turn it back
into a runnable module (``GraphModule``), run or rewrite it node by node (``Interpreter``,
``Transformer``, ``replace_pattern``), and annotate it with shapes (``passes.shape_prop``).

Importing it lets torch functions dispatch to ``__torch_function__`` of proxies (see
``disttorch._function_dispatch``)."""

from __future__ import annotations

from .. import _function_dispatch

_function_dispatch.install()

from . import _pytree, experimental, node, passes, proxy  # noqa: E402
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap  # noqa: E402
from .graph import Graph  # noqa: E402
from .graph_module import GraphModule  # noqa: E402
from .interpreter import Interpreter, Transformer  # noqa: E402
from .node import Node, has_side_effect, map_arg  # noqa: E402
from .proxy import Proxy  # noqa: E402
from .subgraph_rewriter import replace_pattern  # noqa: E402

__all__ = [
    "PH",
    "Graph",
    "GraphModule",
    "Interpreter",
    "Node",
    "Proxy",
    "Tracer",
    "Transformer",
    "experimental",
    "has_side_effect",
    "map_arg",
    "node",
    "passes",
    "proxy",
    "replace_pattern",
    "symbolic_trace",
    "wrap",
]
