"""A library's own ``Tracer.trace`` written against PyTorch's internals (PyG's
``to_hetero`` does this): ``torch.fx._symbolic_trace``'s patching helpers and
``create_args_for_root``; graph surgery that calls ``inserting_after`` without ``with``."""

from __future__ import annotations

import math
import operator

import pytest

import disttorch as dt
import disttorch.fx  # noqa: F401


def _library_trace(lib):
    """A ``Tracer.trace`` as PyG writes it (module calls and attribute reads patched, the
    root's forward run on placeholders), then a node added after each placeholder."""
    fx = lib.fx
    st = fx._symbolic_trace

    class Tracer(fx.Tracer):
        @st.compatibility(is_backward_compatible=True)
        def trace(self, root, concrete_args=None):
            self.root = root
            self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            self.graph = fx.Graph(tracer_cls=type(self))
            self.tensor_attrs = {}
            assert isinstance(type(root).forward, st.FunctionType) and not isinstance(root, st.ScriptObject)
            fn_globals = type(root).forward.__globals__
            fn, args = self.create_args_for_root(type(root).forward, True, concrete_args)
            cache: dict = {}

            @st.functools.wraps(st._orig_module_getattr)
            def module_getattr(mod, attr):
                return self.getattr(attr, st._orig_module_getattr(mod, attr), cache)

            @st.functools.wraps(st._orig_module_call)
            def module_call(mod, *a, **k):
                st._autowrap_check(
                    patcher, getattr(mod.forward, "__globals__", {}), self._autowrap_function_ids
                )
                return self.call_module(mod, lambda *a2, **k2: st._orig_module_call(mod, *a2, **k2), a, k)

            with st._Patcher() as patcher:
                patcher.patch_method(lib.nn.Module, "__getattr__", module_getattr, deduplicate=False)
                patcher.patch_method(lib.nn.Module, "__call__", module_call, deduplicate=False)
                st._patch_wrapped_functions(patcher)
                st._autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_search:
                    st._autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
                self.create_node("output", "output", (self.create_arg(fn(*args)),), {})
            return self.graph

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 3)

        def forward(self, x, scale):
            return self.lin(x).relu() * math.sqrt(scale)

    net = Net()
    graph = Tracer().trace(net)
    for node in list(graph.nodes):
        if node.op == "placeholder":
            graph.inserting_after(node)  # no ``with``: the insertion point moves now
            graph.create_node("call_function", operator.neg, (node,), name=f"{node.name}_neg")
    graph.lint()
    gm = fx.GraphModule(net, graph)
    out = gm(lib.ones(2, 3), 4.0)
    patched_back = lib.nn.Module.__call__ is st._orig_module_call and math.sqrt(4.0) == 2.0
    return [(n.op, n.name) for n in graph.nodes], tuple(out.shape), patched_back


def test_a_library_tracer_runs_on_torch_fx_internals():
    nodes, shape, patched_back = _library_trace(dt)
    assert nodes[:4] == [
        ("placeholder", "x"),
        ("call_function", "x_neg"),
        ("placeholder", "scale"),
        ("call_function", "scale_neg"),
    ]
    assert ("call_function", "sqrt") in nodes and shape == (2, 3) and patched_back


@pytest.mark.parity
def test_a_library_tracer_matches_pytorch(torch):
    assert _library_trace(dt) == _library_trace(torch)
