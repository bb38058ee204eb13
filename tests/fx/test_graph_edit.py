"""Editing graphs: replace an op, insert and erase nodes (erasing a used node fails),
inline a module call through proxies, build a graph by hand, dead code, lint, copies."""

import copy
import operator
import pickle

import pytest
from fx_models import two_inputs

import disttorch as dt
import disttorch.fx as fx
from disttorch.fx.node import map_arg


def test_replace_add_by_bitwise_and_then_recompile():
    gm = fx.symbolic_trace(two_inputs(dt))
    for n in gm.graph.nodes:
        if n.target in (operator.add, dt.add, "add"):
            with gm.graph.inserting_after(n):
                new = gm.graph.call_function(dt.bitwise_and, n.args, n.kwargs)
                n.replace_all_uses_with(new)
            gm.graph.erase_node(n)
    gm.recompile()
    assert "torch.bitwise_and(x, y)" in gm.code and "add" not in gm.code
    out = gm(dt.tensor([6]), dt.tensor([3]))
    assert [t.tolist() for t in out] == [[2], [2], [2]]


def test_erase_of_a_node_with_users_raises():
    g = fx.Graph()
    x = g.placeholder("x")
    r = g.call_function(dt.relu, (x,))
    g.output(r)
    with pytest.raises(
        RuntimeError, match=r"Tried to erase Node x but it still had 1 users in the graph: \{relu: None\}!"
    ):
        g.erase_node(x)


def test_insert_before_and_node_links():
    gm = fx.symbolic_trace(lambda x: dt.relu(x))
    relu = next(n for n in gm.graph.nodes if n.op == "call_function")
    with gm.graph.inserting_before(relu):
        neg = gm.graph.call_function(operator.neg, (relu.args[0],))
    relu.replace_input_with(relu.args[0], neg)
    gm.recompile()
    assert relu.prev is neg and neg.next is relu and neg.users == {relu: None}
    assert neg.all_input_nodes == [next(iter(gm.graph.nodes))]
    assert gm(dt.tensor([-2.0, 3.0])).tolist() == [2.0, 0.0]


def test_inline_a_call_module_with_proxies():
    class M(dt.nn.Module):
        def __init__(self):
            super().__init__()
            self.relu = dt.nn.ReLU()

        def forward(self, x):
            return self.relu(x) + 1.0

    m = fx.symbolic_trace(M())
    tracer = fx.proxy.GraphAppendingTracer(m.graph)
    for node in m.graph.nodes:
        if (node.op, node.target) == ("call_module", "relu"):
            with m.graph.inserting_before(node):
                args = map_arg(node.args, lambda n: fx.Proxy(n, tracer))
                out = m.relu(*args)
                node.replace_all_uses_with(out.node)
                m.graph.erase_node(node)
    m.recompile()
    assert "relu_1 = torch.nn.functional.relu(x, inplace = False);  x = None" in m.code  # as PyTorch
    assert "self.relu" not in m.code
    assert m(dt.tensor([-1.0, 1.0])).tolist() == [1.0, 2.0]


def test_graph_built_by_hand_from_proxies():
    g = fx.Graph()
    tracer = fx.proxy.GraphAppendingTracer(g)
    x, y = fx.Proxy(g.placeholder("x"), tracer), fx.Proxy(g.placeholder("y"), tracer)
    out = dt.neg(dt.tanh(dt.cat([x, y])))
    g.output(out.node)
    gm = fx.GraphModule(dt.nn.Module(), g)
    assert gm.code.splitlines()[3:6] == [
        "def forward(self, x, y):",
        "    cat = torch.cat([x, y]);  x = y = None",
        "    tanh = torch.tanh(cat);  cat = None",
    ]
    assert gm(dt.zeros(1), dt.zeros(1)).tolist() == [0.0, 0.0]


def test_dead_code_and_lint():
    g = fx.Graph()
    x = g.placeholder("x")
    g.call_function(dt.relu, (x,))  # unused: dead
    g.output(x)
    assert g.eliminate_dead_code() and len(g.nodes) == 2
    a = g.call_function(dt.relu, (x,))
    b = g.call_function(dt.neg, (a,))
    a.prepend(b)  # now b is used before... it reads a, which comes after it
    with pytest.raises(RuntimeError, match="was used before it has been defined"):
        g.lint()


def test_graph_module_from_a_dict_root_and_deepcopy_and_pickle():
    lin = dt.nn.Linear(2, 2)
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("sub.lin", (x,)))
    gm = fx.GraphModule({"sub.lin": lin}, g, "Tiny")
    assert type(gm).__name__ == "Tiny" and gm.sub.lin is lin
    inp = dt.ones(1, 2)
    for other in (copy.deepcopy(gm), pickle.loads(pickle.dumps(gm))):
        assert type(other).__name__ == "GraphModule"  # as PyTorch names its copies
        assert other.code == gm.code and other.sub.lin is not lin
        assert other(inp).tolist() == gm(inp).tolist()
    with pytest.raises(RuntimeError, match="referenced target sub.lin but that target was not provided"):
        fx.GraphModule({}, g)


def test_inplace_operators_are_written_as_statements():
    g = fx.Graph()
    x = g.placeholder("x")
    g.call_function(operator.setitem, (x, 0, 1.0))
    g.call_function(operator.iadd, (x, 2))
    g.output(x)
    gm = fx.GraphModule(dt.nn.Module(), g)
    assert gm.code.splitlines()[4:6] == [
        "    x[0] = 1.0;  setitem = x;  setitem = None",
        "    x += 2;  iadd = x;  iadd = None",
    ]
    assert gm(dt.zeros(2)).tolist() == [3.0, 2.0]


def test_dead_code_keeps_asserts_and_marked_functions_as_pytorch_does():
    def noisy(x):
        return x

    fx.has_side_effect(noisy)
    g = fx.Graph()
    x = g.placeholder("x")
    g.call_function(dt._assert, (x, "msg"))
    g.call_function(noisy, (x,))
    g.call_method("add_", (x, 1))  # a method call counts as pure, as in PyTorch
    g.output(x)
    assert g.eliminate_dead_code()
    assert [n.op for n in g.nodes] == ["placeholder", "call_function", "call_function", "output"]


def test_star_placeholders_generate_starred_parameters():
    g = fx.Graph()
    x = g.placeholder("x")
    args = g.placeholder("*args")
    g.output(g.call_function(operator.add, (x, g.call_function(operator.getitem, (args, 0)))))
    gm = fx.GraphModule(dt.nn.Module(), g)
    assert gm.code.splitlines()[3:5] == ["def forward(self, x, *args):", "    _args = args"]
    assert gm(dt.ones(1), dt.ones(1)).tolist() == [2.0]
    assert fx.Interpreter(gm).run(dt.ones(1), dt.ones(1)).tolist() == [2.0]
