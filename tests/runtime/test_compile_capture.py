"""What a program sees of compilation beyond the result: ``explain``'s graphs (and their
nodes' names), a compiled
node's inputs, ``_dynamo.run``, per-thread config patches, outputs under ``no_grad``."""

from __future__ import annotations

import threading

import pytest

import disttorch


@pytest.fixture(scope="module")
def real_torch():
    return pytest.importorskip("torch")


def _nodes(gm) -> list:
    return [(n.op, n.target if n.op != "call_function" else n.target.__name__) for n in gm.graph.nodes]


@pytest.mark.parity
def test_explain_gives_the_graphs_it_counts_as_pytorchs(real_torch):
    # ``graphs`` was empty
    def run(T) -> list:
        def f(x, y):
            a = x.sin() + y
            b = T.cos(a) * 2
            T._dynamo.graph_break()
            return b.relu() - x

        x, y = T.ones(3), T.full((3,), 2.0)
        e = T._dynamo.explain(f)(x, y)
        facts = [e.graph_count, e.op_count, [_nodes(g) for g in e.graphs]]
        facts.append([[op.__name__ for op in ops] for ops in e.ops_per_graph])
        facts.append(e.graphs[1](x * 3, x)[0].tolist())
        module = T._dynamo.explain(T.nn.Sequential(T.nn.Linear(3, 2)))(x)
        return [*facts, _nodes(module.graphs[0])]

    assert run(disttorch) == run(real_torch)


def _helper(u):
    r = u.sin()
    return r


@pytest.mark.parity
def test_explains_nodes_are_named_after_locals_as_pytorchs(real_torch):
    # a tuple's items were taken where first used, and every node was named after its target
    def run(T) -> list:
        def f(x):
            y = x.sin()
            a, b = x.chunk(2)  # (``b`` is never used: no node)
            first = x[0]
            t = x.max(dim=0)
            w = t[0] + t.indices + _helper(a)
            y = y * 2
            out = y + first + w
            return out

        e = T._dynamo.explain(f)(T.ones(2, 3))
        return [[(n.name, n.op) for n in g.graph.nodes] for g in e.graphs]

    assert run(disttorch) == run(real_torch)


@pytest.mark.parity
def test_a_compiled_node_lists_inputs_needing_no_grad_as_pytorchs(real_torch):
    # inputs needing no grad had no ``(None, 0)`` entry
    def run(T) -> list:
        def inputs(out) -> list:
            return [type(n).__name__ if n is not None else None for n, _ in out.grad_fn.next_functions]

        a, b = T.ones(3, requires_grad=True), T.ones(3)
        lin = T.nn.Linear(3, 3)
        lin.bias.requires_grad_(False)
        seen = [inputs(T.compile(lambda x, y, z: x * 2 + y + z, backend="aot_eager")(a, b, a * 1))]
        seen.append(inputs(T.compile(lin, backend="aot_eager")(a)))
        seen.append(inputs(T.compile(lambda x, y: y * 2 + x, backend="aot_eager")(b, a)))
        seen.append(inputs(T.compile(lambda x, y: b.sin() + x * y.sum(), backend="aot_eager")(b, a)))
        seen.append(inputs(T.compile(lambda x, y: (x + 1) * y.shape[0], backend="aot_eager")(a, b)))
        # a module's buffers it uses (BatchNorm's running statistics and count, where they were
        # missing), in the order PyTorch's call passes them
        net = T.nn.Sequential(T.nn.Linear(3, 3), T.nn.BatchNorm1d(3), T.nn.ReLU())
        seen.append(inputs(T.compile(net, backend="aot_eager")(T.ones(4, 3))))
        net.eval()
        return seen + [inputs(T.compile(net, backend="aot_eager")(T.ones(4, 3)))]

    assert run(disttorch) == run(real_torch)


@pytest.mark.parity
def test_compiles_are_counted_and_dynamo_run_reuses_them_as_pytorchs(real_torch):
    # counters counted nothing, run(fn) always ran fn eagerly
    def run(T) -> list:
        counters = T._dynamo.utils.counters
        counters.clear()

        def f(x):
            return (x * 2).sin(), T.compiler.is_compiling()

        only_run = T._dynamo.run(f)
        x = T.ones(2, 3, requires_grad=True)
        facts = [only_run(x)[1]]
        compiled = T.compile(f, backend="aot_eager")
        for shape in [(2, 3), (2, 3), (3, 3), (4, 3), (1, 3), (5, 5)]:
            compiled(T.ones(shape))
            facts.append({k: dict(v) for k, v in counters.items()})
        facts += [only_run(T.ones(6, 3))[1], only_run(x)[1], only_run(x)[0].grad_fn.name()]
        T._dynamo.reset()
        facts.append((only_run(T.ones(6, 3))[1], dict(counters["stats"])))
        compiled(x)
        with T.no_grad():
            compiled(x)
        return [*facts, {k: dict(v) for k, v in counters.items()}]

    assert run(disttorch) == run(real_torch)


@pytest.mark.parity
def test_inputs_other_than_tensors_are_guarded_as_pytorchs(real_torch):
    # a bool, string or number input, and a list given for a tuple, reused the first graph;
    # a compile that captured nothing counted a graph, and its frame was compiled again
    def run(T) -> list:
        counters, x = T._dynamo.utils.counters, T.ones(3)
        counters.clear()

        def f(x, flag, n, mode, ts):
            return (x * n if flag else x - n) + sum(ts) if mode == "a" else x

        compiled = T.compile(f, backend="eager")
        for args in [(True, 2, "a", [x]), (False, 3, "a", [x]), (False, 4, "a", [x]), (False, 4, "a", (x,))]:
            compiled(x, *args)  # (a bool changed; a number changed: dynamic from then on; a tuple)
        compiled(ts=[x], x=x, n=4, mode="a", flag=False)  # (keywords: the same locals)
        compiled(x, True, 4, "b", [x])  # nothing captured: the frame is skipped from then on
        compiled(x, True, 4, "a", [x, x])
        return [dict(counters["stats"]), dict(counters["frames"])]

    assert run(disttorch) == run(real_torch)


@pytest.mark.parity
def test_function_and_object_inputs_are_guarded_as_pytorchs(real_torch):
    # a second call with a function, class or other object input failed (IndexError in the
    # graph lookup); a function or class is guarded by identity, another object by its type
    def run(T) -> list:
        counters = T._dynamo.utils.counters
        counters.clear()

        def double(x):
            return T.sin(x) * 2

        def halve(x):
            return T.cos(x) / 2

        class Scale:
            pass

        def f(x, act, kind, extra):
            y = act(x)
            return y + 1 if isinstance(extra, kind) else y - 1

        compiled = T.compile(f, backend="eager")
        outs = []
        for act, kind, extra in [
            (double, Scale, Scale()),
            (double, Scale, Scale()),
            (halve, Scale, Scale()),
            (halve, object, Scale()),
            (double, Scale, object()),
            (halve, Scale, Scale()),
        ]:
            outs.append(compiled(T.ones(2), act, kind, extra).tolist())
        return [outs, dict(counters["stats"]), dict(counters["frames"])]

    assert run(disttorch) == run(real_torch)


@pytest.mark.parity
def test_config_settings_hold_per_thread_as_pytorchs(real_torch):
    # a patch or an assignment was the process's
    def run(T) -> list:
        config = T._dynamo.config

        def elsewhere(read):
            seen = []
            thread = threading.Thread(target=lambda: seen.append(read()))
            thread.start()
            thread.join()
            return seen[0]

        patch = config.patch(suppress_errors=True)

        def patched():
            with patch:
                return config.suppress_errors, config.get_config_copy()["suppress_errors"]

        with patch:
            facts = [config.suppress_errors, elsewhere(lambda: config.suppress_errors), elsewhere(patched)]
        config.cache_size_limit = 3
        facts += [config.suppress_errors, config.recompile_limit, elsewhere(lambda: config.recompile_limit)]
        elsewhere(lambda: setattr(config, "verbose", True))
        facts.append(config.verbose)
        config.recompile_limit = 8
        return facts

    assert run(disttorch) == run(real_torch)


@pytest.mark.parity
def test_compiled_outputs_under_no_grad_are_views_as_pytorchs(real_torch):
    # checked, not changed: PyTorch's outputs are views there too
    def run(T) -> list:
        def f(x):
            w = x * 2
            return w, w.view(2, 2), w[1:], x, x[1:], (x * 3)[::2]

        x = T.arange(4.0)
        with T.no_grad():
            outs = T.compile(f, backend="aot_eager")(x)
            facts = [[o._is_view() for o in outs], [o._base is outs[0] for o in outs], outs[3] is x]
            outs[0].add_(1)
        return [*facts, outs[4]._base is x, outs[1].tolist(), outs[2].tolist(), [o._version for o in outs]]

    assert run(disttorch) == run(real_torch)
