"""Recompiles as PyTorch counts them under ``torch.compile(dynamic=True/False)``,
``torch._dynamo.mark_dynamic``/``mark_static`` and ``config.recompile_limit`` (past which a
function runs eagerly, after PyTorch's logged warning)."""

from __future__ import annotations

import logging

import disttorch


def _counts(T, compiled, calls) -> tuple:
    counters = T._dynamo.utils.counters
    T._dynamo.reset()
    counters.clear()
    for call in calls:
        call(compiled)
    return counters["frames"]["total"], counters["stats"]["unique_graphs"]


# PyTorch 2.13's (its compiles take about 10 s here)
PYTORCH_COUNTS = [(2, 2), (2, 2), (1, 1), (1, 1), (3, 3), (3, 3), (2, 2), (1, 1), (2, 2), (3, 3), (3, 3)]


def test_dynamic_and_marked_dims_recompile_as_pytorchs():
    # dynamic= and the marks changed nothing: automatic dynamic shapes everywhere
    def run(T) -> list:
        def f(x, k=2):
            return x * k + 1

        sizes = [lambda g, n=n: g(T.ones(n)) for n in (3, 4, 5)]
        numbers = [lambda g, k=k: g(T.ones(3), k) for k in (2, 3, 4)]

        def marked(mark, n, dim=0):
            x = T.ones(n, 2)
            mark(x, dim)
            return x

        facts = []
        for dynamic in (None, True, False):
            g = T.compile(f, backend="eager", dynamic=dynamic)
            facts += [_counts(T, g, sizes), _counts(T, g, numbers)]
        g = T.compile(f, backend="eager", dynamic=True)
        facts.append(_counts(T, g, [lambda g, n=n: g(T.ones(n)) for n in (1, 2, 3)]))  # (1 specialises)
        g = T.compile(f, backend="eager")
        facts.append(_counts(T, g, [lambda g, n=n: g(marked(T._dynamo.mark_dynamic, n)) for n in (3, 4, 5)]))
        shapes = [lambda g: g(marked(T._dynamo.mark_dynamic, 3))]
        shapes += [lambda g, s=s: g(T.ones(*s)) for s in ((4, 2), (4, 3), (5, 5))]
        facts.append(_counts(T, g, shapes))  # (a marked dim stays dynamic; an unmarked one as ever)
        for dynamic in (None, True):
            g = T.compile(f, backend="eager", dynamic=dynamic)
            facts.append(
                _counts(T, g, [lambda g, n=n: g(marked(T._dynamo.mark_static, n)) for n in (3, 4, 5)])
            )
        x = T.ones(3)
        T._dynamo.mark_static(x)
        return [*facts, x._dynamo_static_indices, T._dynamo.mark_dynamic(x, 0), x._dynamo_dynamic_indices]

    assert run(disttorch) == [*PYTORCH_COUNTS, {0}, None, {0}]


def test_past_the_recompile_limit_a_function_runs_eagerly_after_a_warning_as_pytorchs(caplog):
    # the limit was only kept: every new size compiled again
    def run(T) -> list:
        def f(x):
            return x * 2, T.compiler.is_compiling()

        before = T._dynamo.config.recompile_limit
        T._dynamo.config.recompile_limit = 2
        try:
            caplog.clear()
            with caplog.at_level(logging.WARNING):
                g = T.compile(f, backend="eager", dynamic=False)
                compiling = []
                counts = _counts(
                    T, g, [lambda g, n=n: compiling.append(g(T.ones(n))[1]) for n in (3, 4, 5, 6, 3)]
                )
        finally:
            T._dynamo.config.recompile_limit = before
        warned = [
            r.getMessage().splitlines()[:2] for r in caplog.records if "recompile_limit" in r.getMessage()
        ]
        return [counts, compiling, warned, f.__code__.co_firstlineno]

    counts, compiling, warned, line = run(disttorch)
    assert counts == (3, 2)  # (PyTorch 2.13's: the third size's attempt counts as a frame)
    assert compiling == [True, True, False, False, True]  # (the cached graph still runs)
    assert warned == [
        ["torch._dynamo hit config.recompile_limit (2)", f"   function: 'f' ({__file__}:{line})"]
    ]
